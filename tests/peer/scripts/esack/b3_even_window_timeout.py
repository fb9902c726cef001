"""ESACK rule B3 (seed 002, "Description of Enhanced Selective
Acknowledgements"): in the next successive window with losses, "if the
RTO expires, similar actions will be taken as in A3": the standard
timeout, ssthresh halved and cwnd one segment.  The first loss (odd,
cwnd 20 below Linux's infinite ssthresh) is A1: cwnd kept.  The second
is a timeout (the peer acknowledges nothing): B3, ssthresh = half the
cwnd (B1 would say the same, so the counters show it is no B1), cwnd 1.
The third loss, with cwnd back at ssthresh, is odd again: A2 (60 %),
not B2 (half of ssthresh)."""


from esack_peer import (MODULES, SYSCTL,  # noqa: F401
                        fast_loss, start, timeout)


def run(t):
    c = start(t, 20)
    fast_loss(t, c, "A1")
    i = timeout(t, c, "B3")
    fast_loss(t, c, "A2", ref=i.snd_ssthresh)
