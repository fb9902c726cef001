"""After a timeout (seed 001 §IV-B4) kval is 0 and dupthresh 3: marked
dupACKs are treated as SACK TCP treats any, and the hole is retransmitted
at the third, until the first D-SACK; after it the dupthresh rule is back
(max(4, swnd + swnd * kval); that D-SACK also shows the fast retransmit
at the third was false, so kval has doubled too)."""

import rnsnd

MODULES = rnsnd.MODULES
SYSCTL = {"net.ipv4.tcp_recovery": 0, "net.ipv4.tcp_frto": 0}


def run(t):
    c = rnsnd.start(t, initcwnd=10, rto_min=1.5)
    hole = rnsnd.next_hole(t, c)
    rnsnd.open_train(t, c)
    c.expect(seq=hole, end=hole + rnsnd.MSS, within=6)  # the timeout
    t.check(c.info().ca_state == t.LOSS, "a timeout: Loss")
    t.check(c.cc_info()["ab_ecn"] == 0, "kval 0 after the timeout")
    hole, k = rnsnd.train_after_timeout(t, c)
    t.check(k == 3, "marked dupACKs: retransmitted at the third")
    cc = c.cc_info()
    t.check(cc["ab_ecn"] == 0, "kval still 0")

    c.ack(c.data_high, dsack=(hole, hole + rnsnd.MSS))   # first D-SACK
    c.drain()
    t.check(rnsnd.counters()["fallbacks_ended"] == 1, "the fallback ended")
    kval = c.cc_info()["ab_ecn"]
    rnsnd.next_hole(t, c)
    rnsnd.open_train(t, c, kval)               # the rule is back
    k, _ = rnsnd.dupacks(t, c, 2, 4)
    t.check(k is None, "no retransmission at the third or fourth dupACK")
