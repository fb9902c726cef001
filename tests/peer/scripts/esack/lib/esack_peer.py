# SPDX-License-Identifier: GPL-2.0
"""Timeline steps shared by the esack scripts (tests/peer/scripts/esack/).

Not a script itself (it sits below the scripts' folder).  Every step
drives the kernel sender, cc "esack", with full-sized segments of MSS
bytes and returns the tcp_info it checked, so that a script can chain
loss events window after window.

esack's TCP_CC_INFO (docs/esack.md): ce_state = SecWnd + 10 * B2 count,
alpha = A1 count, ab_ecn = A2 count, ab_tot = B1 count.
"""

MSS = 1000
MODULES = ["tcp_esack"]
# No PARAMS: the scripts check the module's defaults, the seed's rules
# (first_factor 60; window_span 0, windows with losses alternate
# whatever their distance).
# Classic dupthresh (three dupACKs, as the seed's SACK), no RACK timer,
# no F-RTO: an RTO's reduction must not be undone by F-RTO.
SYSCTL = {"net.ipv4.tcp_recovery": 0, "net.ipv4.tcp_frto": 0}


def counts(c):
    """esack's counters: {secwnd, B2, A1, A2, B1}."""
    d = c.cc_info()
    return {"secwnd": d["ce_state"] % 10, "B2": d["ce_state"] // 10,
            "A1": d["alpha"], "A2": d["ab_ecn"], "B1": d["ab_tot"]}


def outstanding(c):
    """Collect what the kernel has sent; (snd_una, segments in flight)."""
    c.drain()
    return c.snd_una, (c.snd_nxt - c.snd_una) // MSS


def prime_ssthresh(t, ssthresh):
    """Make the next connection start with snd_ssthresh = @ssthresh.

    Linux takes a route's ssthresh only from the tcp_metrics cache
    (tcp_init_metrics), whose entry a connection creates when it closes
    (tcp_update_metrics): one connection with the route attribute
    "ssthresh lock N" is opened and closed first, with metrics saving on."""
    t.sysctl("net.ipv4.tcp_no_metrics_save", 0)
    t.sysctl("net.ipv4.tcp_no_ssthresh_metrics_save", 0)
    c = t.connect(cc="reno", route="ssthresh lock %d" % ssthresh)
    c.close()
    c.expect(seq=1, end=2, flags="FA")             # the kernel's FIN
    c.send(c.segment(1, 0, flags="FA", ack=2))      # ACK + the peer's FIN
    c.expect(ack=2, flags="A")                      # TIME_WAIT: saved


def target(rule, cwnd, ref):
    """The cwnd seed 002's rule leaves, segments (docs/esack.md; at least
    2, as Reno's ssthresh): A1 keeps cwnd, A2 60 % of it, B1 half of it,
    B2 half the seed's ssthresh @ref."""
    w = {"A1": cwnd, "A2": cwnd * 60 // 100, "B1": cwnd // 2,
         "B2": (ref or 0) // 2}[rule]
    return max(w, 2)


def start(t, initcwnd, ssthresh=None):
    """A connection with cc esack, cwnd @initcwnd, ssthresh @ssthresh
    (None: Linux's infinite one), a megabyte to send and the first window
    sent (nothing acknowledged yet)."""
    if ssthresh:
        prime_ssthresh(t, ssthresh)
    c = t.connect(cc="esack", mss=MSS, initcwnd=initcwnd)
    if ssthresh:
        t.check(c.info().snd_ssthresh == ssthresh,
                "the connection starts at ssthresh %d" % ssthresh)
    c.write(1000 * MSS)
    c.expect_data(count=initcwnd)
    return c


def dupacks(c, una):
    """The segment at @una is lost, the next three arrive: three dupACKs
    with SACK (seed 002: dupACK >= dupthresh), then its fast
    retransmission."""
    for k in (1, 2, 3):
        c.ack(una, sack=[(una + MSS, una + (k + 1) * MSS)])
        if k < 3:
            c.drain(within=0.2)                     # limited transmit
    c.expect(seq=una, end=una + MSS)


def fast_loss(t, c, rule, ref=None):
    """Seed 002 A1/A2/B1/B2: the first segment in flight is lost
    (dupacks()).  The sender must retransmit it once, count the event as
    @rule with SecWnd 0 after an odd (A) and 1 after an even (B) window,
    and set ssthresh to target(): the cwnd it keeps after recovery.  The
    peer then acknowledges everything: cwnd must be that ssthresh, plus
    what congestion avoidance adds for that ACK.  @ref is the seed's
    ssthresh (None: Linux's infinite one).  Returns (cwnd at the loss,
    tcp_info after recovery)."""
    una, n = outstanding(c)
    t.check(n >= 4, "%s: %d segments in flight, 4 needed" % (rule, n))
    before, d0 = c.info(), counts(c)
    cwnd = before.snd_cwnd
    above = ref is not None and cwnd >= ref
    t.check(above == (rule in ("A2", "B2")), "%s: cwnd %d %s ssthresh %s"
            % (rule, cwnd, ">=" if above else "<", ref or "infinite"))
    want = target(rule, cwnd, ref)
    dupacks(c, una)
    i = c.info()
    t.check(i.ca_state == t.RECOVERY, "%s: in Recovery" % rule)
    t.check(i.total_retrans == before.total_retrans + 1,
            "%s: one retransmission" % rule)
    t.check(i.snd_ssthresh == want, "%s: cwnd %d at the loss -> ssthresh %d"
            % (rule, cwnd, want))
    d = counts(c)
    d0[rule] += 1
    d0["secwnd"] = 1 if rule[0] == "B" else 0
    t.check(d == d0, "%s: counted as %s, SecWnd %d" % (rule, rule,
                                                        d0["secwnd"]))
    c.drain()
    acked = (c.snd_nxt - una) // MSS - 3            # not SACKed before
    c.ack(c.snd_nxt)
    after = c.info()
    t.check(after.ca_state == t.OPEN, "%s: recovery over" % rule)
    t.check(after.total_retrans == before.total_retrans + 1,
            "%s: no other retransmission" % rule)
    # the ACK that ends recovery sets cwnd = ssthresh, then congestion
    # avoidance counts its @acked segments: +1 per ssthresh of them
    t.check(after.snd_ssthresh == want and
            want <= after.snd_cwnd <= want + acked // want,
            "%s: cwnd %d after recovery, ssthresh %d (+%d at most from "
            "the %d segments of the last ACK)" % (rule, want, want,
                                                  acked // want, acked))
    return cwnd, after


def ack_one(c):
    """Acknowledge the next data segment the kernel sends."""
    seg = c.expect(within=2.0)
    c.ack(c.k_rel(seg.end))


def ack_windows(t, c, k):
    """@k round trips without loss: each a window of ACKs, one per
    segment."""
    for _ in range(k):
        for _ in range(c.info().snd_cwnd):
            ack_one(c)


def grow(t, c, cwnd):
    """Acknowledge segment by segment until cwnd reaches @cwnd."""
    for _ in range(400):
        if c.info().snd_cwnd >= cwnd:
            return
        ack_one(c)
    t.fail("cwnd did not reach %d" % cwnd)


def timeout(t, c, rule):
    """Seed 002 A3/B3: nothing is acknowledged until the retransmission
    timer fires; the standard timeout follows: ssthresh = half the cwnd
    (whatever A1/A2/B1/B2 would say), cwnd 1, the first segment in
    flight retransmitted.  The event is no A1/A2/B1/B2 (ss does not show
    A3/B3) and SecWnd becomes 0 after an odd (A3), 1 after an even (B3)
    window.  The peer then acknowledges everything.  Returns the
    tcp_info in Loss."""
    una, n = outstanding(c)
    t.check(n >= 2, "%s: %d segments in flight" % (rule, n))
    before, d0 = c.info(), counts(c)
    c.expect(seq=una, end=una + MSS, within=4.0)    # rto_min is 1 s
    i = c.info()
    t.check(i.ca_state == t.LOSS, "%s: the RTO entered Loss" % rule)
    t.check(i.snd_cwnd == 1, "%s: cwnd 1" % rule)
    t.check(i.snd_ssthresh == max(before.snd_cwnd // 2, 2),
            "%s: ssthresh = cwnd %d / 2, the standard timeout"
            % (rule, before.snd_cwnd))
    t.check(i.total_retrans == before.total_retrans + 1,
            "%s: one retransmission" % rule)
    d0["secwnd"] = 1 if rule[0] == "B" else 0
    t.check(counts(c) == d0, "%s: no A1/A2/B1/B2 counted, SecWnd %d"
            % (rule, d0["secwnd"]))
    c.drain()
    c.ack(c.snd_nxt)
    t.check(c.info().ca_state == t.OPEN, "%s: Loss over" % rule)
    return i
