"""TCP-R retransmits after three duplicate ACKs (seed 000 §2.2.1: "If all
the three duplicate ACKs received have their drop-negative bit set ...
the sender ... retransmits the packet"; §2.2: "after receiving three
duplicate ACKs with the drop-negative bit set").  Two marked dupACKs,
spaced wider than RACK's reordering window (min_rtt/4, a few ms here):
no retransmission; the third: one, on the modified path.  Under classic
dupthresh and under RACK, whose timer r holds back meanwhile."""

import rflow

MODULES = rflow.MODULES
SYSCTL = {"net.ipv4.tcp_frto": 0}
PARAMS = rflow.PARAMS


def three(t, rec):
    c = rflow.start(t, rec)
    before = c.info()
    hole, mss = c.snd_una, rflow.MSS
    for k in (1, 2):
        c.ack(hole, sack=[(hole + mss, hole + mss * (k + 1))], dn=True)
        sent = c.drain(within=0.4)
        t.check(rflow.retransmissions(c, sent, hole) == 0,
                "%d marked dupACK(s): no retransmission" % k)
    c.ack(hole, sack=[(hole + mss, hole + 4 * mss)], dn=True)
    sent = c.drain(within=0.4)
    t.check(rflow.retransmissions(c, sent, hole) == 1,
            "the third: one retransmission")
    t.check(c.info().ca_state == t.RECOVERY, "in Recovery")
    rflow.check_kept(t, c, before)
    t.check(c.cc_info()["ce_state"] == 1, "counted on the modified path")


def run(t):
    for rec in (0, 1):
        three(t, rec)
