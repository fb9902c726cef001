"""Slow start ends at the first recovery, modified or not.  A modified fast
recovery keeps the window and grows it as outside a recovery, but in
congestion avoidance: ssthresh becomes the window when the recovery
began, and stays so after it.  In slow start (ssthresh unbounded) the old
module went on doubling inside the recovery and gave the unbounded
ssthresh back after it (measured: 92 -> 227 -> 253 segments at a 1.23 s
RTT).  Here a cumulative ACK for the next flight after the recovery grows
cwnd by Reno's avoidance rule, not by what it delivered.  Under classic
dupthresh and under RACK."""

import rflow

MODULES = rflow.MODULES
SYSCTL = rflow.SYSCTL
PARAMS = rflow.PARAMS


def ss_exit(t, rec):
    c = rflow.start(t, rec)
    rflow.ack_all(t, c, delay=0.1)               # slow start: 10 -> 20
    before = c.info()
    t.check(before.snd_ssthresh > 1000 and before.snd_cwnd >= 16,
            "slow start, ssthresh unbounded, cwnd %d" % before.snd_cwnd)
    _, hole, end, _ = rflow.recovery(t, c, [True, True, True])
    rflow.check_kept(t, c, before)
    rflow.sack_rest(t, c, hole, end)
    i = c.info()
    t.check(i.snd_cwnd < before.snd_cwnd + 2,
            "no slow start in the recovery: cwnd %d" % i.snd_cwnd)
    i = rflow.close_hole(t, c, end)
    t.check(i.ca_state == t.OPEN, "Recovery over")
    t.check(i.snd_ssthresh == before.snd_cwnd,
            "ssthresh is the window %d after the recovery" %
            before.snd_cwnd)
    rflow.ack_all(t, c)
    j = c.info()
    acked = j.delivered - i.delivered
    t.check(acked >= i.snd_cwnd // 2, "%d segments delivered" % acked)
    t.check(j.snd_cwnd <= i.snd_cwnd + acked // i.snd_cwnd + 1,
            "congestion avoidance: cwnd %d -> %d for %d segments" %
            (i.snd_cwnd, j.snd_cwnd, acked))


def run(t):
    for rec in (0, 1):
        ss_exit(t, rec)
