"""ESACK rule A3 (seed 002, "Description of Enhanced Selective
Acknowledgements"): "if the RTO expires, regardless the status of the
other parameters" the sender retransmits from the left edge of the
window and falls back to "the basic slow start mechanism where the value
of the ssthresh is halved and the cwnd is set to one segment".  The
first loss of the connection is a timeout (the peer acknowledges
nothing): ssthresh 10 = half of cwnd 20, not A1's 20; cwnd 1.  It is an
odd window: the next loss (cwnd back at the new ssthresh 10) is even
(B2: half of ssthresh 10 = 5; A2 would leave 6), the one after odd
(A1: cwnd kept)."""


from esack_peer import (MODULES, SYSCTL,  # noqa: F401
                        fast_loss, start, timeout)


def run(t):
    c = start(t, 20)
    i = timeout(t, c, "A3")
    t.check(i.snd_ssthresh == 10, "A3: ssthresh 20 / 2 = 10")
    fast_loss(t, c, "B2", ref=10)
    fast_loss(t, c, "A1", ref=10)
