"""ESACK rule A2 (seed 002, "Description of Enhanced Selective
Acknowledgements"): losses in an odd window with dupACK >= dupthresh and
cwnd >= ssthresh are retransmitted by SACK, then "the sender reduces the
current cwnd to 60% rather than 50% of its value" (first_factor 60).
The connection starts at cwnd 10 with ssthresh 10 (a route's ssthresh
through the metrics cache): the first loss (odd, cwnd = ssthresh, the
rule's boundary) leaves 6, not Reno's 5; the second (even: B1, below
ssthresh) halves; cwnd then grows back to ssthresh and the third loss
(odd again) is A2 again."""


from esack_peer import (MODULES, SYSCTL,  # noqa: F401
                        fast_loss, grow, start)


def run(t):
    c = start(t, 10, ssthresh=10)
    cwnd, after = fast_loss(t, c, "A2", ref=10)
    t.check(cwnd == 10 and after.snd_ssthresh == 6,
            "A2 at cwnd = ssthresh = 10 leaves 6 (60 %%, Reno: 5)")
    fast_loss(t, c, "B1", ref=10)
    grow(t, c, 10)
    fast_loss(t, c, "A2", ref=10)
