"""With RACK, TCP-R takes its third duplicate ACK from RACK's trigger and
leaves tp->reordering to the stack.  Once the stack has seen reordering
(here a recovery undone because the hole's first transmission arrived
late), cwnd grows on data SACKed beyond a hole, as Linux grows any
sender's (tcp_may_raise_cwnd()): on a path that delays every other
segment, most data is SACKed before it is acknowledged, and growth on
cumulative ACKs alone all but stops.  Classic loss detection needs
tp->reordering at 3 for the third duplicate ACK, and keeps it there."""

import rflow

MODULES = rflow.MODULES
SYSCTL = rflow.SYSCTL
PARAMS = rflow.PARAMS
MSS = rflow.MSS


def undone(t, rec):
    """A modified recovery the stack undoes (undone_recovery.py);
    returns tcp_info after it, and the new head."""
    c = rflow.start(t, rec)
    old = c.ts_recent
    _, hole, _, _ = rflow.recovery(t, c, [True, True, True])
    c.ack(hole + 4 * MSS, tsecr=old)
    c.drain(within=0.3)
    i = c.info()
    t.check(i.ca_state != t.RECOVERY, "the recovery was undone")
    return c, i, hole + 4 * MSS


def sacked_growth(t):
    c, i, head = undone(t, 1)
    t.check(i.reordering > 3,
            "the stack's reordering estimate is kept (%d)" % i.reordering)
    t.check(i.snd_cwnd < i.snd_ssthresh, "slow start")
    # Two segments after the new head arrive, the head not yet: fewer
    # than three, no recovery.
    for k in (2, 3):
        c.ack(head, sack=[(head + MSS, head + k * MSS)], dn=True)
    c.drain(within=0.3)
    j = c.info()
    t.check(j.ca_state == t.DISORDER, "Disorder, no recovery")
    t.check(j.snd_cwnd == i.snd_cwnd + 2,
            "cwnd %d grew by the two SACKed segments" % i.snd_cwnd)


def classic_dupthresh(t):
    c, _, head = undone(t, 0)
    # The stack raised its estimate on the undoing ACK; r sets it back
    # at the next ACK, before loss detection.
    c.ack(head, sack=[(head + MSS, head + 2 * MSS)], dn=True)
    c.drain(within=0.3)
    t.check(c.info().reordering == 3, "classic: tp->reordering held at 3")


def run(t):
    sacked_growth(t)
    classic_dupthresh(t)
