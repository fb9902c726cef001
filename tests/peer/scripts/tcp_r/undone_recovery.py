"""A modified fast recovery that the stack undoes gives back the ssthresh
from before the loss, and keeps cwnd.  The timestamp echoed on the ACK
for the hole shows that its first transmission arrived (the segment was
reordered, not lost), so Linux undoes the recovery (tcp_try_undo_partial(),
TCPPartialUndo): it asks undo_cwnd(), which leaves a modified recovery's
cwnd as it is, and restores the ssthresh from before the recovery.  The
recovery set ssthresh to the window (slow start ends at a recovery); an
undone one was no congestion event, so ssthresh must then be the one from
before the loss, or every undone recovery would end slow start.  Under
classic dupthresh and under RACK."""

import rflow

MODULES = rflow.MODULES
SYSCTL = rflow.SYSCTL
PARAMS = rflow.PARAMS
FAMILIES = (4, 6)


def undone(t, rec):
    c = rflow.start(t, rec)
    old = c.ts_recent               # the hole's first transmission's TSval
    before, hole, end, _ = rflow.recovery(t, c, [True, True, True])
    held = rflow.check_kept(t, c, before)
    t.check(end > hole + 4 * rflow.MSS, "an ACK to hole + 4 is partial")
    t.check(held.snd_ssthresh < before.snd_ssthresh,
            "in the recovery ssthresh is the window (%d)" %
            held.snd_ssthresh)
    # The hole arrives late: one cumulative ACK up to the data the
    # dupACKs SACKed, below what was sent before the retransmission.
    c.ack(hole + 4 * rflow.MSS, tsecr=old)
    c.drain(within=0.3)
    i = c.info()
    t.check(i.ca_state != t.RECOVERY, "the recovery was undone")
    t.check(i.snd_ssthresh == before.snd_ssthresh,
            "ssthresh given back: %d" % before.snd_ssthresh)
    t.check(i.snd_cwnd >= held.snd_ssthresh, "cwnd kept (%d)" % i.snd_cwnd)


def run(t):
    for rec in (0, 1):
        undone(t, rec)
