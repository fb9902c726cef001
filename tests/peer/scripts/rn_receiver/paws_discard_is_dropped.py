"""The RN-TCP receiver and a segment TCP throws away (seed 001 §IV-A):
the late original of a reordered packet, older than the retransmission
that last moved the window, fails TCP's timestamp check (PAWS, RFC 7323
§5) after the receiver's hook has seen it.  The hook keeps TS.Recent as
TCP does and sees that TCP will discard it: its bytes did not arrive, so
the duplicate ACK that names its hole says "dropped" (the drop-negative
bit clear) and the sender repairs it at once.  The retransmission TCP
keeps fills it."""


from rnpeer import MODULES, SYSCTL, TRUSTED, MSS, counters, open_conn, deliver, seq  # noqa: E402,E501,F401
from satnet.measure import nstat


def run(t):
    c = open_conn(t)
    deliver(c, 1, TRUSTED)
    old = c.p_tsval()
    c.data(seq(3), MSS, epdn=TRUSTED, tsval=old)    # 2 is late
    c.expect(ack=seq(2), sack=[(seq(3), seq(4))], dn=True, flags="A",
             within=1.5)
    c.data(seq(5), MSS, epdn=TRUSTED, tsval=old)    # so is 4
    c.expect(ack=seq(2), sack=[(seq(5), seq(6)), (seq(3), seq(4))],
             dn=True, flags="A", within=1.5)
    # 2's retransmission moves the window, and TCP's timestamp with it.
    c.data(seq(2), MSS, epdn=TRUSTED, tsval=old + 100)
    c.expect(ack=seq(4), sack=[(seq(5), seq(6))], dn=True, flags="A",
             within=1.5)
    paws = nstat(None, None)["TcpExtPAWSEstab"]
    # 4's original, sent before that retransmission: TCP discards it.
    c.data(seq(4), MSS, epdn=TRUSTED, tsval=old)
    c.expect(ack=seq(4), sack=[(seq(5), seq(6))], dn=False, flags="A",
             within=1.5)
    t.check(nstat(None, None)["TcpExtPAWSEstab"] == paws + 1,
            "TCP discarded the late original (TcpExtPAWSEstab + 1)")
    t.check(counters()["data_paws_discarded"] == 1,
            "the hook saw it coming (data_paws_discarded 1)")
    c.data(seq(4), MSS, epdn=TRUSTED, tsval=old + 200)
    c.expect(ack=seq(6), sack=[], dn=False, flags="A", within=1.5)
