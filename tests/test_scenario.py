# SPDX-License-Identifier: GPL-2.0
"""Scenario files: derived values and clear errors for bad input."""

import glob
import os
import re
import threading
import time

import pytest

from satnet import dist
from satnet.runner import PathSchedule, ScheduleError, together
from satnet.scenario import (ScenarioError, ber_to_per, ge_loss,
                             load_profile, load_scenario)
from satnet.topo import Topology, TopologyError, rps_files, rps_mask

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIOS = sorted(os.path.basename(p)[:-5] for p in
                   glob.glob(os.path.join(TOP, "testbed", "scenarios",
                                          "*.toml")))
# the sources beyond the seeds, by the short names references.md gives them
SOURCES = [h for h in re.findall(r"^## (.+)$", open(os.path.join(
    TOP, "docs", "references.md")).read(), re.M) if not h.startswith("seed")]


def test_ber_to_per_matches_design_table():
    assert ber_to_per(1e-7, 1500) == pytest.approx(0.0012, abs=1e-4)
    assert ber_to_per(1e-6, 1500) == pytest.approx(0.0119, abs=1e-4)
    assert ber_to_per(1e-5, 1500) == pytest.approx(0.113, abs=1e-3)


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_scenario_loads_and_cites_its_seed_or_sources(name):
    sc = load_scenario(name)
    assert ("seed 00" in sc.source and "§" in sc.source) or \
        any(src in sc.source for src in SOURCES), SOURCES
    assert sc.limit_packets() > 0
    load_profile(sc.profile)


def test_geo_derived_values():
    sc = load_scenario("geo")
    assert sc.base_rtt_ms() == 604
    assert sc.bdp_packets() == 76           # 1.5 Mbit/s x 604 ms / 1500 B
    assert sc.fwd.per == pytest.approx(0.0119, abs=1e-4)
    assert sc.fwd.reorder.max_extra_ms() == 1200     # [0, 2yP], y = 2


@pytest.mark.parametrize("key,val,msg", [
    ("bottleneck.rate_mbit", 0, "positive"),
    ("bottleneck.rate_mbit", 20, "access"),
    ("bottleneck.qdisc", "sfq", "one of"),
    ("bottleneck.limit", -3, "limit"),
    ("forward.reorder.dist", "pareto", "one of"),
    ("forward.reorder.fraction", 1.5, "<= 1"),
    ("forward.loss", 1.0, "< 1"),
    ("forward.per", 0.01, "not both"),
    ("forward.bogus", 1, "unknown key"),
    ("bottleneck.epdn_domain", True, "needs bottleneck.qdisc"),
    ("bottleneck.epdn_domain", "yes", "true or false"),
    ("run.clock", "icount", "run.clock must be \"real\" or \"virtual\""),
    ("forward.gemodel", {"p": 150, "r": 30}, "gemodel.p must be a "
     "percentage 0..100, not 150"),
    ("ack.gemodel", {"p": 1, "r": -1}, "ack.gemodel.r must be a percentage"),
    ("forward.gemodel", {"p": 1, "r": 30, "bad_loss": "75"},
     "gemodel.bad_loss must be a percentage"),
    ("forward.gemodel", {"p": 1}, "forward.gemodel.r is required"),
    ("forward.gemodel", {"p": 0, "r": 30}, "p and r must be above 0"),
    ("forward.gemodel", {"p": 1, "r": 30, "h": 5}, "unknown key"),
    ("forward.gemodel", [1, 30, 75, 0], "must be a table"),
    ("forward.gemodel", {"p": 1, "r": 1, "bad_loss": 100, "good_loss": 100},
     "< 1"),
    ("forward", {"delay_ms": 300, "loss": 0.01,
                 "gemodel": {"p": 1, "r": 30}}, "loss or gemodel, not both"),
    ("schedule", {"delay_ms": [20, 40]}, "schedule.period_s must be a "
     "positive number"),
    ("schedule", {"period_s": 15},
     r"schedule.delay_ms must be \[low, high\], not None"),
    ("schedule", {"period_s": 15, "delay_ms": [40, 20]}, "low 40 exceeds"),
    ("schedule", {"period_s": 15, "delay_ms": [20, 40], "jump_ms": [-1, 5],
                  "spike_ms": 300}, "schedule.jump_ms must be a non-neg"),
    ("schedule", {"period_s": 15, "delay_ms": [20, 40], "spike_ms": 15000},
     "shorter than schedule.period_s"),
    ("schedule", {"period_s": 15, "delay_ms": [20, 40], "jump_ms": [30, 50]},
     "need schedule.spike_ms"),
    ("schedule", {"period_s": 15, "delay_ms": [20, 40], "spike_ms": 300,
                  "burst_loss": 1.5}, "burst_loss must be <= 1"),
    ("schedule", {"period_s": 15, "delay_ms": [20, 40], "seed": "x"},
     "seed must be an integer"),
    ("schedule", {"period_s": 15, "delay_ms": [20, 40], "every": 3},
     "unknown key"),
])
def test_bad_scenario_values_are_refused(key, val, msg):
    with pytest.raises(ScenarioError, match=msg):
        sc = load_scenario("geo", {key: val})
        sc.limit_packets()


def test_epdn_domain_key():
    sc = load_scenario("geo", {"bottleneck.qdisc": "epdn",
                               "bottleneck.epdn_domain": True})
    assert sc.epdn_domain and sc.describe()["epdn_domain"]
    assert not load_scenario("geo").epdn_domain


def test_truncated_normal_table_is_clipped_at_three_sigma():
    t = dist.normal3()
    assert len(t) == dist.SIZE
    assert min(t) >= -3 * dist.SCALE and max(t) <= 3 * dist.SCALE
    assert abs(sum(t) / len(t)) < 0.01 * dist.SCALE
    e = dist.exponential()
    assert min(e) >= -dist.SCALE and abs(sum(e) / len(e)) < 0.05 * dist.SCALE


def test_gilbert_elliott_mean_loss():
    """pi_B (1-h) + pi_G (1-k) with pi_B = p / (p + r), in percent."""
    assert ge_loss(1, 1, 100, 0) == pytest.approx(0.5)
    assert ge_loss(10, 90, 50, 10) == pytest.approx(0.1 * 0.5 + 0.9 * 0.1)
    sc = load_scenario("leo-ge")
    assert sc.fwd.gemodel == {"p": 0.5, "r": 30, "bad_loss": 75,
                              "good_loss": 0.1}
    assert sc.mean_loss(sc.fwd) == pytest.approx(0.0133, abs=1e-4)
    assert 0.01 <= sc.mean_loss(sc.fwd) <= 0.02
    assert sc.mean_loss(sc.ack) == 0
    assert sc.describe()["forward"]["mean_loss"] == sc.mean_loss(sc.fwd)
    # netem's defaults for 1-h and 1-k; corruption adds to the loss
    sc = load_scenario("leo-ge", {"forward.gemodel": {"p": 1, "r": 9},
                                  "forward.per": 0.01})
    assert sc.fwd.gemodel["bad_loss"] == 100 and \
        sc.fwd.gemodel["good_loss"] == 0
    assert sc.mean_loss(sc.fwd) == pytest.approx(1 - 0.99 * 0.9)


def stages(sc):
    return Topology(sc, load_profile("linux")).satellite_stages(sc.fwd,
                                                                sc.ack)


def test_gemodel_netem_line():
    """One loss model per netem: gemodel with its four arguments in
    percent (p r 1-h 1-k), corruption beside it, the ACK stage clean."""
    sc = load_scenario("leo-ge", {"forward.per": 0.001})
    b, r0 = stages(sc)
    assert r0 == ("qdisc add dev r0 root netem delay 31.000ms corrupt "
                  "0.100000%% loss gemodel 0.500000%% 30.000000%% "
                  "75.000000%% 0.100000%% limit %d" % sc.netem_limit(sc.fwd))
    assert b == "qdisc add dev b root netem delay 30.000ms limit %d" % \
        sc.netem_limit(sc.ack)
    sc = load_scenario("leo-ge", {"forward.gemodel": {"p": 1, "r": 9},
                                  "forward.reorder.fraction": 0.1,
                                  "forward.reorder.mean_ms": 10})
    bands = [ln for ln in stages(sc) if "netem" in ln][1:]
    assert len(bands) == 2 and all(
        "loss gemodel 1.000000% 9.000000% 100.000000% 0.000000%" in ln and
        "loss random" not in ln for ln in bands)


def test_schedule_events_follow_the_spec():
    """Changes every period_s from the flows' start; each a spike (delay
    + jump forward, burst loss both ways in place of the loss model),
    then the settled path spike_ms later; nothing at or after the end;
    the same draws on every call."""
    sc = load_scenario("leo-starlink")
    ev = sc.schedule.events(60, sc.fwd, sc.ack)
    assert [t for t, _, _ in ev] == [15, 15.3, 30, 30.3, 45, 45.3]
    for (t, fs, as_), (_, f, a) in zip(ev[0::2], ev[1::2]):
        assert 20 <= f.delay_ms <= 40 and a.delay_ms == f.delay_ms
        assert 30 <= fs.delay_ms - f.delay_ms <= 50
        assert as_.delay_ms == a.delay_ms
        assert fs.loss == as_.loss == 0.3 and fs.gemodel is None
        assert f.gemodel == sc.fwd.gemodel and f.loss == 0 and a.loss == 0
    assert len({round(f.delay_ms, 6) for _, f, _ in ev[1::2]}) == 3
    assert sc.fwd.delay_ms == 30 and sc.fwd.gemodel     # the base is kept
    again = sc.schedule.events(60, sc.fwd, sc.ack)
    assert [f.delay_ms for _, f, _ in again] == [f.delay_ms for _, f, _ in ev]
    other = load_scenario("leo-starlink", {"schedule.seed": 2})
    assert other.schedule.events(60, sc.fwd, sc.ack)[1][1].delay_ms != \
        ev[1][1].delay_ms
    assert [t for t, _, _ in sc.schedule.events(45.2, sc.fwd, sc.ack)] == \
        [15, 15.3, 30, 30.3, 45]
    assert [t for t, _, _ in sc.schedule.events(15, sc.fwd, sc.ack)] == []
    plain = load_scenario("leo-ge", {"schedule": {"period_s": 10,
                                                  "delay_ms": [50, 50]}})
    ev = plain.schedule.events(35, plain.fwd, plain.ack)
    assert [(t, f.delay_ms, a.delay_ms) for t, f, a in ev] == \
        [(10, 50, 50), (20, 50, 50), (30, 50, 50)]
    assert ev[0][1].gemodel == plain.fwd.gemodel


def test_schedule_loss_limit_and_record():
    sc = load_scenario("leo-starlink")
    share = 0.3 / 15
    assert sc.mean_loss(sc.fwd) == pytest.approx(
        (1 - share) * sc.fwd.loss_rate() + share * 0.3)
    assert 0.01 <= sc.mean_loss(sc.fwd) <= 0.02
    assert sc.mean_loss(sc.ack) == pytest.approx(share * 0.3)
    # the stages hold the schedule's largest delay, 40 + 50 ms
    far = load_scenario("leo-ge", {"forward.delay_ms": 90})
    assert sc.netem_limit(sc.fwd) == sc.netem_limit(sc.ack) == \
        far.netem_limit(far.fwd) > load_scenario("leo-ge").netem_limit(
            sc.fwd)
    d = sc.describe()
    assert d["schedule"] == {"period_s": 15, "delay_ms": [20, 40],
                             "jump_ms": [30, 50], "spike_ms": 300,
                             "burst_loss": 0.3, "seed": 1}
    assert d["base_rtt_ms"] == 64           # the self-check's base path


def test_schedule_steps_change_every_netem_with_all_options():
    """`tc qdisc change` resets what a netem line leaves out: each step
    repeats delay, loss model and limit on R2's b and every r<i>, and
    touches only the netem bands of a reordering stage."""
    sc = load_scenario("leo-starlink", {"run.pairs": 2})
    topo = Topology(sc, load_profile("linux"))
    adds = stages(sc)
    steps = topo.schedule_steps(31)
    assert [(t, ns) for t, ns, _ in steps] == \
        [(t, topo.r2) for t in (15, 15.3, 30, 30.3)]
    spike, settled = steps[0][2], steps[1][2]
    for lines in (spike, settled):
        assert [ln.split()[:4] for ln in lines] == \
            [["qdisc", "change", "dev", d] for d in ("b", "r0", "r1")]
    assert all(ln.endswith("loss random 30.000000%% limit %d" %
                           sc.netem_limit(sc.fwd)) for ln in spike)
    assert settled[1].split("delay")[1].split()[1:] == \
        adds[1].split("delay")[1].split()[1:]           # gemodel, limit
    assert "loss" not in settled[0]
    sc = load_scenario("geo", {"schedule": {"period_s": 5,
                                            "delay_ms": [250, 350]}})
    topo = Topology(sc, load_profile("linux"))
    (_, _, lines), = topo.schedule_steps(6)
    assert [ln.split(" netem ")[0] for ln in lines] == [
        "qdisc change dev b root",
        "qdisc change dev r0 parent 1:1 handle 10:",
        "qdisc change dev r0 parent 1:2 handle 20:"]
    assert "distribution satnet-normal3" in lines[2]


class FakeTime:
    """A clock that moves only when waited on, or when tc 'takes' time."""

    def __init__(self, tc_s=0.0, fail_at=None):
        self.now, self.waits, self.applied = 100.0, [], []
        self.tc_s, self.fail_at = tc_s, fail_at

    def clock(self):
        return self.now

    def wait(self, seconds):
        self.waits.append(round(seconds, 6))
        self.now += seconds
        return False

    def apply(self, ns, lines):
        self.applied.append((round(self.now - 100, 6), ns, lines))
        self.now += self.tc_s
        if len(self.applied) == self.fail_at:
            raise TopologyError("tc -batch - failed (1): RTNETLINK answers: "
                                "Invalid argument")


STEPS = [(15, "r2", ["a"]), (15.3, "r2", ["b"]), (30, "r2", ["c"])]


def test_path_schedule_applies_each_step_when_due():
    ft = FakeTime(tc_s=0.1)
    sched = PathSchedule(STEPS, ft.apply, ft.clock, ft.wait)
    sched.run()
    assert ft.waits == [15, 0.2, 14.6]
    assert [t for t, _, _ in ft.applied] == [15, 15.3, 30]
    assert sched.result() == [
        {"due_s": t, "t_s": t, "ns": "r2", "commands": c, "result": "ok",
         "end_s": t + 0.1} for t, _, c in STEPS]


def test_path_schedule_late_steps_run_at_once_and_say_so():
    ft = FakeTime(tc_s=1.0)
    sched = PathSchedule(STEPS, ft.apply, ft.clock, ft.wait)
    sched.run()
    assert ft.waits == [15, 0, 13]
    assert [(e["due_s"], e["t_s"], e["end_s"]) for e in sched.result()] \
        == [(15, 15, 16), (15.3, 16, 17), (30, 30, 31)]


def test_a_failed_change_ends_the_schedule_and_fails_the_run():
    ft = FakeTime(tc_s=0.1, fail_at=2)
    sched = PathSchedule(STEPS, ft.apply, ft.clock, ft.wait)
    sched.run()
    assert len(ft.applied) == 2                     # step 3 never ran
    assert sched.log[1]["result"].startswith("failed: tc -batch")
    assert sched.log[1]["end_s"] == 15.4
    with pytest.raises(ScheduleError, match=r"due at 15\.300 s .* in r2 "
                       r"failed: .*Invalid argument"):
        sched.result()


def test_path_schedule_stops_when_the_run_ends():
    """A pending step never runs once the flows are over (or failed
    before they started), and stopping takes no time."""
    applied = []
    with PathSchedule([(60, "r2", ["x"])],
                      lambda ns, lines: applied.append(lines)) as sched:
        sched.start()
        time.sleep(0.002)
        t0 = time.monotonic()
    assert time.monotonic() - t0 < 1 and not sched.is_alive()
    assert applied == [] and sched.result() == []
    with PathSchedule(STEPS, lambda ns, lines: applied.append(lines)):
        pass                                        # never started
    assert applied == []


def test_together_calls_the_start_action_once_as_all_pass():
    started = threading.Event()
    calls = []

    def job(i, barrier):
        barrier.wait()
        return started.is_set()

    assert together(job, [{}] * 3,
                    action=lambda: (calls.append(1), started.set())) == \
        [True] * 3
    assert calls == [1]


def test_steering_mask_covers_every_cpu_in_sysfs_words():
    """sysfs takes a CPU mask as 32-bit hex words, high word first; one
    CPU has nothing to steer between."""
    assert rps_mask(1) == ""
    assert rps_mask(2) == "00000003"
    assert rps_mask(32) == "ffffffff"
    assert rps_mask(33) == "00000001,ffffffff"
    assert rps_files("b") == "/sys/class/net/b/queues/rx-0/rps_cpus"



def test_gateway_loss_moves_the_forward_drops_to_the_gateway():
    """bottleneck.gateway_loss: an epdn gateway drops the forward
    corruption and loss itself (recorded in v2 only, or by every mode for
    "congestion"); without one, the senders' access links lose the same
    share before the gateway.  Either way the satellite stage keeps none,
    and the ACK path keeps its own."""
    over = {"bottleneck.gateway_loss": "corrupt", "forward.loss": 0.01,
            "ack.ber": 1e-6}
    sc = load_scenario("geo", over)
    p = 1 - (1 - sc.fwd.per) * (1 - 0.01)
    assert sc.gateway_drop() == pytest.approx(p)
    topo = Topology(sc, load_profile("linux"))
    fwd = topo.satellite_stages(sc.path_forward(), sc.ack)
    assert not any("corrupt" in ln or "loss" in ln
                   for ln in fwd if " r0 " in ln)
    assert "corrupt" in [ln for ln in fwd if " dev b " in ln][0]
    assert topo.sender_loss() == ["loss", "random", "%.6f%%" % (p * 100)]
    assert "corrupt" not in topo.bottleneck_lines("b")[-1]
    for mode, want in (("corrupt", "mode v3 corrupt"),
                       ("congestion", "mode v2 corrupt")):
        sc = load_scenario("geo", {**over, "bottleneck.gateway_loss": mode,
                                   "bottleneck.qdisc": "epdn",
                                   "bottleneck.epdn": "mode v3"})
        topo = Topology(sc, load_profile("linux"))
        line = topo.bottleneck_lines("b")[-1]
        assert line.endswith("%s %.6f%%" % (want, p * 100)), line
        assert line.count("mode") == 1 and topo.sender_loss() == []
    sc = load_scenario("geo", {"forward.loss": 0.01})
    assert sc.gateway_drop() == 0 and sc.path_forward() is sc.fwd


def test_senders_that_drop_send_one_segment_a_packet():
    """netem drops a GSO packet whole, and TCP hands its own qdisc GSO
    packets of two segments or more whatever the offloads: where the
    senders' links drop (gateway_loss without an epdn gateway), TCP must
    build one-segment packets, and nowhere else."""
    over = {"bottleneck.gateway_loss": "congestion", "forward.loss": 0.01}
    topo = Topology(load_scenario("geo", over), load_profile("linux"))
    assert topo.sender_segments() == ["link set dev eth0 gso_max_segs 1"]
    for over in ({**over, "bottleneck.qdisc": "epdn"},
                 {"forward.loss": 0.01}):
        assert Topology(load_scenario("geo", over),
                        load_profile("linux")).sender_segments() == []


@pytest.mark.parametrize("over, msg", [
    ({"bottleneck.gateway_loss": "before"}, "must be one of"),
    ({"bottleneck.gateway_loss": "corrupt",
      "forward.gemodel": {"p": 1, "r": 10}}, "not a Gilbert-Elliott"),
    ({"bottleneck.gateway_loss": "corrupt", "bottleneck.qdisc": "epdn",
      "bottleneck.epdn": "mode v2 corrupt 1%"}, "leave it out"),
])
def test_gateway_loss_rejects_what_it_cannot_place(over, msg):
    with pytest.raises(ScenarioError, match=msg):
        load_scenario("geo", over)


def test_a_later_key_at_its_default_leaves_identity_alone():
    """Records made before bottleneck.gateway_loss existed keep their
    identity; writing the default out changes nothing; another value
    does."""
    from satnet import experiment as xp
    exp = xp.load_experiment("s000-fig10")
    pt = exp.points("full")[0]
    before = xp.resolved(load_scenario("geo"))
    assert "gateway_loss" not in before
    assert xp.resolved(load_scenario(
        "geo", {"bottleneck.gateway_loss": "path"})) == before
    assert xp.resolved(load_scenario(
        "geo", {"bottleneck.gateway_loss": "corrupt"}))["gateway_loss"] == \
        "corrupt"
    assert "gateway_loss" not in pt.spec()["scenario"]
