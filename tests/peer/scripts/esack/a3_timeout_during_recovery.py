"""ESACK rule A3 (seed 002, "Description of Enhanced Selective
Acknowledgements") when the RTO hits a fast recovery: "if the RTO
expires, regardless the status of the other parameters" the standard
timeout follows, ssthresh halved and cwnd one segment.  The first loss
(odd, cwnd 20 below Linux's infinite ssthresh) starts an A1 recovery
(ssthresh 20); the peer then acknowledges nothing and the timer fires
inside that recovery, where Linux calls no ssthresh() (tcp_enter_loss
with the recovery point unacknowledged).  The event becomes A3: ssthresh
10 = half of cwnd 20 at its start, cwnd 1, no A1 counted, still odd, so
the next loss is even (B2: half of the new ssthresh 10 = 5)."""


from esack_peer import (MODULES, SYSCTL,  # noqa: F401
                        counts, dupacks, fast_loss, outstanding, start)


def run(t):
    c = start(t, 20)
    una, _ = outstanding(c)
    dupacks(c, una)
    i = c.info()
    t.check(i.ca_state == t.RECOVERY and i.snd_ssthresh == 20,
            "A1: Recovery, ssthresh = cwnd 20")
    c.drain()
    c.expect(seq=una, within=4.0)           # the RTO, rto_min 1 s
    i = c.info()
    t.check(i.ca_state == t.LOSS and i.snd_cwnd == 1,
            "the RTO entered Loss, cwnd 1")
    t.check(i.snd_ssthresh == 10, "A3: ssthresh 20 / 2 = 10, not A1's 20")
    t.check(i.total_retrans == 2, "two retransmissions of the first segment")
    d = counts(c)
    t.check(d["A1"] == 0 and d["secwnd"] == 0,
            "the A1 became an A3 (not counted), SecWnd 0")
    c.drain()
    c.ack(c.snd_nxt)
    t.check(c.info().ca_state == t.OPEN, "Loss over")
    fast_loss(t, c, "B2", ref=10)
