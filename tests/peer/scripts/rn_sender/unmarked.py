"""Unmarked dupACKs (seed 001 §IV-B3): a hole whose dupACKs do not carry
the drop-negative bit is believed dropped, and the sender retransmits at
the third dupACK as SACK TCP does: with classic loss detection at exactly
the third, with RACK no later than the third (RACK's own reordering timer
may come first, as it does for any sender)."""

import rnsnd

MODULES = rnsnd.MODULES
FAMILIES = (4, 6)


def train(t, rack):
    t.sysctl("net.ipv4.tcp_recovery", 1 if rack else 0)
    c = rnsnd.start(t, initcwnd=10)
    rnsnd.next_hole(t, c)
    k, _ = rnsnd.dupacks(t, c, 1, 3, dn=False)
    if rack:
        t.check(k is not None and k <= 3,
                "RACK: retransmitted by the third unmarked dupACK")
    else:
        t.check(k == 3, "retransmitted at exactly the third unmarked dupACK")
    t.check(c.cc_info()["alpha"] == 3, "dupthresh 3 in force")
    rnsnd.finish(t, c)


def run(t):
    train(t, rack=False)
    train(t, rack=True)
