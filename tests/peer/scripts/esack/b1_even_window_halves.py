"""ESACK rule B1 (seed 002, "Description of Enhanced Selective
Acknowledgements"): "the actions in the next successive window will be
taken, if one of the above cases is repeated": B1, "the same conditions
... as in A1 ... but by setting the cwnd to 50% of its current value";
the actions "will be repeated alternatively in all windows with losses".
ssthresh stays Linux's infinite one, so cwnd is always below it: the
first loss (odd, A1) keeps cwnd 20, the second (even, B1) halves it,
the third (odd, A1) keeps it.  Then three round trips pass without a
loss, as the seconds between the losses of the seed's Fig. 1: the fourth
loss is still the next window with losses (even, B1) and halves cwnd."""


from esack_peer import (MODULES, SYSCTL,  # noqa: F401
                        ack_windows, fast_loss, start)


def run(t):
    c = start(t, 20)
    fast_loss(t, c, "A1")
    cwnd, after = fast_loss(t, c, "B1")
    t.check(cwnd >= 20 and after.snd_ssthresh == cwnd // 2,
            "B1 halves cwnd %d" % cwnd)
    fast_loss(t, c, "A1")
    ack_windows(t, c, 3)
    cwnd, after = fast_loss(t, c, "B1")
    t.check(after.snd_ssthresh == cwnd // 2,
            "three round trips later: B1 halves cwnd %d" % cwnd)
