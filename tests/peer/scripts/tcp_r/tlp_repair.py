"""A tail loss probe's repair halves under TCP-R too.  Seed 000 §2.2.1
bypasses the reduction only when "all the three duplicate ACKs received
have their drop-negative bit set"; a probe goes out only in Open (or CWR,
where an ECE is recent), when no dupACK is outstanding, so the receiver
has marked nothing for the hole it repairs: the repair is the seed's
drop path.  A bit on an ACK that is not a dupACK for the hole (here the
probe's) changes nothing.  Under classic dupthresh and under RACK."""

import rflow

MODULES = rflow.MODULES
SYSCTL = dict(rflow.SYSCTL, **{"net.ipv4.tcp_early_retrans": 3})
PARAMS = rflow.PARAMS


def tlp(t, rec):
    t.sysctl("net.ipv4.tcp_recovery", rec)
    c = t.connect(cc="r", mss=rflow.MSS, initcwnd=10)
    c.write(10 * rflow.MSS)
    c.expect_data(count=10)
    tail = 9 * rflow.MSS + 1
    c.expect(seq=tail, end=tail + rflow.MSS, within=2)   # the probe
    t.check(c.info().ca_state == t.OPEN, "a probe, not a timeout")
    c.ack(tail + rflow.MSS, dn=True)       # the probe repaired the tail
    c.write(10 * rflow.MSS)
    c.drain(within=0.3)
    before = c.info()
    t.check(before.ca_state == t.OPEN, "Open")
    c.ack(c.snd_nxt)                       # beyond the probe: it was a loss
    i = c.info()
    t.check(i.snd_ssthresh == rflow.halved(before.snd_cwnd),
            "TLP repair: ssthresh halved from cwnd %d" % before.snd_cwnd)


def run(t):
    for rec in (0, 1):
        tlp(t, rec)
