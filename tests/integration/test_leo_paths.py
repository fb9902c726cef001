# SPDX-License-Identifier: GPL-2.0
"""Today's LEO paths: Gilbert-Elliott burst loss (leo-ge) and the path
schedule applied while traffic runs (leo-starlink)."""

import re
import statistics
import subprocess
import sys
import time

import pytest

from satnet import measure
from satnet.paths import hang_limit
from satnet.runner import PathSchedule
from satnet.scenario import ge_loss, load_profile, load_scenario
from satnet.topo import Topology

pytestmark = pytest.mark.statistical

UDP = measure.BLAST
# A stronger chain than leo-ge's, so that 10 000 datagrams measure it:
# mean 0.1 x 80 % + 0.9 x 1 % = 8.9 %, P(loss | loss before) about 40 %.
# Bad and good losses differ, so a swapped 1-h or 1-k shows in the mean.
GE = {"p": 5, "r": 45, "bad_loss": 80, "good_loss": 1}


def test_gemodel_loses_in_bursts():
    """Numbered datagrams across leo-ge's data path (10 Mbit/s bottleneck,
    so that only the satellite stage loses): the loss rate is the chain's
    stationary mean within 20 % (4 standard deviations of a 10 000-packet
    run), netem's drop counter accounts for every gap, and a loss follows
    a loss 2.5 times more often than the mean (Bernoulli loss: 1 time,
    15 standard deviations below)."""
    sc = load_scenario("leo-ge", {"bottleneck.rate_mbit": 10,
                                  "bottleneck.limit": 1000,
                                  "forward.gemodel": GE})
    with Topology(sc, load_profile("linux")) as topo:
        rcv = topo.popen(topo.rcv[0], [sys.executable, UDP, "recv", "9",
                                       "30"], stdout=subprocess.PIPE,
                         text=True)
        measure.wait_listening(topo, topo.rcv[0], 9, udp=True)
        topo.ex(topo.snd[0], [sys.executable, UDP, "send",
                              topo.rcv_addr(0), "8e6", "16"],
                timeout=hang_limit(60))
        out, _ = rcv.communicate(timeout=hang_limit(60))
        stage = topo.ex(topo.r2, ["tc", "-s", "qdisc", "show", "dev",
                                  "r0"]).stdout
    head, gaps = out.split("\n")[:2]
    n = int(head.split()[1])
    lost = set(map(int, gaps.split()))
    assert n > 8000, head
    assert "loss gemodel" in stage, stage
    # the stage's own drops: the gaps, and any after the last arrival or
    # among the few IPv6 packets the links sent as they came up
    drops = int(re.search(r"dropped (\d+)", stage).group(1))
    assert 0 <= drops - len(lost) <= 20, (drops, len(lost), stage)
    mean = len(lost) / n
    want = ge_loss(**GE)
    assert abs(mean - want) <= 0.2 * want, "loss %.4f, chain %.4f" % (
        mean, want)
    followed = [i + 1 in lost for i in lost if i + 1 < n]
    cond = sum(followed) / len(followed)
    assert cond >= 2.5 * mean, "P(loss | loss) %.3f, mean %.3f" % (cond,
                                                                    mean)
    print("GE: %d datagrams, loss %.4f (chain %.4f), P(loss | loss) %.3f, "
          "netem drops %d" % (n, mean, want, cond, drops))


PING_REPLY = re.compile(r"^\[([\d.]+)\].* time=([\d.]+) ms", re.M)


def ping_cmd(topo, count, interval):
    return ["ping", "-D", "-n", "-c", str(count), "-i", str(interval), "-W",
            "2", topo.rcv_addr(0)]


def replies(out):
    """(send time, RTT ms) of every reply in ping -D's output."""
    return [(float(ts) - float(rtt) / 1000, float(rtt)) for ts, rtt in
            PING_REPLY.findall(out)]


def test_schedule_changes_the_delay_live():
    """leo-starlink's schedule, made easy to see: every 5 s the one-way
    delay becomes 70 ms both ways, for 2.5 s after each change 40 ms
    more forward, no loss burst.  Started once the flow (here a ping
    series) has its first reply; each window of the pings between the
    applied changes has the RTT of its path, and the stages keep their
    loss model."""
    sc = load_scenario("leo-starlink", {
        "schedule.period_s": 5, "schedule.delay_ms": [70, 70],
        "schedule.jump_ms": [40, 40], "schedule.spike_ms": 2500,
        "schedule.burst_loss": 0})
    with Topology(sc, load_profile("linux")) as topo:
        base = measure.expected_ping_ms(sc)
        # starting a program reads it over 9p, which on the virtual clock
        # has taken guest seconds on a busy host: the schedule starts when
        # the series runs, not when it was asked to
        ping = topo.popen(topo.snd[0], ping_cmd(topo, 125, 0.1),
                          stdout=subprocess.PIPE, text=True)
        with PathSchedule(topo.schedule_steps(11), topo.tc_batch) as sched:
            first = ping.stdout.readline()
            while first and not PING_REPLY.match(first):
                first = ping.stdout.readline()
            t0 = time.time()
            sched.start()
            out, _ = ping.communicate(timeout=hang_limit(120))
            sched.join(timeout=hang_limit(30))
        series = replies(first + out)
        applied = sched.result()
        stage = topo.ex(topo.r2, ["tc", "qdisc", "show", "dev",
                                  "r0"]).stdout
    assert [e["due_s"] for e in applied] == [5, 7.5, 10]
    assert all(e["result"] == "ok" and e["t_s"] - e["due_s"] < 1
               for e in applied), applied
    assert "delay 111ms" in stage and "loss gemodel" in stage, stage
    # a window runs from the end of one change (and 0.3 s for the pings
    # in flight) to the start of the next: starting ip and tc takes the
    # emulated machine long enough to delay netem's timers meanwhile
    ends = [0.0] + [e["end_s"] for e in applied]
    starts = [e["t_s"] for e in applied] + [99]
    spike, settled = base + 40 + 80, base + 80
    for lo, hi, want in zip(ends, starts, (base, spike, settled, spike)):
        rtts = [rtt for t, rtt in series if lo + 0.3 <= t - t0 < hi]
        assert len(rtts) >= 4, (lo, hi, applied, series)
        got = statistics.median(rtts)
        assert abs(got - want) <= 0.08 * want, \
            "%.1f-%.1f s: median RTT %.1f ms, path %.1f ms: %s" % (
                lo, hi, got, want, rtts)
    print("schedule: changes (due, begun, done) %s; pings (sent, RTT) %s" %
          ([(e["due_s"], e["t_s"], e["end_s"]) for e in applied],
           [(round(t - t0, 2), rtt) for t, rtt in series]))
