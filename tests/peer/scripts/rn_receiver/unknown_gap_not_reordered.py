"""The RN-TCP receiver and EPDN's UNKNOWN flag (include/satnet/epdn_wire.h,
docs/epdn.md "Failing safe"): a trusted option that says drop information
may be missing never makes a gap reordered.  Packet 2 is missing, and the
packets that reveal the gap carry a trusted empty option with UNKNOWN
(a gateway evicted a record that may have been this flow's): no duplicate
ACK carries the drop-negative bit.  The holes stay unknown even after a
packet without the flag, until the ACK passes them; a gap that opens above
them later is reordered as usual."""


from rnpeer import MODULES, SYSCTL, TRUSTED, TTL, open_conn, deliver, send, seq, acked  # noqa: E402,E501,F401
from packet import EPDN_EMPTY, EPDN_HOST, EPDN_UNKNOWN


def run(t):
    c = open_conn(t)
    deliver(c, 1, TRUSTED)              # proven
    unknown = dict(ttl=TTL, flags=EPDN_EMPTY | EPDN_HOST | EPDN_UNKNOWN)
    for n in (3, 4):                    # packet 2 is missing
        send(c, n, unknown)
        c.expect(ack=seq(2), sack=[(seq(3), seq(n + 1))], dn=False,
                 flags="A", within=1.5)
    send(c, 5, TRUSTED)                 # no flag: 2 is still unknown
    acked(c, 2, False)
    send(c, 2, TRUSTED)
    acked(c, 6, False)
    send(c, 8, TRUSTED)                 # a new gap, above: reordered
    acked(c, 6, True)
