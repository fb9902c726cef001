"""An ACK with a bad TCP checksum says nothing: TCP discards it, and the
hook that reads the drop-negative bit (it runs before TCP checks the sum)
must not count it either.  Marked dupACKs for a hole and marked ACKs for
everything sent (RN_BOGUS_MAX of which make the sender distrust the peer),
all with a bad checksum, leave the latch, the counters and the sender as
they were (only acks_bad_csum counts them); the genuine marked train that
follows gets the dupthresh of seed 001 §IV-B2, retransmitted at exactly
the dupthresh-th dupACK."""

import rnsnd

MODULES = rnsnd.MODULES
SYSCTL = {"net.ipv4.tcp_recovery": 0}
FAMILIES = (4, 6)
BOGUS_MAX = 3                       # RN_BOGUS_MAX


def run(t):
    c = rnsnd.start(t, initcwnd=10)
    hole = rnsnd.next_hole(t, c)
    before, cc = rnsnd.counters(), c.cc_info()
    for k in range(1, 4):
        rnsnd.bad_ack(c, hole, sack=[(hole + rnsnd.MSS,
                                      hole + rnsnd.MSS * (k + 1))])
    for _ in range(BOGUS_MAX):
        rnsnd.bad_ack(c, c.data_high)
    sent = [s for s in c.drain(within=0.3) if s.payload]
    t.check(not sent, "nothing sent for the corrupt ACKs")
    after, cc2, i = rnsnd.counters(), c.cc_info(), c.info()
    d = {k: after[k] - before.get(k, 0) for k in after}
    t.check(d.get("acks_bad_csum") == 3 + BOGUS_MAX,
            "each corrupt ACK counted in acks_bad_csum (%s)" %
            d.get("acks_bad_csum"))
    t.check(d["acks_read"] == 0 and d["acks_dn"] == 0 and
            d["acks_hole"] == 0 and d["peers_distrusted"] == 0,
            "no corrupt ACK latched: %s" % {k: v for k, v in d.items() if v})
    t.check(cc2["ab_tot"] == cc["ab_tot"] and cc2["alpha"] == cc["alpha"],
            "latch and dupthresh unchanged (%s -> %s)" % (cc, cc2))
    t.check(i.sacked == 0 and i.ca_state == t.OPEN,
            "TCP discarded them too: nothing SACKed, state Open")
    # The peer is still believed: a genuine marked train waits.
    want, _ = rnsnd.open_train(t, c)
    k, _ = rnsnd.dupacks(t, c, 2, want)
    t.check(k == want, "the hole retransmitted at dupACK %d = dupthresh" %
            want)
    rnsnd.finish(t, c)
