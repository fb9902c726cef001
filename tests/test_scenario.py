# SPDX-License-Identifier: GPL-2.0
"""Scenario files: derived values and clear errors for bad input."""

import glob
import os

import pytest

from satnet import dist
from satnet.scenario import (ScenarioError, ber_to_per, load_profile,
                             load_scenario)

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIOS = sorted(os.path.basename(p)[:-5] for p in
                   glob.glob(os.path.join(TOP, "scenarios/*.toml")))


def test_ber_to_per_matches_design_table():
    assert ber_to_per(1e-7, 1500) == pytest.approx(0.0012, abs=1e-4)
    assert ber_to_per(1e-6, 1500) == pytest.approx(0.0119, abs=1e-4)
    assert ber_to_per(1e-5, 1500) == pytest.approx(0.113, abs=1e-3)


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_scenario_loads_and_cites_its_seed(name):
    sc = load_scenario(name)
    assert "seed 00" in sc.source and "§" in sc.source
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
