"""TCP-R and ECN: the modified fast recovery "is executed only in the
absence of ECN messages" (seed 000 §2.2, §2.2.1), so an ECE always gets
the standard reduction, and CWR goes out only with a reduction (RFC 3168
§6.1.2).  A modified fast recovery (three marked dupACKs, no ECE) reduces
nothing, so no data segment carries CWR; an ECE during it turns it
standard, ssthresh is halved from the cwnd before the recovery, and the
next new data segment carries CWR.  Under classic dupthresh and under
RACK."""

import rflow

MODULES = rflow.MODULES
SYSCTL = rflow.SYSCTL
PARAMS = rflow.PARAMS


def no_cwr_without_reduction(t, rec):
    c = rflow.start(t, rec, ecn=True)
    before, hole, end, sent = rflow.recovery(t, c, [True, True, True])
    sent += rflow.sack_rest(t, c, hole, end)
    i = rflow.close_hole(t, c, end)
    t.check(i.snd_ssthresh == before.snd_cwnd and
            i.snd_cwnd >= before.snd_cwnd, "no reduction")
    rflow.ack_all(t, c)
    sent += c.drain(within=0.3)
    t.check(c.snd_nxt > end + rflow.MSS, "new data sent")
    t.check(not rflow.cwr_sent(sent), "no CWR without a reduction")


def ece_in_modified(t, rec):
    c = rflow.start(t, rec, ecn=True)
    before, hole, end, sent = rflow.recovery(t, c, [True, True, True])
    rflow.check_kept(t, c, before)
    t.check(not rflow.cwr_sent(sent), "no CWR yet")
    sent = rflow.sack_rest(t, c, hole, end, ece=True)
    rflow.check_halved(t, c, before, "ECE", "ab_ecn")
    rflow.close_hole(t, c, end)
    rflow.ack_all(t, c)
    sent += c.drain(within=0.3)
    t.check(len(rflow.cwr_sent(sent)) == 1, "one CWR after the ECE")


def run(t):
    for rec in (0, 1):
        no_cwr_without_reduction(t, rec)
        ece_in_modified(t, rec)
