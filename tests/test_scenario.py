# SPDX-License-Identifier: GPL-2.0
"""Scenario files: derived values and clear errors for bad input."""

import glob
import os
import re

import pytest

from satnet import dist
from satnet.scenario import (ScenarioError, ber_to_per, ge_loss,
                             load_profile, load_scenario)
from satnet.topo import Topology

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIOS = sorted(os.path.basename(p)[:-5] for p in
                   glob.glob(os.path.join(TOP, "scenarios/*.toml")))
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
    topo = Topology(sc, load_profile("linux"))
    return topo.satellite_lines("b", sc.ack, 0.0) + \
        topo.satellite_lines("r0", sc.fwd, 1.0)


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

