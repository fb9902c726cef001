"""RN-TCP's dupthresh (seed 001 §IV-B2), classic loss detection: on a hole
whose dupACKs carry the drop-negative bit, the sender waits for
dupthresh = max(4, swnd + swnd * kval) dupACKs, with
kval = max(ceil(srtt / min_rtt) * c, kval) and c = 0.1, and retransmits
at exactly the dupthresh-th dupACK, not one before.  Checked at swnd 4,
11 and 21 (initcwnd, then slow-start growth) and at two srtt/min_rtt
ratios (the peer delays its ACKs), with net.ipv4.tcp_recovery = 0."""

import rnsnd

MODULES = rnsnd.MODULES
SYSCTL = {"net.ipv4.tcp_recovery": 0}


def run(t):
    rnsnd.check_dupthresh_cases(t)
