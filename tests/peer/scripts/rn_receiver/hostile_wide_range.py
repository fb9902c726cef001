"""The RN-TCP receiver bounds what a peer's option makes it store (seed
001 §IV, with the hosts' rule that every value from a packet is bounded):
a trusted EPDN option whose dropped range is about 2^31 bytes wide
(P:max - P:min = 0x7fffffff), wherever it lies, is no proof and leaves
the lists alone: every duplicate ACK still names the first hole, with the
right SACK blocks and no drop-negative bit, the kernel does not crash,
and the receiver classifies the next trusted gap as before (§IV-A)."""


from rnpeer import MODULES, SYSCTL, TRUSTED, TTL, open_conn, deliver, send, seq, acked, counters  # noqa: E402,E501,F401
from packet import EPDN_HOST

WIDE = 0x7fffffff
# Where P:min lies, from the first missing byte: at it, below it, just
# under and just over 2^31 above it.
AT = (0, -100, 0x7fffff9c, 0x80000064)


def run(t):
    c = open_conn(t)
    deliver(c, 1, TRUSTED)
    hole = c.p_abs(seq(2))
    sacked = []
    for i, off in enumerate(AT):
        n = 3 + 2 * i                   # 3, 5, 7, 9: four SACK blocks
        lo = (hole + off) & 0xffffffff
        send(c, n, dict(ttl=TTL, flags=EPDN_HOST, raw=True, min=lo,
                        max=(lo + WIDE) & 0xffffffff))
        sacked = [(seq(n), seq(n + 1))] + sacked
        c.expect(ack=seq(2), sack=sacked[:3], dn=False, flags="A",
                 within=1.5)
    for n in (2, 4, 6, 8):              # fill the holes
        send(c, n)
        acked(c, n + 2, False)
    send(c, 11, TRUSTED)                # proven again: 10 is reordered
    acked(c, 10, True)
    send(c, 10)
    acked(c, 12, False)
    t.check(counters()["opt_wide_range"] == len(AT),
            "each range counted as too wide (opt_wide_range %d)" % len(AT))
