"""The RN-TCP receiver starts each connection afresh (seed 001 §IV: the
lists and Q belong to one flow): an entry that a TIME-WAIT ACK created on
a 4-tuple, and that a trusted option then proved, does not carry into a
new connection on the same 4-tuple.  The new connection's data has no
option, so its path is unproven and its duplicate ACKs carry no
drop-negative bit (§III-D, §IV-A)."""


from rnpeer import MODULES, SYSCTL, TRUSTED, MSS, open_conn, send, acked, counters  # noqa: E402,E501,F401

SPORT = 47000


def run(t):
    c = open_conn(t, sport=SPORT)
    c.close()                           # the kernel closes first
    c.expect(seq=1, end=2, flags="FA", within=1.5)
    c.data(1, 0, flags="FA", ack=2)     # ACK of its FIN, and our FIN
    c.expect(ack=2, flags="A", within=1.5)      # TIME-WAIT
    c.data(1, 0, flags="FA", ack=2)     # our FIN again: TIME-WAIT ACKs,
    c.expect(ack=2, flags="A", within=1.5)      # and an entry is made
    c.data(2, 1, ack=2, epdn=TRUSTED)   # a trusted option proves it
    c.drain(within=0.5)
    t.sleep(0.05)                       # a newer timestamp reopens
    c = t.accept(mss=MSS, sport=SPORT)
    send(c, 1)
    acked(c, 2, False)
    send(c, 3)                          # packet 2 is missing
    acked(c, 2, False)
    send(c, 2)
    acked(c, 4, False)
    t.check(counters()["flows_restarted"] == 1,
            "the SYN-ACK restarted the TIME-WAIT entry (flows_restarted 1)")
