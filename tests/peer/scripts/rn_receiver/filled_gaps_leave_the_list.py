"""The RN-TCP receiver's reorder list is bounded (64 ranges) and holds the
holes that are open, not every hole a flow ever had (seed 001 §IV): while
packet 2 stays missing, 70 more gaps open and are filled one after the
other.  Each filled gap leaves the list when TCP's ACK shows it (its SACK
block), so the list never overflows, and when packet 2 comes the ACK
names the newest gap, still reordered: the drop-negative bit (§IV-A).
Kept until the in-order point passed them, the filled gaps would fill
the list, and the newest gap would be forgotten (no bit)."""


from rnpeer import MODULES, SYSCTL, TRUSTED, open_conn, deliver, send, acked, counters  # noqa: E402,E501,F401

GAPS = 70
# Room for 2 * GAPS packets above the hole: the receive buffer, and the
# window from the start (route attribute initrwnd, in segments).
SYSCTL = dict(SYSCTL, **{"net.ipv4.tcp_rmem": "4096 1048576 4194304"})


def run(t):
    t.route("initrwnd %d" % (2 * GAPS + 20))
    c = open_conn(t)
    deliver(c, 1, TRUSTED)
    for k in range(GAPS):
        gap = 3 + 2 * k
        send(c, gap + 1, TRUSTED)      # @gap is late (with 2, the first)
        acked(c, 2, True)
        send(c, gap, TRUSTED)          # and comes
        acked(c, 2, True)
    top = 3 + 2 * GAPS
    send(c, top + 1, TRUSTED)          # one more gap, @top
    acked(c, 2, True)
    send(c, 2, TRUSTED)
    acked(c, top, True)
    n = counters()
    t.check(n["range_overflows"] == 0,
            "the reorder list never overflowed (range_overflows %d)" %
            n["range_overflows"])
    t.check(n["acks_unclassified"] == 0,
            "no ACK named a hole left unclassified (acks_unclassified %d)"
            % n["acks_unclassified"])
