"""Linux's receiver, as a check of the harness's passive side (RFC 2018,
RFC 5681 §4.2): an out-of-order segment is acknowledged at once with a
duplicate ACK whose first SACK block names it, and the segment that fills
the hole is acknowledged cumulatively."""

FAMILIES = (4, 6)


def run(t):
    t.listen()
    c = t.accept(mss=1000)
    c.data(1, 1000)
    c.expect(ack=1001, flags="A", within=1)
    c.data(2001, 1000)                       # 1001:2001 is missing
    c.expect(ack=1001, sack=[(2001, 3001)], flags="A", within=1)
    c.data(3001, 1000)
    c.expect(ack=1001, sack=[(2001, 4001)], flags="A", within=1)
    c.data(1001, 1000)                       # the hole is filled
    c.expect(ack=4001, sack=[], flags="A", within=1)
    t.check(len(c.read()) == 4000, "the application reads 4000 bytes")
