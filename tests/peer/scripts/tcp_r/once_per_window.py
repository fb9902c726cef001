"""One halving per window of data (RFC 6582 §3.2, RFC 6675 §5), whatever
the signal.  A modified fast recovery that an unmarked dupACK turns
standard halves once, with more sent since the recovery began (its window
was kept); the recovery ends when the data sent before it is
acknowledged, and a segment lost among what was sent after it, before the
halving, is the same congestion event: the recovery it begins keeps the
window (ssthresh is the cwnd before it), where the old module halved
again (on the GEO path 82 -> 41 -> 21 segments within two RTTs).  Once
snd_una has passed what was sent at the halving, the next loss halves
again.  Classic dupthresh."""

import rflow

MODULES = rflow.MODULES
SYSCTL = rflow.SYSCTL
PARAMS = rflow.PARAMS
MSS = rflow.MSS


def once(t):
    c = rflow.start(t, 0)
    before, hole, end, _ = rflow.recovery(t, c, [True, True, True])
    rflow.check_kept(t, c, before)
    rflow.sack_rest(t, c, hole, end)             # more sent, marked
    t.check(c.snd_nxt > end + 2 * MSS, "data sent beyond the recovery")
    edge = end + MSS
    grown = c.info()
    rflow.sack_rest(t, c, hole, edge, dn=False)   # first signal: halve
    cut_nxt = c.snd_nxt
    first = rflow.check_halved(t, c, before, "unmarked dupACK", "alpha",
                               grown)
    i = rflow.close_hole(t, c, edge)
    t.check(i.ca_state == t.OPEN, "the recovery is over")
    t.check(i.snd_ssthresh == first.snd_ssthresh, "ssthresh stays halved")
    t.check(c.snd_una < cut_nxt,
            "snd_una %d below what was sent at the halving (%d)" %
            (c.snd_una, cut_nxt))
    # Second signal in the same window: the segment at snd_una, sent after
    # the recovery began, is lost; three unmarked dupACKs.
    second, hole2, end2, _ = rflow.recovery(t, c, [False, False, False],
                                            wait=0.1)
    t.check(hole2 < cut_nxt, "the second loss is in the same window")
    i = c.info()
    t.check(i.snd_ssthresh == second.snd_cwnd,
            "no second halving: ssthresh %d is the window %d (halved: %d)"
            % (i.snd_ssthresh, second.snd_cwnd,
               rflow.halved(second.snd_cwnd)))
    rflow.sack_rest(t, c, hole2, end2, dn=False)
    rflow.close_hole(t, c, end2)
    # A window later: the next loss halves.
    rflow.ack_all(t, c)
    t.check(c.snd_una >= cut_nxt, "snd_una passed the halving's snd_nxt")
    third, _, _, _ = rflow.recovery(t, c, [False, False, False], wait=0.1)
    rflow.check_halved(t, c, third, "a loss a window later")


def run(t):
    once(t)
