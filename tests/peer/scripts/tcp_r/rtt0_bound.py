"""TCP-R's RTT-compensated growth (module parameter rtt0_ms) is bounded by
what the path holds (include/satnet/grow.h): behind a saturated link of
RATE segments/s and base RTT DELAY, congestion avoidance stops at
bw_max * min RTT * 5/4 + 4 segments, the link's BDP plus the queue's
share, where Hybla's alone adds rho^2 = 256 segments per RTT (rho 16)
and fills any queue.  Below the bound the window grows: it reaches it."""

import rflow

MODULES = rflow.MODULES
# min_rtt is the base RTT, not the latest sample.
SYSCTL = dict(rflow.SYSCTL, **{"net.ipv4.tcp_min_rtt_wlen": 300})
PARAMS = {"tcp_r": dict(rflow.PARAMS["tcp_r"], rtt0_ms=25)}
RATE = 50               # segments/s: the bottleneck
DELAY = 0.4             # s: base RTT; BDP 20 segments, bound 29
SSTHRESH = 10           # avoidance from well below the BDP
SECONDS = 8
# Either way, 10 % of the bound, at least 3 segments: the jitter of the
# peer's ACK clock under emulation, whose fastest samples the windowed max
# keeps.
TOL_PCT = 10
TOL_MIN = 3


def bound(rate, min_rtt_us):
    """sat_bound() at @rate segments/s: BDP + BDP / 4 + 4 segments."""
    bdp = int(rate * min_rtt_us) // 1000000
    return bdp + bdp // 4 + 4


def check_bound(t, c, what):
    """Behind the link for SECONDS: cwnd grows to the bound and no
    further, with no loss.  A starved guest's stalls slow the peer's ACK
    clock (never speed it up): cwnd reaches at least the bound of the
    rate the link gave in the second half, and passes that of RATE by no
    more than the tolerance."""
    before = c.info()
    c.write(3000000)
    infos = c.bottleneck(RATE, DELAY, SECONDS)
    (t0, i0), (t1, i) = infos[len(infos) // 2], infos[-1]
    rate = (i.delivered - i0.delivered) / (t1 - t0)
    t.check(RATE / 2 <= rate <= RATE * 1.1,
            "the link delivered %.0f segments/s (%d)" % (rate, RATE))
    t.check(i.total_retrans == before.total_retrans and
            i.ca_state == t.OPEN,
            "no loss, no recovery")
    most = max(x.snd_cwnd for _, x in infos)
    want = bound(RATE, i.min_rtt)
    tol = max(want * TOL_PCT // 100, TOL_MIN)
    low = bound(min(rate, RATE), i.min_rtt)
    t.check(i.snd_cwnd >= low - tol,
            "%s: cwnd grew from %d to %d, to the bound %d at %.0f/s "
            "(min RTT %d us)" % (what, SSTHRESH, i.snd_cwnd, low, rate,
                                 i.min_rtt))
    t.check(most <= want + tol,
            "%s: cwnd at most %d, the bound %d + %d" % (what, most, want,
                                                        tol))


def start(t):
    """A connection whose min RTT is DELAY, in slow start up to SSTHRESH
    after a timeout."""
    c = rflow.start(t, 1, initcwnd=2 * SSTHRESH, write=2000,
                    synack_delay=DELAY, win=8 << 20)
    rflow.timeout_first(t, c, DELAY)
    t.check(c.info().snd_ssthresh == SSTHRESH, "ssthresh %d" % SSTHRESH)
    return c


def run(t):
    check_bound(t, start(t), "rtt0_ms 25")
