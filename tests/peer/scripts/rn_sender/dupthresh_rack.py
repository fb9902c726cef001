"""RN-TCP's dupthresh (seed 001 §IV-B2), with RACK: on a hole
whose dupACKs carry the drop-negative bit, the sender waits for
dupthresh = max(4, swnd + swnd * kval) dupACKs, with
kval = max(ceil(srtt / min_rtt) * c, kval) and c = 0.1, and retransmits
at exactly the dupthresh-th dupACK, not one before.  Checked at swnd 4,
11 and 21 (initcwnd, then slow-start growth) and at two srtt/min_rtt
ratios (the peer delays its ACKs), with RACK on
(net.ipv4.tcp_recovery = 1): the module holds RACK back until dupthresh
and then lets it mark the hole lost.  Needs a kernel where in_ack_event
follows tcp_clean_rtx_queue (tcp_rn's ack_order_ok)."""

import rnsnd

MODULES = rnsnd.MODULES
SYSCTL = {"net.ipv4.tcp_recovery": 1}


def run(t):
    t.check(rnsnd.param("ack_order_ok") == "Y", "RACK steering usable")
    held = rnsnd.counters()["rack_held_acks"]
    rnsnd.check_dupthresh_cases(t)
    t.check(rnsnd.counters()["rack_held_acks"] > held, "RACK was held")
    t.check(rnsnd.param("ack_order_ok") == "Y",
            "no ACK showed in_ack_event before tcp_clean_rtx_queue")
