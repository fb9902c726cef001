"""One congestion, one halving.  A modified fast recovery (seed 000
§2.2.1) keeps sending with its grown window after the recovery point;
when a dupACK without the drop-negative bit turns it standard, a loss
among the data sent meanwhile belongs to the same congestion.  The
halving covers it as a recovery begun then would (RFC 6582 §3.2, one
reduction per window): the hole's ACK no longer ends the recovery, the
next hole is repaired inside it, and ssthresh is not halved a second
time.  Under classic dupthresh and under RACK."""

import rflow

MODULES = rflow.MODULES
SYSCTL = rflow.SYSCTL
FAMILIES = (4, 6)
MSS = rflow.MSS


def one_reduction(t, rec):
    c = rflow.start(t, rec)
    before, hole, end, _ = rflow.recovery(t, c, [True, True, True])
    rflow.sack_rest(t, c, hole, end)
    grown = rflow.check_kept(t, c, before)
    mid = c.snd_nxt
    t.check(mid >= end + 6 * MSS,
            "the modified recovery sent past its recovery point (%d)" %
            ((mid - end) // MSS))
    # The first segment sent after the point is dropped by congestion:
    # the next ones arrive, their dupACKs without the bit turn the
    # recovery standard.
    c.ack(hole, sack=[(hole + MSS, end), (end + MSS, end + 2 * MSS)])
    c.drain(within=0.3)
    i = rflow.check_halved(t, c, before, "turned standard", "alpha", grown)
    # The hole's retransmission arrives, and the rest sent before the
    # halving: the ACK for the old point is partial.
    c.ack(end, sack=[(end + MSS, mid)])
    sent = c.drain(within=0.6)
    t.check(rflow.retransmissions(c, sent, end) == 1,
            "the next hole is retransmitted once")
    j = c.info()
    t.check(j.ca_state == t.RECOVERY, "the same recovery goes on")
    t.check(j.snd_ssthresh == i.snd_ssthresh,
            "ssthresh %d, not halved again" % i.snd_ssthresh)
    t.check(c.cc_info()["alpha"] == 1, "one recovery on the drop path")
    c.ack(mid)
    c.drain(within=0.3)
    t.check(c.info().ca_state == t.OPEN, "Open once all is acknowledged")


def run(t):
    for rec in (0, 1):
        one_reduction(t, rec)
