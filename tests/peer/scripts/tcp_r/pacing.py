"""r sets the pacing rate itself (the stack leaves it to a module with
cong_control), as tcp_update_pacing_rate() does: on every ACK,
sk_pacing_rate (tcpi_pacing_rate) is 200 % of cwnd * mss / srtt while
cwnd is below half of ssthresh, 120 % after; srtt is tp->srtt_us, which
tcp_info gives in whole microseconds (tcpi_rtt = srtt_us >> 3), hence a
range.  With the module parameter pacing on (the default) r asks for
TCP's internal pacing: a flight released by one ACK goes out spread over
about half an RTT in slow start; with pacing 0 it goes out at once (in
under a third of that), as the segments' timestamps (TSval, ms) show."""

import rflow

MODULES = rflow.MODULES
SYSCTL = rflow.SYSCTL
PARAMS = {"tcp_r": {"pacing": 1}}
# s: the handshake's RTT, the first srtt.  Long, so that a paced flight
# takes far longer than the emulated guest needs to send one unpaced.
HANDSHAKE = 0.3


def expect_rate(t, i, ratio, what):
    """tcpi_pacing_rate after an ACK that left nothing in flight."""
    top = i.snd_mss * 80000 * ratio * i.snd_cwnd
    lo, hi = top // (8 * i.rtt + 7), top // (8 * i.rtt)
    t.check(lo <= i.pacing_rate <= hi,
            "%s: pacing rate %d within %d..%d (%d %% of cwnd %d * mss %d "
            "/ srtt %d us)" % (what, i.pacing_rate, lo, hi, ratio,
                               i.snd_cwnd, i.snd_mss, i.rtt))


def spread(segs):
    """Seconds between the first and the last data segment of @segs, by
    the kernel's own clock (TSval, ms): the peer's receive times carry
    the emulator's scheduling hiccups."""
    data = [s for s in segs if s.payload]
    return ((data[-1].ts[0] - data[0].ts[0]) & 0xffffffff) / 1000.0, \
        len(data)


def paced(t):
    c = rflow.start(t, 1, synack_delay=HANDSHAKE)
    t.sleep(0.4)
    c.ack(c.snd_nxt)                          # slow start: 10 -> 20
    sent = c.drain(within=0.3)
    i = c.info()
    t.check(i.snd_ssthresh > 1000, "slow start")
    expect_rate(t, i, 200, "slow start")
    took, n = spread(sent)
    want = (n - 1) * i.snd_mss / (i.pacing_rate or 1)
    t.check(n >= 15 and took >= want / 2,
            "%d segments paced over %.3f s (rate: %.3f s)" % (n, took, want))
    # After a recovery (modified: ssthresh is the window), 120 %.
    _, hole, end, _ = rflow.recovery(t, c, [True, True, True], wait=0.1)
    rflow.sack_rest(t, c, hole, end)
    rflow.close_hole(t, c, end)
    rflow.ack_all(t, c)
    i = c.info()
    t.check(i.ca_state == t.OPEN and i.snd_cwnd >= i.snd_ssthresh // 2,
            "congestion avoidance")
    expect_rate(t, i, 120, "avoidance")


def unpaced(t):
    t.param("tcp_r", "pacing", 0)
    c = rflow.start(t, 1, synack_delay=HANDSHAKE)
    t.sleep(0.4)
    c.ack(c.snd_nxt)
    sent = c.drain(within=0.3)
    i = c.info()
    expect_rate(t, i, 200, "pacing 0: the rate is still set")
    took, n = spread(sent)
    want = (n - 1) * i.snd_mss / (i.pacing_rate or 1)
    t.check(n >= 15 and took < want / 3,
            "pacing 0: %d segments at once (%.3f s; paced: %.3f s)" %
            (n, took, want))


def run(t):
    paced(t)
    unpaced(t)
