"""TCP-R's optional RTT-compensated growth (module parameter rtt0_ms, off by
default): TCP Hybla's congestion avoidance (Caini and Firrincieli 2004).
With rho = min RTT / rtt0, at least 1, congestion avoidance adds
rho^2 / cwnd per segment, in Hybla's 1/128 steps; slow start stays
Reno's, one segment per segment delivered, stopped at ssthresh.  With
rtt0_ms 0 the same ACKs grow cwnd as Reno does.

The path is not full: every RTT sample is RTT, the handshake's too, and
each flight is acknowledged at once, an RTT after it was sent, so that
the delivery rate times min RTT is the flight and the bound on Hybla's
growth (5/4 of it + 4, include/satnet/grow.h; rtt0_bound.py) stays above
the window: rho 2 adds 4 segments per RTT to a window of 20."""

import rflow

MODULES = rflow.MODULES
# rho comes from the minimum RTT: the kernel's own filter, not rflow's
# latest sample.
SYSCTL = dict(rflow.SYSCTL, **{"net.ipv4.tcp_min_rtt_wlen": 300})
PARAMS = {"tcp_r": dict(rflow.PARAMS["tcp_r"], rtt0_ms=0)}
RHO = 2                 # rtt0_ms is set for about this rho
# s: every RTT, the handshake's too.  Without it min_rtt is the peer's
# reaction time, a millisecond or two under emulation, and rtt0_ms (whole
# ms, at least 1) cannot be set for rho 2 from it.
RTT = 0.3


def rho8(rtt_us, rtt0_ms):
    """rho << 3 as include/satnet/grow.h computes it from the minimum RTT
    (tcp_info's min_rtt; one step either way is allowed below)."""
    return max(8, min(rtt_us * 8 // (rtt0_ms * 1000), 512))


def avoidance(cwnd, acked, r8):
    """cwnd after one ACK for @acked segments, nothing owed before."""
    return cwnd + acked * (2 * r8 * r8 // cwnd) // 128


def ack_flight(t, c, sent):
    """One cumulative ACK for the flight sent at @sent, an RTT after it;
    returns when the next flight was sent."""
    t.sleep(max(sent + RTT - t.now(), 0))
    c.ack(c.snd_nxt)
    sent = t.now()
    c.drain(within=0.3)
    return sent


def to_avoidance(t, c):
    """From a timeout's ssthresh, one cumulative ACK in slow start; returns
    tcp_info before and after it, and when the next flight was sent."""
    sent = t.now()
    c.write(400000)
    c.drain(within=0.2)
    before = c.info()
    sent = ack_flight(t, c, sent)
    return before, c.info(), sent


def run(t):
    c = rflow.start(t, 1, initcwnd=40, write=2000, synack_delay=RTT)
    rflow.timeout_first(t, c, RTT)
    # The minimum RTT is the handshake's.
    rtt0 = max(1, c.info().min_rtt // (RHO * 1000))
    t.param("tcp_r", "rtt0_ms", rtt0)
    before, i, sent = to_avoidance(t, c)
    t.check(before.snd_cwnd + 2 < before.snd_ssthresh,
            "slow start below ssthresh %d" % before.snd_ssthresh)
    grown = before.snd_cwnd + i.delivered - before.delivered
    t.check(grown < before.snd_ssthresh and i.snd_cwnd == grown,
            "slow start: Reno's, one per segment (%d -> %d), not 2^rho"
            % (before.snd_cwnd, grown))
    for _ in range(8):
        if i.snd_cwnd >= i.snd_ssthresh:
            break
        sent = ack_flight(t, c, sent)
        i = c.info()
    t.check(i.snd_cwnd >= i.snd_ssthresh, "slow start over")
    # Every RTT sample from here on is RTT or more: the minimum holds.
    rtt0 = max(1, i.min_rtt // (RHO * 1000))
    t.param("tcp_r", "rtt0_ms", rtt0)
    ack_flight(t, c, sent)
    after = c.info()
    acked = after.delivered - i.delivered
    r8 = rho8(after.min_rtt, rtt0)
    want = sorted(avoidance(i.snd_cwnd, acked, r)
                  for r in (max(r8 - 1, 8), r8, min(r8 + 1, 512)))
    # + 1: what slow start's last ACK left owed in avoidance
    t.check(r8 >= 16 and want[0] <= after.snd_cwnd <= want[-1] + 1,
            "avoidance: cwnd %d + rho^2 / cwnd for each of %d segments "
            "(rho %.2f): %d..%d" % (i.snd_cwnd, acked, r8 / 8, want[0],
                                    want[-1]))
    t.check(after.snd_cwnd > i.snd_cwnd + 1, "more than Reno's +1")

    t.param("tcp_r", "rtt0_ms", 0)
    c = rflow.start(t, 1, initcwnd=40, write=2000)
    rflow.timeout_first(t, c)
    before, i, _ = to_avoidance(t, c)
    t.check(i.snd_cwnd == min(before.snd_cwnd + i.delivered -
                              before.delivered, before.snd_ssthresh),
            "rtt0_ms 0: Reno's slow start, one per segment")
