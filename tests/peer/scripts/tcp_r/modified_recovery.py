"""TCP-R's modified fast recovery (seed 000 §2.2.1): "If all the three
duplicate ACKs received have their drop-negative bit set and the ECE bit
is set to zero ... the sender ... retransmits the packet immediately.  The
procedure of reducing the ssthresh and the cwnd in the fast recovery
procedure are bypassed."  Three marked dupACKs and no ECE give exactly one
retransmission.  The window is not cut, and it goes on growing through the
recovery as Reno's grows outside one, but in congestion avoidance: slow
start ends at the first recovery, modified or not, and ssthresh is the
window when it began (here below the finite ssthresh a timeout left).
cwnd is that window, grown by exactly Reno's rule for what was delivered
(PRR would send one segment more than was delivered per ACK), on every
ACK of the recovery within max(ssthresh, inflight before the ACK) + what
the ACK delivered, and after it.  Under classic dupthresh and under
RACK."""

import rflow

MODULES = rflow.MODULES
SYSCTL = rflow.SYSCTL
PARAMS = rflow.PARAMS
FAMILIES = (4, 6)


def modified(t, rec):
    c = rflow.start(t, rec, initcwnd=40, write=2000)
    rflow.timeout_first(t, c)
    c.write(400000)
    rflow.grow(t, c, 6)
    before = c.info()
    t.check(before.snd_ssthresh > before.snd_cwnd + 2,
            "slow start below a finite ssthresh (%d < %d)" % (
                before.snd_cwnd, before.snd_ssthresh))
    _, hole, end, sent = rflow.recovery(t, c, [True, True, True])
    rflow.check_kept(t, c, before)
    t.check(c.info().snd_ssthresh < before.snd_ssthresh,
            "slow start over: ssthresh %d is the window" % before.snd_cwnd)
    i, more = rflow.bounded_ack(t, c, hole, "the rest SACKed",
                                sack=[(hole + rflow.MSS, end)], dn=True)
    edge = end
    if rec == 0:
        # What that sent arrives too: more than a window delivered.  (With
        # RACK the retransmission would be found lost, lost_again.py.)
        edge = c.snd_nxt
        i, again = rflow.bounded_ack(t, c, hole, "what it sent SACKed",
                                     sack=[(hole + rflow.MSS, edge)],
                                     dn=True)
        more += again
        t.check(i.delivered - before.delivered - 2 >= before.snd_cwnd,
                "a window delivered in the recovery")
    t.check(rflow.retransmissions(c, more, hole) == 0,
            "no second retransmission")
    # Delivered in the recovery: the third dupACK's segment and what the
    # last dupACKs SACKed, in congestion avoidance from the window.
    grown = rflow.reno_grow(before.snd_cwnd, before.snd_cwnd,
                            i.delivered - before.delivered - 2)
    t.check(i.snd_ssthresh == before.snd_cwnd,
            "ssthresh stays the window when the recovery began (%d)" %
            before.snd_cwnd)
    t.check(i.snd_cwnd == grown,
            "the window grew in the recovery as Reno's in avoidance, and "
            "cwnd is that window, not PRR's: %d -> %d" %
            (before.snd_cwnd, grown))
    i = rflow.close_hole(t, c, edge)
    t.check(i.ca_state == t.OPEN, "Recovery over")
    t.check(i.snd_ssthresh == before.snd_cwnd,
            "ssthresh still the window (%d): no slow start" %
            before.snd_cwnd)
    t.check(grown <= i.snd_cwnd <= grown + 1,
            "cwnd %d, +1 at most from this ACK, no jump" % grown)
    t.check(i.total_retrans == before.total_retrans + 1,
            "one retransmission in the recovery")


def run(t):
    for rec in (0, 1):
        modified(t, rec)
