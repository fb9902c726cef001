"""A timeout during fast recovery starts the timeout fallback too (seed
001 §IV-B4, "after a timeout"): kval 0 and dupthresh 3 for marked dupACKs
until the first D-SACK.  (The stack calls neither ssthresh() nor
CA_EVENT_LOSS on a timeout in Recovery: the module sees it as the change
to Loss.)"""

import rnsnd

MODULES = rnsnd.MODULES
SYSCTL = {"net.ipv4.tcp_recovery": 0, "net.ipv4.tcp_frto": 0}


def run(t):
    c = rnsnd.start(t, initcwnd=10, rto_min=1.5)
    rnsnd.next_hole(t, c)
    rnsnd.open_train(t, c)                      # a reordered hole ...
    rnsnd.finish(t, c)                          # ... that arrives
    hole = rnsnd.next_hole(t, c)
    k, _ = rnsnd.dupacks(t, c, 1, 3, dn=False)
    t.check(k == 3, "unmarked: fast retransmit at the third dupACK")
    t.check(c.info().ca_state == t.RECOVERY, "in Recovery")
    c.expect(seq=hole, end=hole + rnsnd.MSS, within=6)  # timeout in Recovery
    t.check(c.info().ca_state == t.LOSS, "the timeout: Loss")
    t.check(c.cc_info()["ab_ecn"] == 0, "kval 0 after the timeout")
    _, k = rnsnd.train_after_timeout(t, c)
    t.check(k == 3, "marked dupACKs after it: retransmitted at the third")
