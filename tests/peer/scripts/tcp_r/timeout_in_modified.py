"""A timeout inside TCP-R's modified fast recovery gets the standard
response.  Seed 000 §2.2.1 bypasses "the procedure of reducing the
ssthresh and the cwnd in the fast recovery procedure" for a segment it
retransmits "only once in a RTT"; when that retransmission is lost too and
the retransmission timer fires, the "not congestion" verdict is withdrawn:
ssthresh becomes half the cwnd before the recovery, as after a standard
recovery (tcp_enter_loss() asks no new ssthresh inside Recovery).  Under
classic dupthresh and under RACK."""

import rflow

MODULES = rflow.MODULES
SYSCTL = rflow.SYSCTL
PARAMS = rflow.PARAMS


def timeout(t, rec):
    c = rflow.start(t, rec)
    before, hole, _, _ = rflow.recovery(t, c, [True, True, True])
    rflow.check_kept(t, c, before)
    c.drain(within=0.5)
    c.expect(seq=hole, end=hole + rflow.MSS, within=4)   # the timeout
    i = rflow.check_halved(t, c, before, "timeout", "alpha")
    t.check(i.ca_state == t.LOSS, "timeout: Loss")


def run(t):
    for rec in (0, 1):
        timeout(t, rec)
