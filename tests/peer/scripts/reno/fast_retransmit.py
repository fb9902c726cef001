"""Linux's own reno, as a check of the harness (RFC 5681 §3.2, RFC 6675):
three duplicate ACKs with SACK blocks trigger exactly one fast
retransmission of the first hole (the first two each release one new
segment, limited transmit, RFC 3042); Recovery halves ssthresh, and the ACK
that covers the recovery point ends it with cwnd = ssthresh, which the same
ACK then grows by congestion avoidance."""

SYSCTL = {"net.ipv4.tcp_recovery": 0}
FAMILIES = (4, 6)


def run(t):
    c = t.connect(cc="reno", mss=1000, initcwnd=10)
    c.write(30000)
    c.expect_data(count=10)
    t.sleep(0.05)
    # Segment 1 (1:1001) is lost; 1001:10001 arrive, one dupACK each.
    c.ack(1, sack=[(1001, 2001)])
    c.expect_data()                    # limited transmit (RFC 3042)
    c.ack(1, sack=[(1001, 3001)])
    c.expect_data()
    c.expect_none(within=0.3)          # two dupACKs: no retransmission
    c.ack(1, sack=[(1001, 4001)])
    c.expect(seq=1, end=1001)          # the third: fast retransmit
    i = c.info()
    t.check(i.ca_state == t.RECOVERY, "in Recovery")
    t.check(i.snd_ssthresh == 5, "ssthresh halved from 10 to 5")
    t.check(i.total_retrans == 1, "one retransmission")
    for n in range(4, 10):
        c.ack(1, sack=[(1001, 1001 + 1000 * n)])
    c.drain()
    c.ack(c.snd_nxt)                    # everything delivered
    i = c.info()
    t.check(i.ca_state == t.OPEN, "Recovery over")
    t.check(i.snd_ssthresh == 5 and 5 <= i.snd_cwnd <= 6,
            "cwnd = ssthresh (5) after recovery, +1 at most from this ACK")
