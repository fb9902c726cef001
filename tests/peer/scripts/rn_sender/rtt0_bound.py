"""rn's RTT-compensated growth (module parameter rtt0_ms) is bounded by
what the path holds, as TCP-R's (tcp_r/rtt0_bound.py): behind a saturated
link of RATE segments/s and base RTT DELAY, congestion avoidance stops at
delivery rate * min RTT * 5/4 + 4 segments (include/satnet/grow.h), the
link's BDP plus the queue's share, where Hybla's alone adds rho^2 = 256
segments per RTT (rho 16).  rn's rate is the stack's last saved sample
(no windowed max: its private area has no room for one).  Below the
bound the window grows: it reaches it.  A starved guest's stalls slow
the peer's ACK clock (never speed it up): cwnd reaches at least the
bound of the rate the link gave in the second half, and passes that of
RATE by no more than the tolerance."""

import rnsnd

MODULES = rnsnd.MODULES
SYSCTL = {"net.ipv4.tcp_min_rtt_wlen": 300, "net.ipv4.tcp_frto": 0}
PARAMS = {"tcp_rn": {"rtt0_ms": 25}}
MSS = rnsnd.MSS
RATE = 50               # segments/s: the bottleneck
DELAY = 0.4             # s: base RTT; BDP 20 segments, bound 29
SSTHRESH = 10           # avoidance from well below the BDP
SECONDS = 8
TOL_PCT = 10            # either way, at least TOL_MIN: the ACK clock's
TOL_MIN = 3             # jitter under emulation


def bound(rate, min_rtt_us):
    """sat_bound() at @rate segments/s: BDP + BDP / 4 + 4 segments."""
    bdp = int(rate * min_rtt_us) // 1000000
    return bdp + bdp // 4 + 4


def start(t):
    """min RTT DELAY (the handshake's and every sample's); a timeout on
    the first two segments leaves ssthresh SSTHRESH."""
    c = t.connect(cc="rn", mss=MSS, initcwnd=2 * SSTHRESH, win=8 << 20,
                  synack_delay=DELAY)
    c.write(2 * MSS)
    c.expect_data(count=2)
    for k in (1, 2):
        c.expect(seq=(k - 1) * MSS + 1, end=k * MSS + 1, within=4)
        t.sleep(DELAY)
        c.ack(k * MSS + 1)
    c.drain()
    t.check(c.info().snd_ssthresh == SSTHRESH, "ssthresh %d" % SSTHRESH)
    return c


def run(t):
    c = start(t)
    before = c.info()
    c.write(3000000)
    infos = c.bottleneck(RATE, DELAY, SECONDS)
    (t0, i0), (t1, i) = infos[len(infos) // 2], infos[-1]
    rate = (i.delivered - i0.delivered) / (t1 - t0)
    t.check(RATE / 2 <= rate <= RATE * 1.1,
            "the link delivered %.0f segments/s (%d)" % (rate, RATE))
    t.check(i.total_retrans == before.total_retrans and
            i.ca_state == t.OPEN, "no loss, no recovery")
    want = bound(RATE, i.min_rtt)
    tol = max(want * TOL_PCT // 100, TOL_MIN)
    low = bound(min(rate, RATE), i.min_rtt)
    most = max(x.snd_cwnd for _, x in infos)
    t.check(i.snd_cwnd >= low - tol,
            "cwnd grew from %d to %d, to the bound %d at %.0f/s (min RTT "
            "%d us)" % (SSTHRESH, i.snd_cwnd, low, rate, i.min_rtt))
    t.check(most <= want + tol,
            "cwnd at most %d, the bound %d + %d" % (most, want, tol))
