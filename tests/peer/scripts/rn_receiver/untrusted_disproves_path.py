"""The RN-TCP receiver, seed 001 §III-D: an option whose EPDN-TTL differs
from the TTL shows a router without EPDN on the path, so the receiver
cannot tell drops from reordering: the path stops being proven, a gap
that opens then is not called reordered, and its duplicate ACKs carry no
drop-negative bit (§IV-A).  Data without an option keeps that verdict,
until a trusted option proves the path again."""


from rnpeer import MODULES, SYSCTL, TRUSTED, TTL, open_conn, deliver, send, seq, acked  # noqa: E402,E501,F401
from packet import EPDN_EMPTY, EPDN_HOST


def run(t):
    c = open_conn(t)
    deliver(c, 1, TRUSTED)              # proven
    untrusted = dict(ttl=TTL + 1, flags=EPDN_EMPTY | EPDN_HOST)
    send(c, 3, untrusted)               # packet 2 is missing
    acked(c, 2, False)
    send(c, 4)                          # no option: still unproven
    acked(c, 2, False)
    send(c, 2)
    acked(c, 5, False)
    send(c, 6, TRUSTED)                 # proven again: 5 is reordered
    acked(c, 5, True)
