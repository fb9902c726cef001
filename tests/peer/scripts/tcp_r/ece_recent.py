"""TCP-R takes the modified fast recovery only "in the absence of ECN
messages" (seed 000 §2.2): "If all the three duplicate ACKs received have
their drop-negative bit set and the ECE bit is set to zero (i.e no ECN
information has been received off lately)" (§2.2.1).  An ECE within
ece_rtts smoothed RTTs (here 64, as the peer's RTT samples are short
beside the script's pauses) before three marked dupACKs: the recovery is
standard and halves ssthresh.  Under classic dupthresh and under RACK."""

import rflow

MODULES = rflow.MODULES
SYSCTL = rflow.SYSCTL
PARAMS = {"tcp_r": dict(rflow.PARAMS["tcp_r"], ece_rtts=64)}


def ece_then_marked(t, rec):
    c = rflow.start(t, rec, ecn=True)
    rflow.ack_all(t, c, delay=0.1, ece=True)      # ECE: CWR, halve
    i = c.info()
    t.check(i.ca_state == t.CWR, "ECE in Open: CWR")
    rflow.ack_all(t, c)                          # CWR over
    t.check(c.info().ca_state == t.OPEN, "Open again, the ECE recent")
    before, _, _, _ = rflow.recovery(t, c, [True, True, True], wait=0.1)
    rflow.check_halved(t, c, before, "recent ECE", "ab_ecn")


def run(t):
    for rec in (0, 1):
        ece_then_marked(t, rec)
