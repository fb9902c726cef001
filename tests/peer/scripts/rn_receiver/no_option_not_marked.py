"""The RN-TCP receiver marks nothing without evidence (seed 001 §III-D,
§IV-A): data without an EPDN option never proves the path, so a hole is
neither reordered nor dropped, and no duplicate ACK, nor the ACK that
fills the hole, carries the drop-negative bit."""


from rnpeer import MODULES, SYSCTL, open_conn, deliver, send, seq  # noqa: E402,E501,F401


def run(t):
    c = open_conn(t)
    deliver(c, 1)
    for n in (3, 4, 5):                 # packet 2 is missing
        send(c, n)
        c.expect(ack=seq(2), sack=[(seq(3), seq(n + 1))], dn=False,
                 flags="A", within=1.5)
    send(c, 2)
    c.expect(ack=seq(6), sack=[], dn=False, flags="A", within=1.5)
