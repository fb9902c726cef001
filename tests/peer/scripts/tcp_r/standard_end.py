"""A standard recovery ends at ssthresh.  With cong_control set, the
stack leaves cwnd where the reduction put it when a recovery ends
(tcp_end_cwnd_reduction() returns early), so r sets it to ssthresh itself,
as Reno's recovery ends (RFC 6582 §3.2 step 6, RFC 6937).  Here one
unmarked dupACK makes the recovery standard, and the next ACK covers the
whole flight before the recovery: PRR had no ACK to bring cwnd down, so
cwnd is still the flight when the recovery ends, about twice ssthresh.
After that ACK cwnd is ssthresh, or one more by congestion avoidance.
Under classic dupthresh and under RACK."""

import rflow

MODULES = rflow.MODULES
SYSCTL = rflow.SYSCTL
PARAMS = rflow.PARAMS


def ends_at_ssthresh(t, rec):
    c = rflow.start(t, rec)
    rflow.grow(t, c, 20, delay=0.1)
    before, _, end, _ = rflow.recovery(t, c, [True, False, True])
    i = rflow.check_halved(t, c, before, "one unmarked dupACK")
    t.check(i.snd_cwnd > i.snd_ssthresh + 2,
            "in the reduction cwnd %d is still above ssthresh %d" %
            (i.snd_cwnd, i.snd_ssthresh))
    j = rflow.close_hole(t, c, end)
    t.check(j.ca_state == t.OPEN, "Recovery over")
    t.check(j.snd_ssthresh == i.snd_ssthresh, "ssthresh %d kept" %
            j.snd_ssthresh)
    t.check(j.snd_ssthresh <= j.snd_cwnd <= j.snd_ssthresh + 1,
            "cwnd %d is ssthresh %d when the recovery ends" %
            (j.snd_cwnd, j.snd_ssthresh))


def run(t):
    for rec in (0, 1):
        ends_at_ssthresh(t, rec)
