"""kval doubles on a false fast retransmit (seed 001 §IV-B2): when a
D-SACK shows that the retransmission of a reordered hole was not needed
(the original arrived too), kval = 2 * max(ceil(srtt / min_rtt) * c, kval),
and the next reordered hole waits for the dupthresh of that kval (longer
than the first train's; played as far as the first train's dupthresh)."""

import rnsnd

MODULES = rnsnd.MODULES
SYSCTL = {"net.ipv4.tcp_recovery": 0}


def run(t):
    c = rnsnd.start(t, initcwnd=10)
    hole = rnsnd.next_hole(t, c)
    d1, kval1 = rnsnd.open_train(t, c)
    t.check(c.cc_info()["ce_state"] == 0, "no false fast retransmit yet")
    k, _ = rnsnd.dupacks(t, c, 2, d1)
    t.check(k == d1, "fast retransmit at dupthresh %d" % d1)

    # The original arrives after all: everything acknowledged, and a
    # D-SACK for the retransmitted copy.
    c.ack(c.data_high, dsack=(hole, hole + rnsnd.MSS))
    c.drain()
    i, cc = c.info(), c.cc_info()
    kval2 = min(2 * rnsnd.kval_rule(i, kval1), 64000)
    t.check(cc["ce_state"] == 1, "one false fast retransmit counted")
    t.check(cc["ab_ecn"] == kval2, "kval %d = 2 * max(ceil(%d/%d) * 0.1, %d)"
            % (kval2, i.rtt, i.min_rtt, kval1))

    rnsnd.next_hole(t, c)
    want, _ = rnsnd.open_train(t, c, kval2)   # from the doubled kval
    t.check(want > d1, "a longer wait than the first train's %d" % d1)
    # The dupACK numbers the first train's dupthresh allowed: no
    # retransmission now (the full train can be too long to play).
    k, _ = rnsnd.dupacks(t, c, 2, min(want - 1, d1))
    t.check(k is None, "no retransmission up to dupACK %d" %
            min(want - 1, d1))
