"""TCP-R halves for a drop (seed 000 §2.2.1): the modified fast recovery
needs "all the three duplicate ACKs" with the drop-negative bit set; a
dupACK without it means the hole may have been dropped by congestion, and
the sender "retransmits the lost packet after waiting for three duplicate
ACKs ... and reduces the cwnd by half" (§2.2).  One unmarked dupACK among
three: one retransmission and ssthresh halved.  The same dupACK arriving
during a modified recovery turns it standard: ssthresh is halved from the
cwnd before the recovery, and on that ACK cwnd stays within
max(ssthresh, inflight before it) + what it delivered.  Under classic
dupthresh and under RACK."""

import rflow

MODULES = rflow.MODULES
SYSCTL = rflow.SYSCTL
PARAMS = rflow.PARAMS
FAMILIES = (4, 6)


def one_unmarked(t, rec):
    c = rflow.start(t, rec)
    before, _, _, _ = rflow.recovery(t, c, [True, False, True])
    rflow.check_halved(t, c, before, "one unmarked dupACK", "alpha")


def unmarked_later(t, rec):
    c = rflow.start(t, rec)
    before, hole, end, _ = rflow.recovery(t, c, [True, True, True])
    rflow.check_kept(t, c, before)
    rflow.bounded_ack(t, c, hole, "a later unmarked dupACK",
                      sack=[(hole + rflow.MSS, end)], dn=False)
    i = rflow.check_halved(t, c, before, "a later unmarked dupACK", "alpha")
    t.check(i.ca_state == t.RECOVERY, "still in Recovery")


def run(t):
    for rec in (0, 1):
        one_unmarked(t, rec)
        unmarked_later(t, rec)
