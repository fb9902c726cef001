# SPDX-License-Identifier: GPL-2.0
"""Steps shared by the TCP-R scripts (tests/peer/scripts/tcp_r/*.py).

The kernel sends with congestion control "r"; the peer plays an RN-TCP
receiver behind EPDN v3 gateways (seed 000 §2.2): a dupACK with the
drop-negative bit (dn=True) says the hole was reordered or corrupted, one
without it says the hole was dropped by congestion.  tcp_rn.ko reads the
bit for r's sockets; no sysctl is needed at the sender.
"""

MODULES = ["rn_host", "tcp_rn", "tcp_r"]
# min_rtt is the latest sample, so that RACK's window (min_rtt/4) follows
# the long RTTs the scripts make and three back-to-back dupACKs arrive in
# it; no F-RTO undo after a timeout.
SYSCTL = {"net.ipv4.tcp_min_rtt_wlen": 0, "net.ipv4.tcp_frto": 0}
# Unpaced, but for pacing.py.  With TCP's internal pacing a fast
# retransmission can lose its one slot to new data: on the ACK that begins
# the recovery, tcp_xmit_retransmit_queue() tests the pacing clock as
# cached when the ACK arrived and waits, while tcp_write_xmit() refreshes
# the clock and sends new data in the slot PRR gave.  A real flow's next
# ACK sends the retransmission; a script's peer waits for it and sees a
# timeout.  The window rules do not depend on pacing.
PARAMS = {"tcp_r": {"pacing": 0}}
MSS = 1000


def halved(cwnd):
    """Reno's halving, as tcp_reno_ssthresh() computes it."""
    return max(cwnd // 2, 2)


def reno_grow(cwnd, ssthresh, acked):
    """cwnd after one ACK that delivered @acked segments, as
    tcp_reno_cong_avoid() grows it from @cwnd with nothing owed: slow
    start up to @ssthresh, then one segment per window."""
    step = min(acked, max(ssthresh - cwnd, 0))
    cwnd, acked = cwnd + step, acked - step
    return cwnd + acked // cwnd


def cwr_sent(segs):
    return [s for s in segs if s.flags & 0x80]


def start(t, rec, ecn=False, initcwnd=10, write=400000, synack_delay=0,
          **kw):
    """A connection with loss detection @rec (tcp_recovery) and @write
    bytes queued; returns it after the first flight has been seen.
    @synack_delay (s) sets the handshake's RTT, and so min_rtt; @kw goes
    to t.connect()."""
    t.sysctl("net.ipv4.tcp_recovery", rec)
    c = t.connect(cc="r", mss=MSS, initcwnd=initcwnd, ecn=ecn,
                  synack_delay=synack_delay, **kw)
    c.write(write)
    c.drain(within=0.3)
    return c


def timeout_first(t, c, delay=0.0):
    """Nothing of the first two segments is acknowledged until the
    retransmission timer fires; then both are, one at a time, each @delay
    s after it was resent (an RTT sample by its timestamp), and the
    connection is Open again with a finite ssthresh above cwnd."""
    c.expect(seq=1, end=MSS + 1, within=4)
    t.check(c.info().ca_state == t.LOSS, "timeout: Loss")
    t.sleep(delay)
    c.ack(MSS + 1)
    c.expect(seq=MSS + 1, end=2 * MSS + 1)
    t.sleep(delay)
    c.ack(2 * MSS + 1)
    c.drain(within=0.2)
    i = c.info()
    t.check(i.ca_state == t.OPEN, "Open again after the timeout")
    return i


def ack_all(t, c, delay=0.0, ece=False):
    """After @delay s (the RTT sample), one cumulative ACK for everything
    sent: in slow start cwnd grows by the flight."""
    if delay:
        t.sleep(delay)
    c.drain(within=0.2)
    c.ack(c.snd_nxt, ece=ece)
    c.drain(within=0.3)


def grow(t, c, cwnd, delay=0.0):
    """Cumulative ACKs until cwnd is at least @cwnd."""
    for _ in range(8):
        if c.info().snd_cwnd >= cwnd:
            return
        ack_all(t, c, delay)
    t.fail("cwnd did not reach %d" % cwnd)


def retransmissions(c, segs, hole):
    """How many of @segs (as the kernel sent them) resend @hole."""
    return sum(1 for s in segs if c.k_rel(s.seq) == hole and s.payload)


def lose_head(t, c, marks, wait=0.4, ece=False):
    """The segment at snd_una is lost; after @wait s (so that the RTT,
    and RACK's window of min_rtt/4 with tcp_min_rtt_wlen=0, are long)
    the next ones arrive back to back, one dupACK each (SACK), with the
    bit as @marks says; @ece on the first.  Returns (hole, end of the
    data sent before the hole's first retransmission, the segments the
    kernel sent)."""
    c.drain(within=0.1)
    hole, end = c.snd_una, c.snd_nxt
    t.check(end - hole >= (len(marks) + 1) * MSS,
            "flight holds the hole and %d more segments" % len(marks))
    t.sleep(wait)
    for k, mark in enumerate(marks, 1):
        c.ack(hole, sack=[(hole + MSS, hole + MSS * (k + 1))], dn=mark,
              ece=ece and k == 1)
    sent = c.drain(within=0.3)
    for s in sent:
        if c.k_rel(s.seq) == hole:
            break
        end = max(end, c.k_rel(s.end))
    return hole, end, sent


def sack_rest(t, c, hole, end, dn=True, ece=False):
    """One dupACK that SACKs all the data sent before the retransmission
    (@end).  Returns the segments sent meanwhile."""
    c.ack(hole, sack=[(hole + MSS, end)], dn=dn, ece=ece)
    return c.drain(within=0.3)


def close_hole(t, c, end):
    """The retransmission arrives: one cumulative ACK up to @end, which
    delivers only the hole (the rest was SACKed)."""
    c.ack(end)
    c.drain(within=0.2)
    return c.info()


def recovery(t, c, marks, **kw):
    """The head of the flight lost, dupACKs marked as @marks (see
    lose_head()): exactly one retransmission and Recovery.  Returns
    (tcp_info before, hole, end, segments sent)."""
    before = c.info()
    hole, end, sent = lose_head(t, c, marks, **kw)
    t.check(retransmissions(c, sent, hole) == 1,
            "the third dupACK: one retransmission")
    t.check(c.info().ca_state == t.RECOVERY, "in Recovery")
    return before, hole, end, sent


def check_kept(t, c, before):
    """A modified recovery keeps the window: ssthresh is the cwnd when it
    began (slow start is over) and cwnd is not cut.  Returns tcp_info."""
    i = c.info()
    t.check(i.snd_ssthresh == before.snd_cwnd,
            "modified recovery: ssthresh is the window %d, not halved" %
            before.snd_cwnd)
    t.check(i.snd_cwnd >= before.snd_cwnd,
            "modified recovery: cwnd %d not cut" % i.snd_cwnd)
    return i


def check_halved(t, c, before, why, path=None, grown=None):
    """ssthresh is half the cwnd before the recovery, or half the window
    a modified recovery had @grown to (its cwnd, tcp_info while it held
    it); with @path, the recovery counts on that path of r's cc_info."""
    wnd = max(before.snd_cwnd, grown.snd_cwnd if grown else 0)
    i = c.info()
    t.check(i.snd_ssthresh == halved(wnd),
            "%s: ssthresh halved from window %d" % (why, wnd))
    if path:
        t.check(c.cc_info()[path] == 1, "counted on r's %s" % path)
    return i


def inflight(i):
    """Segments in flight, as tcp_packets_in_flight() counts them."""
    return i.unacked - i.sacked - i.lost + i.retrans


def bounded_ack(t, c, ack, what, **kw):
    """One ACK (c.ack(ack, **kw)).  In Recovery, cwnd after it is at most
    max(ssthresh, what was in flight before it) + the segments it
    delivered: a reduction (PRR, RFC 6937) sends no more than was
    delivered while more than ssthresh is in flight, and a window kept
    through a modified recovery grows by less than was delivered.
    Returns (tcp_info after it, the segments sent)."""
    before = c.info()
    c.ack(ack, **kw)
    sent = c.drain(within=0.3)
    i = c.info()
    if i.ca_state == t.RECOVERY:
        most = max(i.snd_ssthresh, inflight(before)) + \
            i.delivered - before.delivered
        t.check(i.snd_cwnd <= most,
                "%s: cwnd %d within max(ssthresh %d, inflight %d) + "
                "delivered %d" % (what, i.snd_cwnd, i.snd_ssthresh,
                                  inflight(before),
                                  i.delivered - before.delivered))
    return i, sent
