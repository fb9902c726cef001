"""The RN-TCP receiver, seed 001 §IV, P:min and P:max NULL, P:n > Q:n: on
a path that trusted options prove (EPDN-TTL = TTL, HOST; §III-D) with no
drop reported, the gap Q:n + 1 .. P:n - 1 is reordered, and every
duplicate ACK naming it carries the drop-negative bit (§IV-A, second
bullet).  The ACK after the gap is filled has nothing missing: no bit."""


from rnpeer import MODULES, SYSCTL, TRUSTED, open_conn, deliver, send, seq  # noqa: E402,E501,F401


def run(t):
    c = open_conn(t)
    deliver(c, 1, TRUSTED)
    for n in (3, 4, 5):                 # packet 2 is missing
        send(c, n, TRUSTED)
        c.expect(ack=seq(2), sack=[(seq(3), seq(n + 1))], dn=True,
                 flags="A", within=1.5)
    send(c, 2, TRUSTED)
    c.expect(ack=seq(6), sack=[], dn=False, flags="A", within=1.5)
