"""ESACK rule A1 (seed 002, "Description of Enhanced Selective
Acknowledgements"): losses in an odd window with dupACK >= dupthresh and
cwnd < ssthresh are retransmitted by SACK, and "after retransmission the
sender continues with the same cwnd size while maintaining the increment
rate of one segment per RTT".  The connection keeps Linux's infinite
ssthresh, so cwnd is always below it.  Windows with losses alternate:
the first loss (odd) keeps cwnd 20, then one window of ACKs adds one
segment (not a window: no slow start); the second (even, B1) halves; the
third (odd again) keeps cwnd once more."""


from esack_peer import (MODULES, SYSCTL,  # noqa: F401
                        ack_one, fast_loss, start)


def run(t):
    c = start(t, 20)
    cwnd, after = fast_loss(t, c, "A1")
    t.check(cwnd == 20, "the first loss came at cwnd 20")
    w = after.snd_cwnd
    for _ in range(w):                  # one RTT: a window of ACKs
        ack_one(c)
    t.check(c.info().snd_cwnd == w + 1,
            "one window of ACKs after A1: cwnd %d -> %d" % (w, w + 1))
    fast_loss(t, c, "B1")
    fast_loss(t, c, "A1")
