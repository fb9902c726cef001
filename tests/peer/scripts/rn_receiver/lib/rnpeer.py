# SPDX-License-Identifier: GPL-2.0
"""Shared steps of the RN-TCP receiver scripts (seed 001 §IV, §IV-A).

The kernel is the receiver, with tcp_rn/rn_host.ko and net.rn.receiver=1;
the peer sends numbered packets as the seed does.  Packet n (n >= 1) is
the MSS bytes from relative sequence number 1 + (n - 1) * MSS, so the
seed's "P:n = 6" is packet 6.  An ACK "names" packet n when its ACK number
is the first byte of packet n: §IV-A marks it (the drop-negative bit) if
and only if packet n is in the reorder list.
"""

from packet import EPDN_EMPTY, EPDN_HOST

MSS = 1000
MODULES = ["rn_host"]
# Every ACK the TIME-WAIT socket owes is sent (no rate limit).
SYSCTL = {"net.rn.receiver": 1, "net.ipv4.tcp_invalid_ratelimit": 0}
TTL = 64
# A trusted option with no drop (§III-D): EPDN-TTL = TTL, HOST set.
TRUSTED = dict(ttl=TTL, flags=EPDN_EMPTY | EPDN_HOST)


def seq(n):
    """The first byte of packet @n."""
    return 1 + (n - 1) * MSS


def drops(lo, hi):
    """A trusted option naming packets @lo..@hi (P:min, P:max) dropped."""
    return dict(ttl=TTL, flags=EPDN_HOST, min=seq(lo), max=seq(hi + 1) - 1)


def counters():
    """/proc/net/rn_host of this script's namespace."""
    with open("/proc/net/rn_host") as f:
        return {k: int(v) for k, v in (ln.split() for ln in f)}


def open_conn(t, sport=None):
    t.listen()
    return t.accept(mss=MSS, sport=sport)


def send(c, n, epdn=None):
    c.data(seq(n), MSS, epdn=epdn)


def acked(c, n, dn, within=1.5):
    """The kernel's next segment is an ACK naming packet @n, bit @dn."""
    return c.expect(ack=seq(n), dn=dn, flags="A", within=within)


def deliver(c, upto, epdn=None):
    """Packets 1..@upto in order; their ACKs (delayed or not) end at
    @upto + 1, none of them marked (nothing is missing)."""
    for n in range(1, upto + 1):
        send(c, n, epdn)
    while True:
        seg = c.expect(flags="A", dn=False, within=1.5)
        if c.p_rel(seg.ack) == seq(upto + 1):
            return


def walk(c, holes, reorder, first, beyond=None, beyond_at=0):
    """Fill @holes lowest first, and check every ACK on the way.

    After the segment under test the ACK names the lowest hole; after
    each fill it names the next hole, or @first when none is left (the
    packet after Q).  Each ACK carries the bit exactly when the packet it
    names is in @reorder (§IV-A).  @beyond, if given, is a packet without
    an option sent before the fill of hole number @beyond_at, above
    everything: the gap below it is reordered except what the drop list
    holds (§IV, P:min and P:max NULL), which shows a dropped range above
    Q (the packets it names are then holes like the others)."""
    holes = sorted(holes)
    acked(c, holes[0], holes[0] in reorder)
    for i, h in enumerate(holes):
        if beyond and i == beyond_at:
            send(c, beyond)
            acked(c, h, h in reorder)
        send(c, h)
        nxt = holes[i + 1] if i + 1 < len(holes) else first
        acked(c, nxt, nxt in reorder)


def case(t, q, p, lo, hi, holes, reorder, proven_q=False, beyond=None,
         beyond_at=0):
    """One worked case of §IV: packets up to Q:n = @q have arrived (in
    order for P:n > Q:n; with a hole ending at Q for P:n < Q:n, whose
    packet @q carried a trusted option when @proven_q), then P:n = @p
    arrives with P:min = @lo, P:max = @hi.  @holes are the packets still
    missing, @reorder those the reorder list must hold; walk() fills
    them, and sends @beyond on the way."""
    c = open_conn(t)
    top = q if p > q else min(holes + [p]) - 1
    deliver(c, top)
    if p < q:
        send(c, q, TRUSTED if proven_q else None)
        acked(c, top + 1, proven_q)
    send(c, p, drops(lo, hi))
    walk(c, holes, reorder, (beyond or max(holes + [p, q])) + 1, beyond,
         beyond_at)
    return c
