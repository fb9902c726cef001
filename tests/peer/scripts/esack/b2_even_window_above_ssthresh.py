"""ESACK rule B2 (seed 002, "Description of Enhanced Selective
Acknowledgements"): in the next successive window with losses, "if the
same conditions are repeated as in A2" (cwnd >= ssthresh), "similar
actions will be taken, but by setting the cwnd to 50% of the original
value of the ssthresh".  ssthresh is 10 (a route's ssthresh through the
metrics cache), cwnd starts at 20: the first loss (odd, A2) leaves 12;
the second (even, cwnd 12 >= 10) leaves 5 = half of ssthresh 10 (half
of cwnd would be 6); cwnd grows back past ssthresh, the third loss is
A2 again and the fourth, at cwnd 14, B2 again: 5 (half of cwnd: 7)."""


from esack_peer import (MODULES, SYSCTL,  # noqa: F401
                        counts, fast_loss, grow, start)


def run(t):
    c = start(t, 20, ssthresh=10)
    fast_loss(t, c, "A2", ref=10)
    cwnd, after = fast_loss(t, c, "B2", ref=10)
    t.check(after.snd_ssthresh == 5 and cwnd // 2 != 5,
            "B2 at cwnd %d: half the original ssthresh" % cwnd)
    grow(t, c, 10)
    fast_loss(t, c, "A2", ref=10)
    grow(t, c, 14)
    cwnd, after = fast_loss(t, c, "B2", ref=10)
    t.check(after.snd_ssthresh == 5 and cwnd // 2 != 5,
            "B2 at cwnd %d: half the original ssthresh" % cwnd)
    t.check(counts(c)["B2"] == 2, "two B2 events")
