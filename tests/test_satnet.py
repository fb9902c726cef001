# SPDX-License-Identifier: GPL-2.0
"""Unit tests of satnet: experiment files, the record schema, statistics,
the report (from records of real runs) and the command line.  No root."""

import contextlib
import csv
import functools
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import time

import pytest

from satnet import experiment as xp
from satnet import measure, record, report, runner, show, stats
from satnet.paths import EXPERIMENT_DIR, TOP

FIX = os.path.join(TOP, "tests", "fixtures")
FIX_EXP = os.path.join(FIX, "experiments")
FIX_RESULTS = os.path.join(FIX, "results")
FX_SWEEP = os.path.join(FIX_EXP, "fx-sweep.toml")


# ---- experiment files -------------------------------------------------------

def test_every_experiment_loads():
    """Every file in experiments/ names existing scenarios, variants and
    profiles, and every sweep value makes a valid scenario (checked on
    load, for every variant)."""
    exps = xp.load_all()
    assert len(exps) >= 20
    ids = [c.id for e in exps for c in e.claims]
    assert len(ids) == len(set(ids)), "claim ids must be unique"
    seeds = {e.source.split()[1] for e in exps if "quick" in e.modes}
    assert {"000", "001", "002", "003", "004"} <= seeds, seeds


def test_every_variant_loads():
    vs = xp.load_variants()
    assert {"cubic", "bbr", "hybla", "westwood", "reno", "tcp-r",
            "rn-epdnv2", "rn-epdnv3", "rn-es", "esack", "sack",
            "dsack-r", "rr-tcp"} <= set(vs)


def write_exp(tmp_path, text, name="t1"):
    p = tmp_path / (name + ".toml")
    p.write_text(text)
    return str(p)


BASE = '''name = "t1"
title = "t"
source = "seed 000 §1"
scenario = "geo"
variants = ["reno", "tcp-r"]
[sweep]
key = "forward.reorder.mean_ms"
values = [300, 600]
[full]
reps = 2
duration_s = 10
'''


@pytest.mark.parametrize("extra, words", [
    ('colour = "red"\n', "unknown key"),
    ('[quick]\nreps = 0\nduration_s = 5\n', "reps"),
    ('[quick]\nreps = 1\nduration_s = 5\nvalues = [450]\n',
     "not a sweep value"),
    ('[[claim]]\nid = "c"\ntext = "x"\nat = { "forward.reorder.mean_ms" '
     '= 450 }\nbetter = { a = "reno", b = "tcp-r" }\n', "not a sweep point"),
    ('[[claim]]\nid = "c"\ntext = "x"\nbetter = { a = "bbr", b = "reno" }\n',
     "not in the experiment"),
    ('[[claim]]\nid = "c"\ntext = "x"\n', "exactly one of"),
    ('[[claim]]\nid = "c"\ntext = "x"\ntrend = { a = "reno", from = '
     '{ "forward.reorder.mean_ms" = 300 }, to = { "forward.reorder.mean_ms" '
     '= 450 }, grows = true }\n', "to forward.reorder.mean_ms=450 is not"),
    ('[[claim]]\nid = "c"\ntext = "x"\ntrend = { a = "reno", from = '
     '{ "forward.reorder.mean_ms" = 300 }, to = { "forward.reorder.mean_ms" '
     '= 600 } }\n', "grows = true or falls = true"),
    ('[[claim]]\nid = "c"\ntext = "x"\ntrend = { a = "reno", from = '
     '{ "forward.reorder.mean_ms" = 300 }, to = { "forward.reorder.mean_ms" '
     '= 600 }, grows = false }\n', "grows = true or falls = true"),
    ('[[claim]]\nid = "c"\ntext = "x"\nsteady = { a = "reno", from = '
     '{ "forward.reorder.mean_ms" = 300 }, to = { "forward.reorder.mean_ms" '
     '= 600 }, falls = true }\n', "steady needs a, from and to"),
    ('[[claim]]\nid = "c"\ntext = "x"\nsteady = { a = "reno", b = "reno", '
     'from = { "forward.reorder.mean_ms" = 300 }, to = { '
     '"forward.reorder.mean_ms" = 600 } }\n', "not a"),
    ('[[claim]]\nid = "c"\ntext = "x"\nsteady = { a = "reno", from = '
     '{ "forward.reorder.mean_ms" = 300 }, to = { "forward.reorder.mean_ms" '
     '= 300 } }\n', "two different points"),
    ('[[claim]]\nid = "c"\ntext = "x"\nat = { "forward.reorder.mean_ms" '
     '= 300 }\nsteady = { a = "reno", from = { "forward.reorder.mean_ms" = '
     '300 }, to = { "forward.reorder.mean_ms" = 600 } }\n', "not at"),
    ('[[claim]]\nid = "c"\ntext = "x"\nnear_zero = { a = "reno" }\n',
     "a metric that counts events"),
    ('[[claim]]\nid = "c"\ntext = "x"\nmetric = "timeouts"\nnear_zero = '
     '{ a = "reno", b = "tcp-r" }\n', "near_zero needs a"),
])
def test_bad_experiment_is_refused(tmp_path, extra, words):
    with pytest.raises(xp.ExperimentError, match=words):
        xp.load_experiment(write_exp(tmp_path, BASE + extra))


def test_bad_variant_and_scenario_key_are_refused(tmp_path):
    with pytest.raises(xp.ExperimentError, match="unknown variant"):
        xp.load_experiment(write_exp(tmp_path, BASE.replace(
            '"tcp-r"]', '"tcp-x"]')))
    with pytest.raises(xp.ExperimentError, match="t1"):
        xp.load_experiment(write_exp(tmp_path, BASE.replace(
            "forward.reorder.mean_ms", "forward.colour")))


def test_points_expand_rep_major_with_overrides(tmp_path):
    exp = xp.load_experiment(write_exp(tmp_path, BASE))
    pts = exp.points("full")
    assert len(pts) == 2 * 2 * 2
    assert [p.rep for p in pts] == [0] * 4 + [1] * 4
    r = [p for p in pts if p.variant == "tcp-r"][0]
    assert r.relpath() == os.path.join(
        "t1", "full", "tcp-r", "forward.reorder.mean_ms=300-rep0.json")
    sc = exp.scenario_for("tcp-r", r.point, 10)
    assert sc.qdisc == "epdn" and sc.epdn_domain       # the variant's set
    assert sc.fwd.reorder.mean_ms == 300               # the sweep wins
    assert sc.duration_s == 10
    assert exp.profile_for("reno", sc) == "linux"


def test_mix_points_and_params(tmp_path):
    text = BASE.replace('variants = ["reno", "tcp-r"]',
                        'mix = { "tcp-r" = 2, "rn-epdnv3" = 1 }')
    exp = xp.load_experiment(write_exp(tmp_path, text))
    pts = exp.points("full")
    assert {p.variant for p in pts} == {"mix"}
    assert exp.flows("mix") == ["tcp-r", "tcp-r", "rn-epdnv3"]
    assert pts[0].params() == {"tcp_rn": {"es": 0, "rtt0_ms": 0},
                               "tcp_r": {"rtt0_ms": 0}}
    assert exp.scenario_for("mix", {}, 10).pairs == 3


def test_parse_point(tmp_path):
    exp = xp.load_experiment(write_exp(tmp_path, BASE))
    assert xp.parse_point(["forward.reorder.mean_ms=600", "variant=reno"],
                          exp) == ({"forward.reorder.mean_ms": [600]},
                                   ["reno"])
    assert xp.parse_point(["forward.reorder.mean_ms=600", "variant=reno",
                           "forward.reorder.mean_ms=1200", "variant=tcp-r"],
                          exp) == ({"forward.reorder.mean_ms": [600, 1200]},
                                   ["reno", "tcp-r"])
    with pytest.raises(xp.ExperimentError, match="sweep key"):
        xp.parse_point(["forward.ber=1"], exp)
    with pytest.raises(xp.ExperimentError, match="no variant"):
        xp.parse_point(["variant=bbr"], exp)


# ---- statistics --------------------------------------------------------------

def test_estimate_matches_student_t():
    e = stats.Estimate([1.0, 2.0, 3.0, 4.0])
    # mean 2.5, sd 1.2910, sem 0.6455, t(0.975, 3) = 3.1824
    assert e.mean == 2.5 and e.n == 4
    assert abs(e.half - 2.0542) < 1e-3
    one = stats.Estimate([5.0, None])
    assert one.n == 1 and one.half is None and "n=1" in one.fmt()
    assert stats.Estimate([]).fmt() == "–"


def ratio(value, lo, hi):
    """A Ratio with a given CI, for the verdict rules alone."""
    r = stats.Ratio(stats.Estimate([]), stats.Estimate([]))
    r.value, r.lo, r.hi = value, lo, hi
    return r


def test_ratio_ci_is_on_the_log_scale():
    a, b = stats.Estimate([3.0, 3.2, 2.8]), stats.Estimate([1.0, 1.1, 0.9])
    r = stats.Ratio(a, b)
    assert abs(r.value - 3.0) < 1e-9 and r.lo < 3 < r.hi
    # symmetric in log: value / lo == hi / value
    assert abs(r.value / r.lo - r.hi / r.value) < 1e-9
    inv = r.inverse()
    assert abs(inv.lo - 1 / r.hi) < 1e-12 and abs(inv.hi - 1 / r.lo) < 1e-12
    # a noisy numerator whose linear CI went negative stays above zero
    wild = stats.Ratio(stats.Estimate([0.5, 15.0]), stats.Estimate([1.0, 1.0]))
    assert wild.lo > 0 and wild.hi > wild.value > wild.lo


def test_pooled_ratio_weighs_each_cell_by_its_precision():
    """The fixed-effect mean of the cells' log ratios, weights 1 / var;
    its interval narrower than any cell's; Cochran's Q flags cells that
    disagree; a cell with no spread is left out, not weighed at
    infinity."""
    E = stats.Estimate

    def verdict(pool):
        return stats.judge_same(pool, True, pool.runs).verdict

    same = [(E([1.0, 1.1, 0.9, 1.0, 1.05]), E([1.0, 1.1, 0.9, 1.0, 1.05]))
            for _ in range(3)]
    p = stats.Pooled(same)
    assert p.k == 3 and math.isclose(p.value, 1.0)
    assert verdict(p) == "reproduced" and p.q < 1e-9 and p.p > 0.99
    one = stats.Ratio(same[0][1], same[0][0])
    assert p.hi - p.lo < one.hi - one.lo
    # by hand: two cells, ratios 1.2 and 0.9, the first four times as
    # precise; the mean of the logs weighted 4:1
    a1, b1 = E([10, 11, 9]), E([12, 13.2, 10.8])
    a2, b2 = E([10, 12, 8]), E([9, 10.8, 7.2])
    p = stats.Pooled([(a1, b1), (a2, b2)])
    w1 = 1 / (2 * (a1.sd / a1.mean) ** 2 / 3)
    w2 = 1 / (2 * (a2.sd / a2.mean) ** 2 / 3)
    assert math.isclose(w1 / w2, 4)
    want = (w1 * math.log(1.2) + w2 * math.log(0.9)) / (w1 + w2)
    assert math.isclose(math.log(p.value), want)
    half = stats._t(4) / math.sqrt(w1 + w2)
    assert math.isclose(math.log(p.hi) - math.log(p.value), half)
    # two cells far apart beyond their noise
    tight = [1.0, 1.01, 0.99, 1.0, 1.0]
    far = stats.Pooled([(E(tight), E(tight)),
                        (E(tight), E([2 * x for x in tight]))])
    assert far.p < 0.001
    assert verdict(stats.Pooled([(E(tight), E([1.5 * x for x in tight]))])) \
        == "contradicted"
    # fewer than 3 runs an arm in a cell: a pilot, as a cell alone is
    assert verdict(stats.Pooled([(E(tight[:2]), E(tight[:2]))])) == "pilot"
    flat = stats.Pooled([(E([1.0, 1.0]), E([1.0, 1.0]))] + same[:1])
    assert (flat.k, flat.left_out) == (1, 1)
    assert verdict(stats.Pooled([])) == "no data"
    assert stats.Pooled([]).fmt() == "–"


def test_ratio_ci_uses_welch_degrees_of_freedom():
    """Equal relative variances and n: df = 2(n - 1)."""
    a, b = stats.Estimate([9.0, 11.0]), stats.Estimate([0.9, 1.1])
    r = stats.Ratio(a, b)
    # relative se^2 per arm: (1.4142/10)^2 / 2 = 0.01; df = 2
    w = 4.3027 * (0.02 ** 0.5)
    assert abs(r.hi - 10 * math.exp(w)) < 1e-2
    assert abs(r.lo - 10 * math.exp(-w)) < 1e-3


def test_no_ratio_of_a_zero_or_negative_mean():
    assert stats.Ratio(stats.Estimate([0.0, 0.0]),
                       stats.Estimate([1.0, 2.0])).value is None
    assert stats.Ratio(stats.Estimate([-1.0, -2.0]),
                       stats.Estimate([1.0, 2.0])).diff is None
    assert stats.judge_better(stats.Ratio(stats.Estimate([1.0]),
                                          stats.Estimate([0.0]))).verdict \
        == "pilot"
    assert stats.judge_better(stats.Ratio(stats.Estimate([]),
                                          stats.Estimate([0.0]))).verdict \
        == "no data"


ZERO, FEW, MANY = [0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [10.0, 11.0, 10.5]


@pytest.mark.parametrize("rule,a,b,verdict", [
    # seed: "A has fewer timeouts than B" (A / B = 1/3, or lower)
    ("factor", ZERO, MANY, "direction reproduced, magnitude open"),
    ("factor", MANY, ZERO, "contradicted"),
    ("factor", ZERO, FEW, "inconclusive"),
    ("factor", ZERO, ZERO, "effect absent"),
    ("better", MANY, ZERO, "reproduced"),
    ("better", ZERO, MANY, "contradicted"),
    ("better", ZERO, ZERO, "effect absent"),
    ("at_least", MANY, ZERO, "reproduced"),
    ("at_least", ZERO, ZERO, "reproduced"),
    ("at_least", ZERO, MANY, "contradicted"),
    ("at_least", ZERO, FEW, "inconclusive"),
    ("same", ZERO, ZERO, "reproduced"),
    ("same", ZERO, MANY, "contradicted"),
    ("same", FEW, ZERO, "inconclusive"),
])
def test_a_count_of_zero_is_judged_by_the_difference(rule, a, b, verdict):
    """rn-epdnv2 10.5 timeouts per run against rr-tcp's 0 contradicts
    "RN-TCP times out less"; a ratio to zero gives no size, so the
    magnitude stays open."""
    r = stats.Ratio(stats.Estimate(a), stats.Estimate(b))
    j = stats.judge_factor(r, 1 / 3) if rule == "factor" else \
        getattr(stats, "judge_" + rule)(r)
    assert j.verdict == verdict, (j, r.fmt())
    if rule == "factor":
        assert j.magnitude == "open", j
    assert stats.judge_factor(r, 1 / 3, runs=2).verdict == "pilot"


def test_a_difference_ci_is_welch():
    d = stats.Ratio(stats.Estimate(MANY), stats.Estimate(ZERO)).diff
    # only A varies: mean 10.5, SD 0.5, n 3, df 2
    assert abs(d.value - 10.5) < 1e-9
    assert abs(d.hi - 10.5 - 4.3027 * 0.5 / 3 ** 0.5) < 1e-3
    inv = stats.Ratio(stats.Estimate(ZERO), stats.Estimate(MANY)).diff
    assert (inv.lo, inv.hi) == pytest.approx((-d.hi, -d.lo))


def spread(mean, n=2):
    """n = 2 runs at mean (1 -+ 0.1): relative standard error squared
    (0.1 * sqrt 2)^2 / 2 = 0.01."""
    return stats.Estimate([mean * 0.9, mean * 1.1][:n])


def test_trend_is_a_ratio_of_ratios_with_four_terms():
    """(A / B at to) / (A / B at from) = (10 / 5) / (4 / 8) = 4.  Four
    relative SE^2 of 0.01 add to 0.04; Welch-Satterthwaite over four
    terms of n = 2: df = 0.04^2 / (4 * 0.01^2 / 1) = 4, t(0.975, 4) =
    2.7764, so the CI is 4 exp(-+2.7764 * 0.2) = [2.296, 6.970]."""
    r = stats.Trend(spread(10), spread(5), spread(4), spread(8))
    assert r.value == pytest.approx(4.0)
    assert (r.lo, r.hi) == pytest.approx((2.2956, 6.9698), abs=1e-3)
    # falls: the interval inverted
    inv = r.inverse()
    assert (inv.value, inv.lo, inv.hi) == pytest.approx(
        (0.25, 1 / r.hi, 1 / r.lo))


def test_trend_degrees_of_freedom_weigh_each_term():
    """A_to of 3 runs 9, 10, 11 (relative SE^2 0.01 / 3), the others as
    above: sum 0.1 / 3, df = (0.1 / 3)^2 / ((0.01 / 3)^2 / 2 + 3 * 0.01^2)
    = 40 / 11; a point whose runs do not vary adds nothing, so a Trend
    against two constant arms is the Ratio of the other two."""
    r = stats.Trend(stats.Estimate([9.0, 10.0, 11.0]), spread(5), spread(4),
                    spread(4))
    w = stats._t(40 / 11) * (0.1 / 3) ** 0.5
    assert (r.lo, r.hi) == pytest.approx((2 * math.exp(-w),
                                          2 * math.exp(w)))
    flat = stats.Estimate([4.0, 4.0])
    t, plain = stats.Trend(spread(10), spread(5), flat, flat), \
        stats.Ratio(spread(10), spread(5))
    assert (t.value, t.lo, t.hi) == pytest.approx(
        (plain.value, plain.lo, plain.hi))


def test_trend_with_a_mean_of_zero_has_no_value():
    three = stats.Estimate([1.0, 1.1, 0.9])
    r = stats.Trend(three, three, stats.Estimate(ZERO), three)
    assert r.value is None and r.diff is None and r.zero
    assert r.fmt() == "–"
    assert stats.judge_better(r).verdict == "inconclusive"
    assert stats.judge_same(r).verdict == "inconclusive"
    assert stats.judge_better(r, runs=2).verdict == "pilot"
    assert stats.judge_better(r, full=False).verdict == "pilot"
    # A against itself is a Ratio: a mean of 0 gives the difference
    single = stats.Ratio(stats.Estimate(MANY), stats.Estimate(ZERO))
    assert single.diff and stats.judge_better(single).verdict == \
        "reproduced"


def test_runs_to_decide_is_where_the_interval_leaves_the_open_band():
    """An inconclusive ratio with the spread kept: the count returned
    decides it and one run fewer does not, for each kind of rule."""
    a, b = stats.Estimate([1.05, 1.2, 1.35]), stats.Estimate([1.0, 1.1,
                                                              0.9])
    r = stats.Ratio(a, b)
    cases = [(stats.judge_better, {}),
             (stats.judge_at_least, {"margin": 1.05}),
             (stats.judge_same, {"margin": 1.3}),
             (functools.partial(stats.judge_factor, seed=1.2),
              {"margin": 1.1})]
    for rule, kw in cases:
        assert rule(r, full=True, runs=3, **kw).verdict == "inconclusive"
        n = stats.runs_to_decide(rule, r, **kw)
        assert n is not None and 3 < n < stats.RUNS_LIMIT, rule
        for m, want in ((n - 1, True), (n, False)):
            g = stats.Ratio(stats.Estimate.like(a, m),
                            stats.Estimate.like(b, m))
            assert (rule(g, full=True, runs=m, **kw).verdict ==
                    "inconclusive") is want, (rule, m)
    # a path's pool of cells, grown cell by cell
    pool = stats.Pooled([(b, a), (b, stats.Estimate([1.1, 1.25, 1.25]))])
    assert stats.judge_same(pool, True, 3).verdict == "inconclusive"
    n = stats.runs_to_decide(stats.judge_same, pool)
    verdicts = [stats.judge_same(pool.grown(m), True, m).verdict
                for m in (n - 1, n)]
    assert verdicts[0] == "inconclusive" != verdicts[1], (n, verdicts)
    # a CI at 99 % needs more runs than one at 95 %
    wide = stats.Ratio(a, b, stats.holm_level(5))
    assert stats.runs_to_decide(stats.judge_better, wide) > \
        stats.runs_to_decide(stats.judge_better, r)


def test_runs_to_decide_gives_up_on_a_boundary_and_without_spread():
    # non-inferiority at exactly 1 / margin: no run count leaves it
    b = stats.Estimate([1.0, 1.1, 0.9])
    on = stats.Estimate([v / 1.1 for v in b.values])
    assert stats.runs_to_decide(stats.judge_at_least,
                                stats.Ratio(on, b)) is None
    assert stats.runs_to_decide(stats.judge_better, stats.Ratio(
        stats.Estimate([2.0]), b)) is None
    three = stats.Estimate([1.0, 1.1, 0.9])
    assert stats.runs_to_decide(stats.judge_better, stats.Trend(
        three, three, stats.Estimate(ZERO), three)) is None


FLOOR = stats.COUNT_MARGIN


@pytest.mark.parametrize("rule,a,b,floor,verdict", [
    # a third of a timeout a run each: no ratio decides it, the
    # difference does
    ("better", FEW, [1.0, 0.0, 0.0], None, "inconclusive"),
    ("better", FEW, [1.0, 0.0, 0.0], FLOOR, "effect absent"),
    ("same", FEW, [1.0, 0.0, 0.0], FLOOR, "reproduced"),
    ("factor", FEW, [1.0, 0.0, 0.0], FLOOR, "effect absent"),
    # one a run against none: the difference's CI reaches past the floor
    ("better", [0.0, 1.0, 2.0], ZERO, FLOOR, "inconclusive"),
    ("better", [0.0, 1.0, 0.0], ZERO, FLOOR, "effect absent"),
    ("same", [0.0, 1.0, 0.0], ZERO, FLOOR, "reproduced"),
    # large counts are judged by their ratio, not their difference
    ("better", [10.0, 20.0, 30.0], [12.0, 25.0, 35.0], FLOOR,
     "inconclusive"),
    ("better", MANY, [1.0, 2.0, 1.5], FLOOR, "reproduced"),
    ("same", [10.0, 10.5, 11.0], [10.2, 10.6, 11.2], FLOOR, "reproduced"),
    # at least: never decided by the floor
    ("at_least", FEW, [1.0, 0.0, 0.0], FLOOR, "inconclusive"),
])
def test_counts_a_run_apart_by_less_than_the_floor_are_the_same(
        rule, a, b, floor, verdict):
    r = stats.Ratio(stats.Estimate(a), stats.Estimate(b))
    f = functools.partial(stats.judge_factor, seed=1 / 3) \
        if rule == "factor" else getattr(stats, "judge_" + rule)
    j = f(r, floor=floor)
    assert j.verdict == verdict, (j, r.fmt())
    # the floor, not the ratio, made them the same
    near = floor and (j.verdict == "effect absent" or rule == "same") and \
        not stats._no_effect(r, stats.EQUIV_MARGIN)
    assert bool(j.near) == bool(near), j.near
    if j.near:
        assert "less than 2 a run" in stats.decide_note(j)
        lo, hi = j.near[1].lo, j.near[1].hi
        assert -floor <= lo <= hi <= floor


def test_a_count_of_zero_against_one_is_decided_by_more_runs():
    """tcp-r's 0 timeouts a run against rr-tcp's 0, 1 and 2: inconclusive
    at 3 runs; with the spread kept, the difference leaves zero at the
    count runs_to_decide gives, and not one run before."""
    a, b = stats.Estimate([0.0, 1.0, 2.0]), stats.Estimate(ZERO)
    r = stats.Ratio(a, b)
    rule = functools.partial(stats.judge_better, floor=FLOOR)
    assert rule(r).verdict == "inconclusive"
    n = stats.runs_to_decide(rule, r)
    assert n is not None and 3 < n < stats.RUNS_LIMIT
    for m, want in ((n - 1, "inconclusive"), (n, "reproduced")):
        g = stats.Ratio(stats.Estimate.like(a, m), stats.Estimate.like(b, m))
        assert rule(g, runs=m).verdict == want, m


def test_a_trend_of_two_ratios_has_no_floor():
    t = stats.Trend(stats.Estimate(FEW), stats.Estimate([1.0, 0.0, 0.0]),
                    stats.Estimate(FEW), stats.Estimate([0.0, 0.0, 1.0]))
    assert t.count_diff() is None
    assert stats.judge_better(t, floor=FLOOR).verdict == "inconclusive"


@pytest.mark.parametrize("r,seed,verdict,direction,magnitude", [
    # the issue's cases: 1.84x is not 3x; 0.99 refutes 1.45
    ((1.84, 1.17, 2.50), 3.0, "direction reproduced, magnitude open",
     "reproduced", "open"),
    ((0.99, 0.80, 1.17), 1.45, "seed's magnitude refuted", "open",
     "refuted"),
    ((3.0, 2.0, 4.5), 3.0, "reproduced", "reproduced", "reproduced"),
    ((1.2, 1.1, 1.3), 3.0, "direction only", "reproduced", "refuted"),
    ((0.5, 0.4, 0.6), 3.0, "contradicted", "contradicted", "refuted"),
    ((1.0, 0.95, 1.05), 3.0, "effect absent", "open", "refuted"),
    ((1.3, 0.9, 2.0), 3.0, "inconclusive", "open", "open"),
    # a seed factor below 1 (A lower) is judged the other way round
    ((0.33, 0.25, 0.45), 1 / 3, "reproduced", "reproduced", "reproduced"),
    ((2.0, 1.5, 2.5), 0.5, "contradicted", "contradicted", "refuted"),
])
def test_factor_verdicts(r, seed, verdict, direction, magnitude):
    j = stats.judge_factor(ratio(*r), seed)
    assert (j.verdict, j.direction, j.magnitude) == \
        (verdict, direction, magnitude)


@pytest.mark.parametrize("r,verdict,magnitude", [
    # "more than a two fold improvement": a bound from below, s^0.5 up
    ((9.84, 8.93, 10.85), "reproduced", "reproduced"),
    ((1.6, 1.45, 1.75), "reproduced", "reproduced"),
    ((1.5, 1.2, 1.8), "direction reproduced, magnitude open", "open"),
    ((1.2, 1.1, 1.3), "direction only", "refuted"),
    ((0.5, 0.4, 0.6), "contradicted", "refuted"),
])
def test_more_than_a_factor_has_no_upper_end(r, verdict, magnitude):
    j = stats.judge_factor(ratio(*r), 2.0, more=True)
    assert (j.verdict, j.magnitude) == (verdict, magnitude)
    # the same ratio against "two fold" itself
    if r[1] > 2 ** 1.5:
        assert stats.judge_factor(ratio(*r), 2.0).verdict == "direction only"


@pytest.mark.parametrize("spec", [
    'num = "tcp-r", den = "reno", seed = 2.0',
    'num = "tcp-r", den = [], seed = 2.0',
    'num = "tcp-r", den = ["reno"]',
    'num = "tcp-r", den = ["reno"], seed = 1',
    'num = "tcp-r", den = ["reno"], seed = true',
    'num = "tcp-r", den = ["reno"], seed = 0.5, more = true',
    'num = "tcp-r", den = ["reno"], seed = 2.0, more = 1',
    'num = "tcp-r", den = ["reno"], seed = 2.0, size = 2'])
def test_a_ratio_claim_needs_its_factor(tmp_path, spec):
    text = BASE + '[[claim]]\nid = "c"\ntext = "x"\nratio = { %s }\n' % spec
    with pytest.raises(xp.ExperimentError, match="ratio needs num"):
        xp.load_experiment(write_exp(tmp_path, text))


def test_a_wider_ci_never_reproduces_more_easily():
    narrow = stats.judge_factor(ratio(2.9, 2.0, 4.0), 3.0).verdict
    wide = stats.judge_factor(ratio(2.9, 1.1, 8.0), 3.0).verdict
    assert narrow == "reproduced" and wide != "reproduced"


def test_pilot_below_three_runs_or_full_length():
    r = ratio(3.0, 2.0, 4.5)
    assert stats.judge_factor(r, 3.0, runs=2).verdict == "pilot"
    assert stats.judge_factor(r, 3.0, full=False).verdict == "pilot"
    assert stats.judge_better(r, runs=2).verdict == "pilot"
    one = stats.Ratio(stats.Estimate([3.0]), stats.Estimate([1.0, 1.1]))
    assert stats.judge_better(one, runs=3).verdict == "pilot"


@pytest.mark.parametrize("rule,r,verdict", [
    ("judge_better", (1.5, 1.2, 1.9), "reproduced"),
    ("judge_better", (0.7, 0.6, 0.8), "contradicted"),
    ("judge_better", (1.01, 0.95, 1.08), "effect absent"),
    ("judge_better", (1.2, 0.8, 1.8), "inconclusive"),
    # non-inferiority with margin 1.1: the lower end must reach 0.909
    ("judge_at_least", (0.98, 0.92, 1.05), "reproduced"),
    ("judge_at_least", (0.98, 0.85, 1.05), "inconclusive"),
    ("judge_at_least", (0.8, 0.7, 0.9), "contradicted"),
    # equivalence with margin 1.1
    ("judge_same", (1.02, 0.95, 1.08), "reproduced"),
    ("judge_same", (1.02, 0.85, 1.2), "inconclusive"),
    ("judge_same", (1.5, 1.2, 1.9), "contradicted"),
])
def test_direction_non_inferiority_and_equivalence(rule, r, verdict):
    assert getattr(stats, rule)(ratio(*r)).verdict == verdict


class SweepRuns:
    """A stand-in for report.Results: the runs' metric per (variant, sweep
    value) of an experiment on BASE's sweep."""

    def __init__(self, runs, mode="full"):
        self.data, self.mode, self.recs = runs, mode, []

    def runs(self, variant, point, recs=None):
        return self.data.get((variant, point["forward.reorder.mean_ms"]),
                             [])

    def estimate(self, variant, point, metric=None, recs=None):
        return stats.Estimate(self.runs(variant, point))


def across_claim(tmp_path, form, spec, metric="goodput"):
    text = BASE + ('[[claim]]\nid = "c"\ntext = "x"\nmetric = "%s"\n'
                   '%s = { %s, from = { "forward.reorder.mean_ms" = 300 }, '
                   'to = { "forward.reorder.mean_ms" = 600 } }\n' %
                   (metric, form, spec))
    return xp.load_experiment(write_exp(tmp_path, text)).claims[0]


ONE = [1.0, 1.02, 0.98]
TWO = [2.0, 2.04, 1.96]
WILD = [1.0, 1.6, 0.4]
FOUR = [4 * x for x in ONE]


@pytest.mark.parametrize("form,b,sense,tcpr,verdict", [
    # tcp-r alone: (its runs at 300, at 600)
    ("trend", None, "grows", (ONE, TWO), "reproduced"),
    ("trend", None, "falls", (TWO, ONE), "reproduced"),
    ("trend", None, "grows", (TWO, ONE), "contradicted"),
    ("trend", None, "falls", (ONE, TWO), "contradicted"),
    ("trend", None, "grows", (ONE, ONE), "effect absent"),
    ("trend", None, "grows", (ONE, WILD), "inconclusive"),
    ("steady", None, None, (ONE, ONE), "reproduced"),
    ("steady", None, None, (ONE, TWO), "contradicted"),
    ("steady", None, None, (ONE, WILD), "inconclusive"),
    # tcp-r over reno, whose runs are ONE at 300 and TWO at 600
    ("trend", "reno", "grows", (ONE, FOUR), "reproduced"),
    ("trend", "reno", "falls", (ONE, FOUR), "contradicted"),
    ("trend", "reno", "grows", (ONE, TWO), "effect absent"),
    ("trend", "reno", "falls", (ONE, ONE), "reproduced"),
    ("trend", "reno", "grows", (ONE, WILD), "inconclusive"),
    ("steady", "reno", None, (ONE, TWO), "reproduced"),
    ("steady", "reno", None, (ONE, ONE), "contradicted"),
    ("steady", "reno", None, (WILD, TWO), "inconclusive"),
])
def test_across_the_sweep_verdicts(tmp_path, form, b, sense, tcpr, verdict):
    """A trend is judged as `better` in the direction it names, steady as
    `same`: on A at `to` / A at `from`, or with B on the ratio of
    ratios."""
    spec = 'a = "tcp-r"' + (', b = "%s"' % b if b else "") + \
        (", %s = true" % sense if sense else "")
    c = across_claim(tmp_path, form, spec)
    data = {("tcp-r", 300): tcpr[0], ("tcp-r", 600): tcpr[1],
            ("reno", 300): ONE, ("reno", 600): TWO}
    ours, j = report.judge(c, SweepRuns(data))
    assert j.verdict == verdict, ours
    assert "at 300" in ours and "at 600" in ours, ours


@pytest.mark.parametrize("sense,seed,tcpr,verdict,size", [
    # tcp-r's runs at 300, at 600; the seed's factor from 300 to 600
    ("falls", 0.5, (TWO, ONE), "reproduced", "reproduced"),
    ("falls", 0.82, (TWO, ONE), "direction only", "refuted"),
    ("falls", 0.82, (ONE, TWO), "contradicted", "refuted"),
    ("grows", 2.0, (ONE, [1.6, 2.6, 2.0]),
     "direction reproduced, magnitude open", "open"),
    ("grows", 2.0, (ONE, FOUR), "direction only", "refuted"),
    ("grows", 4.0, (ONE, FOUR), "reproduced", "reproduced"),
    ("grows", 2.0, (ONE, ONE), "effect absent", "refuted"),
])
def test_a_trend_with_the_seeds_factor_is_judged_as_a_ratio(
        tmp_path, sense, seed, tcpr, verdict, size):
    """A table's two rows (37 834 packets at 0 %, 31 177 at 0.1 %) give
    the fall its size: the direction as for `trend`, the magnitude
    against the band around the seed's factor, as for `ratio`."""
    c = across_claim(tmp_path, "trend", 'a = "tcp-r", %s = true, '
                     'seed = %g' % (sense, seed))
    ours, j = report.judge(c, SweepRuns({("tcp-r", 300): tcpr[0],
                                         ("tcp-r", 600): tcpr[1]}))
    assert (j.verdict, j.magnitude) == (verdict, size), ours
    assert "%g×" % seed in report.seed_value(c)


@pytest.mark.parametrize("spec", [
    'grows = true, seed = 0.5', 'falls = true, seed = 2',
    'falls = true, seed = 1', 'grows = true, seed = true',
    'grows = true, seed = "2"'])
def test_a_trends_seed_says_which_way_it_goes(tmp_path, spec):
    with pytest.raises(xp.ExperimentError, match="a trend's seed"):
        across_claim(tmp_path, "trend", 'a = "tcp-r", ' + spec)


def test_an_inconclusive_claim_says_how_many_runs_would_decide_it(tmp_path):
    c = across_claim(tmp_path, "trend", 'a = "tcp-r", grows = true')
    ours, j = report.judge(c, SweepRuns({("tcp-r", 300): ONE,
                                         ("tcp-r", 600): WILD}))
    want = stats.runs_to_decide(stats.judge_better, stats.Ratio(
        stats.Estimate(WILD), stats.Estimate(ONE)), margin=c.margin)
    assert j.verdict == "inconclusive" and j.decide == want > 3, ours
    assert "about %d runs an arm would decide it" % want in \
        stats.decide_note(j)
    assert stats.decide_note(stats.Judgement("reproduced")) == ""
    j.decide = None
    assert "would not decide it" in stats.decide_note(j)


def test_across_the_sweep_pilot_and_not_run(tmp_path):
    c = across_claim(tmp_path, "trend", 'a = "tcp-r", b = "reno", '
                     'grows = true')
    data = {("tcp-r", 300): ONE, ("tcp-r", 600): FOUR,
            ("reno", 300): ONE, ("reno", 600): ONE}
    assert report.judge(c, SweepRuns(data))[1].verdict == "reproduced"
    assert report.judge(c, SweepRuns(data, "quick"))[1].verdict == "pilot"
    two = dict(data)
    two["reno", 600] = ONE[:2]
    assert report.judge(c, SweepRuns(two))[1].verdict == "pilot"
    del data["reno", 300]       # one side has no runs at `from`
    assert report.judge(c, SweepRuns(data))[1].verdict == "not run"


def test_across_the_sweep_with_a_mean_of_zero(tmp_path):
    """A count of 0 at `from`: A alone is judged on the difference, a
    ratio of ratios has no value."""
    zero, some = [0.0, 0.0, 0.0], [3.0, 4.0, 5.0]
    data = {("tcp-r", 300): zero, ("tcp-r", 600): some,
            ("reno", 300): some, ("reno", 600): some}
    c = across_claim(tmp_path, "trend", 'a = "tcp-r", grows = true',
                     "timeouts")
    ours, j = report.judge(c, SweepRuns(data))
    assert j.verdict == "reproduced" and "difference tcp-r" in ours, ours
    c = across_claim(tmp_path, "trend", 'a = "tcp-r", b = "reno", '
                     'grows = true', "timeouts")
    ours, j = report.judge(c, SweepRuns(data))
    assert j.verdict == "inconclusive" and "a mean is 0" in ours, ours


def test_against_several_baselines_the_weakest_stands():
    js = [stats.Judgement("reproduced"), stats.Judgement("contradicted"),
          stats.Judgement("inconclusive")]
    assert stats.weakest(js).verdict == "contradicted"
    assert stats.weakest(js[:1] + [stats.Judgement("pilot")]).verdict == \
        "pilot"


def test_holm_level_widens_the_interval():
    assert stats.holm_level(1) == 0.95 and stats.holm_level(5) == 0.99
    a, b = stats.Estimate([3.0, 3.2, 2.8]), stats.Estimate([1.0, 1.1, 0.9])
    r95, r99 = stats.Ratio(a, b), stats.Ratio(a, b, stats.holm_level(5))
    assert r99.lo < r95.lo and r99.hi > r95.hi


def test_estimate_names_its_ci_half_width_and_sd():
    text = stats.Estimate([1.0, 2.0, 3.0, 4.0]).fmt()
    assert text == "2.5 (95 % CI ± 2.1, SD 1.3, n=4)"


# ---- records -------------------------------------------------------------------

def fixture_records():
    return record.load_all(FIX_RESULTS, warn=pytest.fail)


def test_fixture_records_follow_the_schema():
    recs = fixture_records()
    assert len(recs) == 8
    for r in recs:
        assert record.problems(r) == []
        m = r["meta"]
        assert m["git"]["commit"] and m["kernel"] and m["date"]
        assert "sysctl" in m and m["sysctl"]["sender"]
        if r["variant"] == "tcp-r":
            assert m["modules"]["tcp_r"]["srcversion"]
            assert m["modules"]["sch_epdn"]["parameters"] is not None
        f = r["flows"][0]
        assert f["goodput_bps"] > 0 and f["ss"] and f["counters"]
        assert r["bottleneck"]["after"] and r["host"]["nstat_receiver"]
        v = r["summary"]["variants"][r["variant"]]
        assert 0 < v["goodput_share"] < 1.1, v


def test_problems_names_what_is_wrong():
    assert record.problems([]) == ["not a JSON object"]
    rec = {k: None for k in record.REQUIRED}
    rec.update(schema="satnet.run/0", flows=[{}])
    assert "schema" in record.problems(rec)[0]
    del rec["summary"]
    assert record.problems(rec) == ["missing summary"]


def test_summarize_per_variant_of_a_mix():
    flows = [{"variant": "a", "goodput_bps": 2e6, "bytes": 1448 * 100,
              "counters": {"TcpOutSegs": 100, "TcpRetransSegs": 5}},
             {"variant": "a", "goodput_bps": 1e6, "bytes": 1448 * 50,
              "counters": {"TcpOutSegs": 100, "TcpRetransSegs": 15}},
             {"variant": "b", "goodput_bps": 1e6, "bytes": 1448 * 50,
              "counters": {"TcpOutSegs": 50, "TcpExtTCPTimeouts": 2,
                           "TcpExtTCPSackRecovery": 3,
                           "TcpExtTCPRenoRecovery": 1}}]
    flows[0]["counters"]["TcpExtTCPSackRecovery"] = 4
    s = record.summarize({"flows": flows}, 4e6, 1448)
    assert s["variants"]["a"]["goodput"] == 1.5
    assert s["variants"]["a"]["retrans_share"] == 0.1
    assert s["variants"]["a"]["packets"] == 75
    assert s["variants"]["b"]["timeouts"] == 2
    assert s["variants"]["a"]["recoveries"] == 2     # 4 and 0, per flow
    assert s["variants"]["b"]["recoveries"] == 4     # with SACK and without
    assert abs(s["jain"] - 16 / 18) < 1e-9


def test_recoveries_of_records_summarised_before_the_metric():
    """A record whose summary has no recoveries gets them from its flows'
    counters, so the stored runs can be judged on the metric."""
    recs = fixture_records()
    r = next(x for x in recs if len(x["flows"]) == 1)
    v = r["variant"]
    r["summary"]["variants"][v].pop("recoveries", None)
    r["flows"][0]["counters"].update(TcpExtTCPSackRecovery=5,
                                     TcpExtTCPRenoRecovery=2)
    assert report._metric(r, v, "recoveries") == 7
    r["summary"]["variants"][v]["recoveries"] = 3
    assert report._metric(r, v, "recoveries") == 3
    assert report._metric(r, "no-such-variant", "recoveries") is None


def test_ca_share_is_the_mean_over_flows_that_have_one():
    def flow(recovery):
        return {"ca": {"share": {"open": 1 - recovery,
                                 "recovery": recovery}}}
    assert record.ca_share([flow(0.2), flow(0.4), {}]) == pytest.approx(
        {"open": 0.7, "disorder": 0, "cwr": 0, "recovery": 0.3, "loss": 0})
    assert record.ca_share([{}, {"ca": {"samples": 1}}]) is None


def test_write_is_atomic_and_loadable(tmp_path):
    rec = fixture_records()[0]
    rec.pop("_path")
    path = str(tmp_path / "e" / "full" / "v" / "base-rep0.json")
    record.write(rec, path)
    assert os.listdir(os.path.dirname(path)) == ["base-rep0.json"]
    assert record.load(path)["flows"] == rec["flows"]


def test_load_all_skips_what_is_not_a_record(tmp_path):
    shutil.copytree(FIX_RESULTS, tmp_path / "r")
    bad = tmp_path / "r" / "fx-sweep" / "full" / "reno" / "junk-rep0.json"
    bad.write_text("{}")
    seen = []
    recs = record.load_all(str(tmp_path / "r"), warn=seen.append)
    assert len(recs) == 8 and len(seen) == 1 and "junk" in seen[0]


# ---- the report -------------------------------------------------------------------

def test_report_from_real_runs(tmp_path):
    md = tmp_path / "results.md"
    report.build(md=str(md), results=FIX_RESULTS, experiments=FIX_EXP,
                 command="pytest")
    text = md.read_text()
    assert "Built by `pytest` from 8 stored runs of the experiments" in text
    assert (tmp_path / "results" / "fx-sweep.png").stat().st_size > 1000
    rows = list(open(tmp_path / "results" / "fx-sweep.csv"))
    assert rows[0].strip() == "variant,x,n,mean,ci95,retrans_share," \
        "ca_open,ca_disorder,ca_cwr,ca_recovery,ca_loss"
    assert len(rows) == 1 + 4 and all(",2," in r for r in rows[1:])
    line = [x for x in text.splitlines() if x.startswith("| fx-ratio")][0]
    assert "n=2/2" in line and "Timeouts" in line
    assert "**not comparable**" in text and "the fixture has no such" in text
    assert "| seed 004 | 3 | 2 | 1 |" in text     # 2 pilot, 1 not comparable
    verdicts = [x for x in text.splitlines() if x.startswith("| fx-")]
    assert len(verdicts) == 3


def test_a_module_parameter_written_out_at_its_value_keeps_identity():
    """A stored run whose variant now writes out a parameter at the value
    the run's module had (meta.modules) is still that point; another
    value, or a parameter the module did not have, is not."""
    exp = xp.load_experiment(os.path.join(FIX_EXP, "fx-sweep.toml"))
    path = sorted(glob.glob(os.path.join(FIX_RESULTS, "fx-sweep", "full",
                                         "tcp-r", "*.json")))[0]
    rec = record.load(path)
    pt = xp.Point(exp, rec["mode"], rec["variant"], rec["point"],
                  rec["rep"], rec["meta"]["duration_s"])
    assert pt.ran_by(rec)
    var = exp.catalogue["tcp-r"]
    base = var.params
    try:
        for extra, same in (({"rack_steer": True}, True),
                            ({"rack_steer": 1}, True),
                            ({"rack_steer": False}, False),
                            ({"no_such_param": 3}, False)):
            var.params = {"tcp_r": {**base["tcp_r"], **extra}}
            assert pt.ran_by(rec) is same, extra
        var.params = {}
        assert not pt.ran_by(rec)        # rtt0_ms = 0: the module had none
    finally:
        var.params = base


def test_a_point_whose_senders_drop_says_they_drop_per_segment():
    """Records from before the senders' links dropped one segment at a
    time lost TCP's GSO pairs: their spec lacks the mark, so they are
    run again; the arms the gateway drops for keep their identity."""
    exp = xp.load_experiment("s000-fig8-nodelay")
    spec = {v: xp.Point(exp, "full", v, {"forward.loss": 0.01}, 0,
                        1000).spec() for v in ("sack-ns2", "tcp-r")}
    assert spec["sack-ns2"]["sender_loss"] == "per segment"
    assert "sender_loss" not in spec["tcp-r"]
    assert "sender_loss" not in xp.Point(exp, "full", "sack-ns2",
                                         {"forward.loss": 0}, 0,
                                         1000).spec()


def test_a_swept_run_length_is_the_length_a_point_runs():
    """Where the sweep is run.duration_s, each point runs for its value,
    not the mode's duration_s; a record that ran another length than its
    spec says is not that point's, and --duration cannot override it."""
    exp = xp.load_experiment("s002-fig2")
    pts = exp.points("full", 1, ["sack"], every=True)
    assert sorted(p.duration for p in pts) == [31, 62, 123]
    pt = [p for p in pts if p.point == {"run.duration_s": 31}][0]
    assert pt.spec()["scenario"]["duration_s"] == 31
    rec = {"meta": {"spec": json.loads(json.dumps(pt.spec())),
                    "modules": {}, "duration_s": 31}}
    assert pt.ran_by(rec)
    rec["meta"]["duration_s"] = 123
    assert not pt.ran_by(rec)
    rec.update(mode="full", variant="sack", point=pt.point, rep=0)
    assert not xp.current(exp, rec)
    with pytest.raises(xp.ExperimentError, match="sweeps run.duration_s"):
        exp.points("full", 1, ["sack"], 20, every=True)


def test_report_leaves_out_runs_of_another_spec(tmp_path):
    """A stored run of what the files no longer specify (its meta.spec
    differs: here the path's rate) judges nothing and is counted as
    superseded; `satnet run` would run its point again."""
    res = tmp_path / "r"
    shutil.copytree(FIX_RESULTS, res)
    path = glob.glob(str(res / "fx-sweep" / "full" / "tcp-r" /
                         "*-rep1.json"))[0]
    rec = record.load(path)
    rec.pop("_path")
    exp = xp.load_experiment(os.path.join(FIX_EXP, "fx-sweep.toml"))
    pt = xp.Point(exp, rec["mode"], rec["variant"], rec["point"],
                  rec["rep"], rec["meta"]["duration_s"])
    assert xp.current(exp, rec) and pt.ran_by(rec)
    rec["meta"]["spec"]["scenario"]["rate_bps"] *= 2
    record.write(rec, path)
    assert not xp.current(exp, rec) and not runner.stored(
        pt, results=str(res), reuse_stale=True)
    md = tmp_path / "results.md"
    report.build(md=str(md), results=str(res), experiments=FIX_EXP,
                 command="pytest")
    text = md.read_text()
    assert "from 7 stored runs" in text
    assert "- superseded: 1 stored runs ran what" in text
    line = [x for x in text.splitlines() if x.startswith("| fx-ratio")][0]
    assert "n=1/2" in line or "n=2/1" in line, line


CA = {"period_s": 0.02, "samples": 500, "span_s": 10.0,
      "interval_s": 0.02, "max_gap_s": 0.05,
      "share": {"open": 0.3, "disorder": 0.05, "cwr": 0.0,
                "recovery": 0.6, "loss": 0.05},
      "entries": {"recovery": 7, "loss": 1},
      "transitions": [[0.0, 0], [1.0, 3]], "dumps": 520, "cpu_s": 0.4,
      "errors": 0}


def with_ca(tmp_path, variant, share_of_rep=lambda rep: {}):
    """The fixture records, those of @variant given flows[].ca (its
    share updated by share_of_rep(rep)) and summarised again."""
    res = tmp_path / "r"
    shutil.copytree(FIX_RESULTS, res)
    for path in glob.glob(str(res / "*" / "*" / variant / "*.json")):
        rec = record.load(path)
        rec.pop("_path")
        ca = json.loads(json.dumps(CA))
        ca["share"].update(share_of_rep(rec["rep"]))
        rec["flows"][0]["ca"] = ca
        rec["summary"] = record.summarize(
            rec, rec["meta"]["scenario"]["rate_bps"], 1448)
        record.write(rec, path)
    return str(res)


def test_summary_and_report_show_time_in_each_ca_state(tmp_path):
    """Records with flows[].ca get each state's share per variant, mean
    over reps, in the report's table and CSV; older records (reno here)
    show none."""
    res = with_ca(tmp_path, "tcp-r", lambda rep: {"recovery": 0.6 - 0.2 *
                                                  rep, "open": 0.3 +
                                                  0.2 * rep})
    recs = record.load_all(res, warn=pytest.fail)
    tcpr = [r for r in recs if r["variant"] == "tcp-r"]
    assert all(r["summary"]["variants"]["tcp-r"]["ca_share"]["loss"] ==
               0.05 for r in tcpr)
    assert all(r["summary"]["variants"]["reno"].get("ca_share") is None
               for r in recs if r["variant"] == "reno")
    md = tmp_path / "results.md"
    report.build(md=str(md), results=res, experiments=FIX_EXP)
    lines = md.read_text().splitlines()
    assert "time in CA state (mean of runs)" in "\n".join(lines)
    row = [x for x in lines if x.startswith("| tcp-r | 0.02 |")][0]
    assert row.endswith("| Open 40% / Disorder 5% / CWR 0% / "
                        "Recovery 50% / Loss 5% |"), row
    row = [x for x in lines if x.startswith("| reno | 0.02 |")][0]
    assert row.endswith("| – |"), row
    rows = list(csv.DictReader(open(tmp_path / "results" /
                                    "fx-sweep.csv")))
    r = [x for x in rows if x["variant"] == "tcp-r"][0]
    assert float(r["ca_recovery"]) == pytest.approx(0.5)
    assert [x["ca_open"] for x in rows if x["variant"] == "reno"] == \
        ["", ""]


def three_runs(tmp_path, scale):
    """The fixture's full-mode records and a third run of each variant:
    rep 1 again, its goodput times scale[variant]."""
    res = tmp_path / "r"
    shutil.copytree(FIX_RESULTS, res)
    for path in glob.glob(str(res / "*" / "full" / "*" / "*-rep1.json")):
        rec = record.load(path)
        rec.pop("_path")
        rec["rep"] = 2
        for f in rec["flows"]:
            f["goodput_bps"] *= scale[rec["variant"]]
        rec["summary"] = record.summarize(
            rec, rec["meta"]["scenario"]["rate_bps"], 1448)
        record.write(rec, path.replace("-rep1.json", "-rep2.json"))
    return str(res)


def claim_line(md, cid):
    return [x for x in md.read_text().splitlines()
            if x.startswith("| %s" % cid)][0]


def test_report_verdict_follows_the_numbers(tmp_path):
    """Two runs are a pilot; with three full-length runs the same claim
    gets a verdict, and one it cannot meet is not reproduced."""
    md = tmp_path / "r.md"
    report.build(md=str(md), results=FIX_RESULTS, experiments=FIX_EXP)
    assert "**pilot**" in claim_line(md, "fx-ratio")
    res = three_runs(tmp_path, {"tcp-r": 1.0, "reno": 1.0})
    report.build(md=str(md), results=res, experiments=FIX_EXP)
    line = claim_line(md, "fx-ratio")
    assert "n=3/3" in line and "**pilot**" not in line, line
    exp_dir = tmp_path / "exp"
    exp_dir.mkdir()
    text = open(os.path.join(FIX_EXP, "fx-sweep.toml")).read()
    (exp_dir / "fx-sweep.toml").write_text(
        text.replace("seed = 2.0", "seed = 50.0"))
    report.build(md=str(md), results=res, experiments=str(exp_dir))
    line = claim_line(md, "fx-ratio")
    assert "**reproduced**" not in line and "(magnitude band 7.07–353.55)" \
        in line, line


LOWER_FX = '''
[[claim]]
id = "fx-lower-true"
text = "reno's goodput is lower than TCP-R's"
at = { "forward.per" = 0.02 }
better = { a = "reno", b = "tcp-r", lower = true }

[[claim]]
id = "fx-lower-false"
text = "TCP-R's goodput is lower than reno's"
at = { "forward.per" = 0.02 }
better = { a = "tcp-r", b = "reno", lower = true }
'''


def test_a_lower_claim_names_the_ratio_it_judges(tmp_path):
    """A "lower" claim is judged on B / A and the page says so: the ratio
    printed is the one named, above 1 where the claim holds, and it makes
    no statement of which mean is lower."""
    res = three_runs(tmp_path, {"tcp-r": 1.0, "reno": 1.0})
    exp_dir = tmp_path / "exp"
    exp_dir.mkdir()
    text = open(os.path.join(FIX_EXP, "fx-sweep.toml")).read()
    (exp_dir / "fx-sweep.toml").write_text(text + LOWER_FX)
    md = tmp_path / "r.md"
    report.build(md=str(md), results=res, experiments=str(exp_dir))
    recs = [r for r in record.load_all(res, warn=pytest.fail)
            if r["mode"] == "full" and r["point"] == {"forward.per": 0.02}]
    mean = {v: sum(r["summary"]["variants"][v]["goodput"] for r in recs
                   if r["variant"] == v) / 3 for v in ("tcp-r", "reno")}
    assert mean["tcp-r"] > mean["reno"]
    for cid, num, den, verdict in (
            ("fx-lower-true", "tcp-r", "reno", "reproduced"),
            ("fx-lower-false", "reno", "tcp-r", "contradicted")):
        line = claim_line(md, cid)
        assert "is lower)" not in line, line
        assert "ratio %s / %s %.2f [" % (num, den, mean[num] / mean[den]) \
            in line, line
        assert "**%s**" % verdict in line, line


ACROSS_FX = '''
[[claim]]
id = "fx-trend"
text = "TCP-R's gain over reno grows with packet errors"
trend = { a = "tcp-r", b = "reno", from = { "forward.per" = 0.001 }, to = { "forward.per" = 0.02 }, grows = true }
counters = ["TcpExtTCPTimeouts"]

[[claim]]
id = "fx-falls"
text = "reno's goodput falls as packet errors rise"
trend = { a = "reno", from = { "forward.per" = 0.001 }, to = { "forward.per" = 0.02 }, falls = true }

[[claim]]
id = "fx-steady"
text = "packet errors have no significant impact on TCP-R"
steady = { a = "tcp-r", from = { "forward.per" = 0.001 }, to = { "forward.per" = 0.02 } }

[[claim]]
id = "fx-unrun"
text = "a point with no runs"
steady = { a = "tcp-r", from = { "forward.per" = 0.01 }, to = { "forward.per" = 0.02 } }
'''


def test_report_judges_claims_across_the_sweep(tmp_path):
    """The fixture's runs (two a point, so pilots; a third makes them
    verdicts) under trend and steady claims: each names both points, the
    ratio it judged, the counters at each point, and a claim whose point
    has no runs is not run."""
    exp_dir = tmp_path / "exp"
    exp_dir.mkdir()
    text = open(os.path.join(FIX_EXP, "fx-sweep.toml")).read().replace(
        "values = [0.001, 0.02]", "values = [0.001, 0.01, 0.02]")
    (exp_dir / "fx-sweep.toml").write_text(text + ACROSS_FX)
    md = tmp_path / "r.md"
    report.build(md=str(md), results=FIX_RESULTS, experiments=str(exp_dir))
    line = claim_line(md, "fx-trend")
    assert "| tcp-r / reno grows, forward.per 0.001 → 0.02 |" in line, line
    assert "ratio of ratios (tcp-r / reno at 0.02) / (at 0.001) 1.05 [" \
        in line and "**pilot**" in line, line
    assert "TCPTimeouts: tcp-r at 0.001 2.5 (2–3), tcp-r at 0.02 3, " \
        "reno at 0.001 2, reno at 0.02 1.5 (1–2)" in line, line
    line = claim_line(md, "fx-falls")
    assert "| reno falls, forward.per 0.001 → 0.02 |" in line and \
        "ratio reno at 0.02 / at 0.001 0.94 [" in line, line
    assert "| tcp-r steady (margin 1.1×)" in claim_line(md, "fx-steady")
    assert "**not run**" in claim_line(md, "fx-unrun")
    res = three_runs(tmp_path, {"tcp-r": 1.0, "reno": 1.0})
    report.build(md=str(md), results=res, experiments=str(exp_dir))
    assert "**reproduced**" in claim_line(md, "fx-falls")
    assert "**reproduced**" in claim_line(md, "fx-steady")
    assert "1.06 [1.04, 1.07] | reproduced | – | **reproduced**" in \
        claim_line(md, "fx-trend")


def test_near_zero_is_the_count_a_runs_ceiling():
    floor = stats.COUNT_MARGIN
    for values, verdict in ((ZERO, "reproduced"), (FEW, "reproduced"),
                            ([0.0, 2.0, 1.0], "inconclusive"),
                            ([0.0, 0.2, 0.1], "reproduced"),
                            (MANY, "contradicted"),
                            ([1.0, 2.0, 3.0], "inconclusive")):
        j = stats.judge_near_zero(stats.Level(stats.Estimate(values)))
        assert j.verdict == verdict, (values, j)
    assert stats.judge_near_zero(stats.Level(stats.Estimate(FEW)),
                                 runs=2).verdict == "pilot"
    # a timeout a run: decided by more runs, if they kept it
    r = stats.Level(stats.Estimate([0.0, 2.0, 1.0]))
    n = stats.runs_to_decide(stats.judge_near_zero, r, floor=floor)
    assert n is not None and 3 < n < stats.RUNS_LIMIT
    assert stats.judge_near_zero(r.grown(n), runs=n).verdict == \
        "reproduced"
    assert stats.judge_near_zero(r.grown(n - 1), runs=n - 1).verdict == \
        "inconclusive"


def test_report_judges_a_count_as_near_zero(tmp_path):
    exp_dir = tmp_path / "exp"
    exp_dir.mkdir()
    text = open(os.path.join(FIX_EXP, "fx-sweep.toml")).read()
    for v in ("tcp-r", "reno"):
        text += ('\n[[claim]]\nid = "fx-zero-%s"\ntext = "almost no '
                 'timeouts"\nat = { "forward.per" = 0.02 }\nmetric = '
                 '"timeouts"\nnear_zero = { a = "%s" }\n' % (v, v))
    (exp_dir / "fx-sweep.toml").write_text(text)
    md = tmp_path / "r.md"
    report.build(md=str(md), results=FIX_RESULTS, experiments=str(exp_dir))
    assert "**pilot**" in claim_line(md, "fx-zero-reno")
    res = three_runs(tmp_path, {"tcp-r": 1.0, "reno": 1.0})
    report.build(md=str(md), results=res, experiments=str(exp_dir))
    line = claim_line(md, "fx-zero-tcp-r")
    assert "| tcp-r ≈ 0 (at most 2 a run) |" in line, line
    assert "| tcp-r: 3 (95 % CI ± 0, SD 0, n=3) |" in line and \
        "**contradicted**" in line, line
    line = claim_line(md, "fx-zero-reno")
    assert "**inconclusive** (about" in line, line


def test_report_with_no_records(tmp_path):
    md = tmp_path / "r.md"
    report.build(md=str(md), results=str(tmp_path), experiments=FIX_EXP)
    text = md.read_text()
    assert "No stored runs yet" in text and "**not run**" in text


def respec(results, experiments):
    """Every record under @results as a run of what the files of
    @experiments give for its point now: a fixture copied to another
    experiment or point ran another spec, which the report leaves out."""
    for path in glob.glob(os.path.join(results, "*", "*", "*", "*.json")):
        rec = record.load(path)
        rec.pop("_path")
        exp = xp.load_experiment(os.path.join(experiments,
                                              rec["experiment"] + ".toml"))
        rec["meta"]["spec"] = xp.Point(exp, rec["mode"], rec["variant"],
                                       rec["point"], rec["rep"],
                                       rec["meta"]["duration_s"]).spec()
        record.write(rec, path)


def copy_runs(results, name, point=None, scale=None, third=False,
              experiments=None):
    """The fixture's records as the runs of experiment @name under
    @results: each point renamed by @point (a dict of fixture point to
    new point), each variant's goodput times scale[variant]; third: and
    rep 1 again as rep 2, so that a claim gets a verdict.  With
    @experiments (a folder), they become runs of its @name (respec)."""
    for path in glob.glob(os.path.join(FIX_RESULTS, "*", "*", "*",
                                       "*.json")):
        rec = record.load(path)
        rec.pop("_path")
        rec["experiment"] = name
        if point:
            rec["point"] = point[xp.point_key(rec["point"])]
        for f in rec["flows"]:
            f["goodput_bps"] *= (scale or {}).get(rec["variant"], 1.0)
        rec["summary"] = record.summarize(
            rec, rec["meta"]["scenario"]["rate_bps"], 1448)
        for rep in [rec["rep"]] + ([2] if third and rec["rep"] == 1
                                   else []):
            rec["rep"] = rep
            record.write(rec, os.path.join(
                results, name, rec["mode"], rec["variant"],
                "%s-rep%d.json" % (xp.point_key(rec["point"]), rep)))
    if experiments:
        respec(results, experiments)


CATEGORICAL = '''name = "fx-dist"
title = "Fixture: the same runs on a categorical axis"
source = "seed 001 §VII-H"
scenario = "leo-palazzi"
variants = ["reno", "tcp-r"]

[sweep]
key = "forward.reorder.dist"
values = ["normal", "uniform"]
label = "delay distribution"

[full]
reps = 2
duration_s = 10

[[claim]]
id = "fx-dist-better"
text = "TCP-R beats reno under uniform delays"
at = { "forward.reorder.dist" = "uniform" }
better = { a = "tcp-r", b = "reno" }
'''


def test_a_sweep_of_names(tmp_path):
    """A sweep may name its values (forward.reorder.dist): they make
    scenarios, points and --point, the claims' points, and the report's
    table and plot (names in the file's order, or one bar each)."""
    exp = xp.load_experiment(write_exp(tmp_path, CATEGORICAL, "fx-dist"))
    assert exp.scenario_for("reno", {"forward.reorder.dist": "uniform"},
                            10).fwd.reorder.dist == "uniform"
    assert [p.relpath() for p in exp.points("full")][:2] == [
        os.path.join("fx-dist", "full", v,
                     "forward.reorder.dist=normal-rep0.json")
        for v in ("reno", "tcp-r")]
    assert xp.parse_point(["forward.reorder.dist=uniform"], exp)[0] == \
        {"forward.reorder.dist": ["uniform"]}
    res = str(tmp_path / "r")
    copy_runs(res, "fx-dist", {
        "forward.per=0.001": {"forward.reorder.dist": "normal"},
        "forward.per=0.02": {"forward.reorder.dist": "uniform"}},
        experiments=str(tmp_path))
    md = tmp_path / "doc" / "r.md"
    md.parent.mkdir()
    report.build(md=str(md), results=res, experiments=str(tmp_path))
    text = md.read_text()
    assert "| tcp-r | uniform | 2 |" in text
    assert "**pilot**" in claim_line(md, "fx-dist-better")
    png = tmp_path / "doc" / "results" / "fx-dist.png"
    assert png.stat().st_size > 1000
    # one value run: one bar per variant, labelled with the name
    shutil.rmtree(os.path.join(res, "fx-dist", "full", "reno"))
    for p in glob.glob(os.path.join(res, "fx-dist", "full", "tcp-r",
                                    "*normal*")):
        os.remove(p)
    png.unlink()
    report.build(md=str(md), results=res, experiments=str(tmp_path))
    assert png.stat().st_size > 1000


def test_the_seeds_numbers_are_drawn_beside_ours(tmp_path, monkeypatch):
    """[plot] seed: the seed's table drawn as hollow markers in the colour
    of the variant's line, at the sweep's scaled x; one value run: on
    the variant's bar."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    text = open(os.path.join(FIX_EXP, "fx-sweep.toml")).read().replace(
        'label = "packet error rate"',
        'label = "packet error rate"\nscale = 100').replace(
        'label = "goodput (Mbit/s)"',
        'label = "goodput (Mbit/s)"\nseed = { reno = [[0.001, 0.9], '
        '[0.02, 0.2]], tcp-r = [[0.02, 0.7]] }')
    (tmp_path / "fx-sweep.toml").write_text(text)
    exp = xp.load_experiment(str(tmp_path / "fx-sweep.toml"))
    axes = []
    subplots = plt.subplots

    def keep(*a, **kw):
        fig, ax = subplots(*a, **kw)
        axes.append(ax)
        return fig, ax

    monkeypatch.setattr(plt, "subplots", keep)
    res = report.Results(exp, record.load_all(FIX_RESULTS))
    report.plot(res, str(tmp_path / "p.png"))
    marks = {ln.get_label(): ln for ln in axes[-1].get_lines()
             if ln.get_label().startswith("seed: ")}
    assert sorted(marks) == ["seed: reno", "seed: tcp-r"]
    assert list(marks["seed: reno"].get_xdata()) == [0.1, 2.0]
    assert list(marks["seed: reno"].get_ydata()) == [0.9, 0.2]
    assert marks["seed: reno"].get_marker() == "D"
    assert marks["seed: reno"].get_color() == "C0" and \
        marks["seed: tcp-r"].get_color() == "C1"
    ours = [c for c in axes[-1].containers if c.get_label() == "reno"]
    assert ours and ours[0].lines[0].get_color() == "C0"
    # one value run: the mark sits on the variant's bar
    one = [r for r in record.load_all(FIX_RESULTS)
           if r["point"] == {"forward.per": 0.02}]
    report.plot(report.Results(exp, one), str(tmp_path / "q.png"))
    marks = {ln.get_label(): ln for ln in axes[-1].get_lines()}
    assert list(marks["seed: tcp-r"].get_xdata()) == [1]
    assert list(marks["seed: tcp-r"].get_ydata()) == [0.7]


@pytest.mark.parametrize("seed", [
    'reno = [[0.005, 1.0]]', 'bbr = [[0.001, 1.0]]', 'reno = [0.001, 1.0]',
    'reno = [[0.001, "1"]]', 'reno = []'])
def test_the_seeds_numbers_sit_at_sweep_values(tmp_path, seed):
    text = open(os.path.join(FIX_EXP, "fx-sweep.toml")).read().replace(
        'label = "goodput (Mbit/s)"',
        'label = "goodput (Mbit/s)"\nseed = { %s }' % seed)
    (tmp_path / "fx-sweep.toml").write_text(text)
    with pytest.raises(xp.ExperimentError, match="seed"):
        xp.load_experiment(str(tmp_path / "fx-sweep.toml"))


@pytest.mark.parametrize("values, words", [
    ('["normal", 3]', "all numbers or all names"),
    ('["normal", "uniform"]\nscale = 2', "takes no scale"),
])
def test_a_sweep_of_names_is_checked(tmp_path, values, words):
    text = CATEGORICAL.replace('["normal", "uniform"]', values)
    with pytest.raises(xp.ExperimentError, match=words):
        xp.load_experiment(write_exp(tmp_path, text, "fx-dist"))


FOLLOW = BASE.replace('key = "forward.reorder.mean_ms"\nvalues = [300, 600]',
                      'key = "forward.delay_ms"\nvalues = [100, 300]\n'
                      'follow = { "forward.reorder.mean_ms" = 2 }')


def test_a_sweep_moves_the_keys_it_follows(tmp_path):
    """[sweep] follow sets each key to a factor times the swept value at
    every point (seed 000's reordering delay, uniform [0, 4P]), and so
    makes another spec wherever it changed the path."""
    assert FOLLOW != BASE
    exp = xp.load_experiment(write_exp(tmp_path, FOLLOW))
    for p, mean in ((100, 200), (300, 600)):
        sc = exp.scenario_for("reno", {"forward.delay_ms": p}, 10)
        assert (sc.fwd.delay_ms, sc.fwd.reorder.mean_ms) == (p, mean)
    fixed = xp.load_experiment(write_exp(tmp_path, FOLLOW.replace(
        'follow = { "forward.reorder.mean_ms" = 2 }\n', '').replace(
        'name = "t1"', 'name = "t2"'), "t2"))
    specs = [[pt.spec()["scenario"] for pt in e.points("full")[:2]]
             for e in (exp, fixed)]
    assert specs[0] != specs[1]


@pytest.mark.parametrize("follow, words", [
    ('{ "forward.reorder.mean_ms" = 0 }', "positive number"),
    ('{ "forward.reorder.mean_ms" = "2P" }', "positive number"),
    ('{ "forward.delay_ms" = 2 }', "the key is swept"),
    ('2', "a table of key = factor"),
])
def test_a_sweeps_follow_is_checked(tmp_path, follow, words):
    text = FOLLOW.replace('{ "forward.reorder.mean_ms" = 2 }', follow)
    with pytest.raises(xp.ExperimentError, match=words):
        xp.load_experiment(write_exp(tmp_path, text))
    clash = FOLLOW.replace('variants =', 'set = { "forward.reorder.mean_ms"'
                           ' = 5 }\nvariants =')
    with pytest.raises(xp.ExperimentError, match="set by the experiment"):
        xp.load_experiment(write_exp(tmp_path, clash))
    names = CATEGORICAL.replace('values = ["normal", "uniform"]',
                                'values = ["normal", "uniform"]\n'
                                'follow = { "forward.delay_ms" = 2 }')
    with pytest.raises(xp.ExperimentError, match="moves no other key"):
        xp.load_experiment(write_exp(tmp_path, names, "fx-dist"))


REF = """
[[claim]]
id = "t2-ref"
text = "reno here as reno there"
at = { "forward.reorder.mean_ms" = 300 }
same = { a = "reno", b = "%s" }
"""


def test_a_claim_may_read_another_experiment(tmp_path):
    """EXPERIMENT:VARIANT names a variant's runs in another experiment
    beside this one, checked on load: the file, the variant, the point."""
    write_exp(tmp_path, BASE)
    t2 = BASE.replace('name = "t1"', 'name = "t2"')
    exp = xp.load_experiment(write_exp(tmp_path, t2 + REF % "t1:reno",
                                       "t2"))
    assert exp.claims[0].refs == [("t1", "reno")]
    assert exp.claims[0].variants() == ["reno", "t1:reno"]
    for ref, words in (("t9:reno", "no experiment 't9'"),
                       ("t1:bbr", "t1 has no variant 'bbr'"),
                       ("t2:reno", "named without t2:")):
        with pytest.raises(xp.ExperimentError, match=words):
            xp.load_experiment(write_exp(tmp_path, t2 + REF % ref, "t2"))
    write_exp(tmp_path, BASE.replace("300, 600", "600"))
    with pytest.raises(xp.ExperimentError, match="does not run the point"):
        xp.load_experiment(write_exp(tmp_path, t2 + REF % "t1:reno", "t2"))


OTHER = """name = "fx-other"
title = "Fixture: the runs of fx-sweep again, another experiment"
source = "seed 001 §VII-D"
scenario = "leo-palazzi"
variants = ["reno", "tcp-r"]

[sweep]
key = "forward.per"
values = [0.001, 0.02]

[full]
reps = 2
duration_s = 10

[[claim]]
id = "fx-other-same"
text = "reno here as reno in fx-sweep"
at = { "forward.per" = 0.02 }
same = { a = "reno", b = "fx-sweep:reno" }

[[claim]]
id = "fx-other-ratio"
text = "TCP-R here twice TCP-R in fx-sweep"
at = { "forward.per" = 0.02 }
ratio = { num = "tcp-r", den = ["fx-sweep:tcp-r"], seed = 2.0 }
counters = ["TcpExtTCPTimeouts"]
"""


def test_report_judges_a_claim_on_another_experiments_runs(tmp_path):
    """A claim reads the other experiment's runs as its own: not run
    without them, a pilot unless both are full with 3 runs, judged on
    both; `satnet report NAME` reads them too, without their section."""
    exp_dir = tmp_path / "exp"
    exp_dir.mkdir()
    shutil.copy(os.path.join(FIX_EXP, "fx-sweep.toml"), exp_dir)
    (exp_dir / "fx-other.toml").write_text(OTHER)
    res = str(tmp_path / "r")
    copy_runs(res, "fx-other", scale={"tcp-r": 2.0}, third=True)
    md = tmp_path / "doc" / "r.md"
    md.parent.mkdir()

    def build(names=None):
        report.build(names, md=str(md), results=res,
                     experiments=str(exp_dir))
        return claim_line(md, "fx-other-same"), \
            claim_line(md, "fx-other-ratio")

    assert all("**not run**" in x for x in build())
    copy_runs(res, "fx-sweep")
    assert all("**pilot**" in x for x in build())
    copy_runs(res, "fx-sweep", third=True)
    same, ratio = build()
    assert "**reproduced**" in same, same
    assert "/fx-sweep:tcp-r 2.00 [" in ratio and "n=3/3" in ratio, ratio
    assert "**reproduced**" in ratio and "Timeouts: tcp-r " in ratio and \
        "fx-sweep:tcp-r " in ratio, ratio
    assert build(["fx-other"])[1] == ratio
    text = md.read_text()
    assert "## fx-other:" in text and "## fx-sweep:" not in text
    assert "Older runs" not in text and "from 12 stored runs" in text


# ---- the command line -----------------------------------------------------------

def satnet(*args, **kw):
    return subprocess.run([sys.executable, "-m", "satnet.cli"] +
                          list(args), capture_output=True, text=True,
                          cwd="/", **kw)


@pytest.mark.parametrize("cmd", [[], ["list"], ["run"], ["report"],
                                 ["show"], ["ss"], ["export"],
                                 ["compare"], ["up"], ["exec"], ["down"]])
def test_help_runs_nothing(cmd, tmp_path):
    before = sorted(glob.glob(os.path.join(TOP, "results", "**"),
                              recursive=True))
    r = satnet(*cmd, "--help")
    assert r.returncode == 0 and "usage: satnet" in r.stdout
    assert "vm-run" not in r.stderr
    assert sorted(glob.glob(os.path.join(TOP, "results", "**"),
                            recursive=True)) == before


def test_every_option_has_help():
    from satnet.cli import parser
    import argparse
    p = parser()
    subs = [a for a in p._actions
            if isinstance(a, argparse._SubParsersAction)][0]
    for name, sp in subs.choices.items():
        for a in sp._actions:
            assert a.help, "%s %s has no help" % (name, a.dest)


def test_list_and_bad_input():
    r = satnet("list", "variants")
    assert r.returncode == 0 and "tcp-r" in r.stdout
    r = satnet("list", "scenarios")
    clocks = {ln.split()[0]: ln.split()[1] for ln in r.stdout.splitlines()
              if ln.startswith("  ")}
    assert clocks["geo"] == "virtual" and clocks["leo-ge"] == "real"
    r = satnet("list", "colours")
    assert r.returncode == 2 and "unknown kind" in r.stderr
    r = satnet("run", "no-such-experiment", "--dry-run")
    assert r.returncode == 2 and "no experiment" in r.stderr


@pytest.mark.parametrize("args,message", [
    (["run", "--width", "0", "--dry-run"], "--width: must be at least 1"),
    (["run", "--reps", "0", "--dry-run"], "--reps: must be at least 1"),
    (["run", "--reps", "-1", "--dry-run"], "--reps: must be at least 1"),
    (["run", "--rep", "-1", "--dry-run"], "--rep: must be at least 0"),
    (["run", "--duration", "-5", "--dry-run"], "--duration: must be above 0"),
    (["run", "--duration", "nan", "--dry-run"], "--duration: must be above"),
    (["run", "--width", "x", "--dry-run"], "'x' is not a whole number"),
    (["report", "s000-fig2"], "give --md PATH"),
    (["report", "--results", "/nonexistent-typo"], "no results folder"),
    (["ss", "--file", "/nonexistent"], "No such file or directory"),
    (["run", "--guests", "0", "--dry-run"], "--guests: must be at least 1"),
    (["run", FX_SWEEP, "--guests", "2", "--native", "--dry-run"],
     "--guests boots VMs, --native boots none"),
    (["run", FX_SWEEP, "--guests", "2", "--emit-jobs"],
     "--emit-jobs runs nothing"),
    (["run", FX_SWEEP, "--width-check", "fx-sweep", "--dry-run"],
     "give EXPERIMENT:VARIANT"),
    (["run", FX_SWEEP, "--width-check", "fx-sweep:reno", "--width", "1",
      "--dry-run"], "give --width 2 or more"),
    (["run", FX_SWEEP, "--width-check", "fx-sweep:mix", "--dry-run"],
     "a mix always runs alone"),
    (["run", FX_SWEEP, "--width-check", "fx-sweep:cubic", "--dry-run"],
     "matches no point of this run"),
    (["run", FX_SWEEP, "--width-check", "fx-sweep:reno", "--emit-jobs"],
     "cannot spread"),
    (["run", "--serial-control", "s000-fig2:tcp-r", "--dry-run"],
     "--serial-control is now --width-check"),
])
def test_bad_input_is_refused_with_a_message(args, message):
    before = open(os.path.join(TOP, "docs", "results.md")).read()
    r = satnet(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert open(os.path.join(TOP, "docs", "results.md")).read() == before


def test_show_png_errors_are_messages(tmp_path):
    path = sorted(glob.glob(os.path.join(FIX_RESULTS, "*", "*", "tcp-r",
                                         "*.json")))[0]
    for png, message in (("/nonexistent/x.png", "no folder /nonexistent"),
                         (str(tmp_path / "x.xyz"), "must end in one of")):
        r = satnet("show", path, "--png", png)
        assert r.returncode == 2 and message in r.stderr, r.stderr
        assert "Traceback" not in r.stderr


def test_report_into_an_unwritable_folder_is_a_message(tmp_path):
    if os.geteuid() == 0:
        md = "/proc/satnet-report.md"     # root may write anywhere else
    else:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        md = str(ro / "r.md")
    r = satnet("report", "--md", md, "--results", FIX_RESULTS,
               "--experiments", FIX_EXP)
    assert r.returncode == 2 and "cannot write" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_run_refuses_results_the_vm_cannot_write(tmp_path):
    exp = os.path.join(FIX_EXP, "fx-sweep.toml")
    r = satnet("run", exp, "--results", str(tmp_path))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "outside" in r.stderr and "--native" in r.stderr


def test_virtual_records_are_dated_by_the_hosts_clock(monkeypatch,
                                                      tmp_path):
    rtc = tmp_path / "since_epoch"
    rtc.write_text("1795802700\n")
    monkeypatch.setenv("SATNET_CLOCK", "virtual")
    assert record.wall_date(str(rtc)) == "2026-11-27T18:05:00Z"
    monkeypatch.setenv("SATNET_CLOCK", "real")
    assert record.wall_date(str(rtc)) != "2026-11-27T18:05:00Z"
    monkeypatch.setenv("SATNET_CLOCK", "virtual")
    now = record.wall_date(str(tmp_path / "none"))
    assert now[:4] == time.strftime("%Y", time.gmtime())


def test_records_name_their_clock(monkeypatch):
    monkeypatch.delenv("SATNET_CLOCK", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert record.clock() == {"mode": "real", "cpus": 2,
                              "rps_cpus": "00000003"}
    monkeypatch.setenv("SATNET_CLOCK", "virtual")
    monkeypatch.setenv("SATNET_ICOUNT_SHIFT", "2")
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert record.clock() == {"mode": "virtual", "icount_shift": 2,
                              "cpus": 1}
    assert record.clock_name({"clock": {"mode": "real", "cpus": 2}}) == \
        "real"
    assert record.clock_name({"clock": {"mode": "real"}}) == \
        record.clock_name({}) == "real (before flow steering)"
    assert record.clock_name({"clock": {"mode": "virtual",
                                        "icount_shift": 0}}) == \
        "virtual (icount shift 0)"


def test_version_and_a_closed_pipe():
    r = satnet("--version")
    assert r.returncode == 0 and r.stdout.startswith("satnet ")
    p = subprocess.Popen([sys.executable, "-m", "satnet.cli", "list"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd="/")
    p.stdout.read(10)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait() == 0 and "Traceback" not in err, err


def test_dry_run_and_emit_jobs(tmp_path):
    exp = os.path.join(FIX_EXP, "fx-sweep.toml")
    r = satnet("run", exp, "--full", "--dry-run", "--results", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.split()) == 8 and "8 to run" in r.stderr
    r = satnet("run", exp, "--full", "--dry-run", "--results", FIX_RESULTS,
               "--reuse-stale")
    assert r.stdout == "" and "8 stored, 0 to run" in r.stderr
    r = satnet("run", exp, "--full", "--emit-jobs", "--results",
               str(tmp_path), "--point", "forward.per=0.02")
    jobs = r.stdout.splitlines()
    assert len(jobs) == 4 and all("--rep " in j and "forward.per=0.02" in j
                                  for j in jobs)
    assert not os.listdir(tmp_path)


def test_claims_run_only_the_cells_the_claims_compare(tmp_path):
    """--claims: full length, the claims' variants at their sweep points,
    a variant another experiment's claim reads (EXPERIMENT:VARIANT) in
    that experiment, each point once."""
    text = open(FX_SWEEP).read()
    cut = text.index("[[claim]]\nid = \"fx-better\"")
    one = tmp_path / "fx-sweep.toml"
    one.write_text(text[:cut] + text[text.index("[[claim]]", cut + 1):])
    other = tmp_path / "fx-other.toml"
    other.write_text(text[:cut].replace('name = "fx-sweep"',
                                        'name = "fx-other"').split(
        "[[claim]]")[0] + '''[[claim]]
id = "fx-across"
text = "reno here is reno there"
at = { "forward.per" = 0.001 }
same = { a = "reno", b = "fx-sweep:reno" }
''')
    r = satnet("run", str(one), str(other), "--claims", "--dry-run",
               "--results", str(tmp_path / "r"), "--reps", "3")
    assert r.returncode == 0, r.stderr
    got = r.stdout.split()
    want = ["fx-sweep/full/%s/forward.per=0.02-rep%d.json" % (v, i)
            for i in range(3) for v in ("reno", "tcp-r")] + \
        ["fx-sweep/full/reno/forward.per=0.001-rep%d.json" % i
         for i in range(3)]
    assert sorted(got) == sorted(
        want + ["fx-other/full/reno/forward.per=0.001-rep%d.json" % i
                for i in range(3)]), got
    r = satnet("run", str(other), "--claims", "--dry-run", "--results",
               str(tmp_path / "r"), "--duration", "20", "--rep", "1")
    assert r.stdout.split() == [
        "fx-other/point/reno/forward.per=0.001-rep1.json",
        "fx-sweep/point/reno/forward.per=0.001-rep1.json"], r.stdout
    for args, msg in ((["--point", "variant=reno"], "no --point"),
                      (["--full"], "not allowed with argument")):
        r = satnet("run", str(one), "--claims", "--dry-run", *args)
        assert r.returncode == 2 and msg in r.stderr, r.stderr
    plain = tmp_path / "fx-plain.toml"
    plain.write_text(text[:text.index("[[claim]]")].replace(
        'name = "fx-sweep"', 'name = "fx-plain"'))
    r = satnet("run", str(plain), "--claims", "--dry-run")
    assert r.returncode == 2 and "no claim in fx-plain" in r.stderr
    # an experiment without claims runs the cells a claim beside it reads
    base = tmp_path / "fx-base.toml"
    base.write_text(plain.read_text().replace('name = "fx-plain"',
                                              'name = "fx-base"'))
    other.write_text(other.read_text().replace("fx-sweep:reno",
                                               "fx-base:reno"))
    r = satnet("run", str(base), "--claims", "--dry-run", "--results",
               str(tmp_path / "r"), "--reps", "3")
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split()) == [
        "fx-base/full/reno/forward.per=0.001-rep%d.json" % i
        for i in range(3)], r.stdout


def test_records_of_other_module_builds_are_run_again(monkeypatch):
    from satnet import runner
    exp = xp.load_experiment(os.path.join(FIX_EXP, "fx-sweep.toml"))
    pts = exp.points("full")
    tcpr = next(p for p in pts if p.variant == "tcp-r")
    reno = next(p for p in pts if p.variant == "reno")
    rec = record.load(os.path.join(FIX_RESULTS, tcpr.relpath()))
    built = {m: d["srcversion"] for m, d in rec["meta"]["modules"].items()}
    monkeypatch.setattr(record, "module_builds", lambda: dict(built))
    assert all(runner.stored(p, FIX_RESULTS) for p in pts)
    assert record.stale(rec, built) == []
    mod = "tcp_r"
    other = {**built, mod: "0" * 23}
    monkeypatch.setattr(record, "module_builds", lambda: dict(other))
    assert record.stale(rec, other) == [mod]
    assert not runner.stored(tcpr, FIX_RESULTS)
    assert runner.stored(tcpr, FIX_RESULTS, reuse_stale=True)
    # a module not built here cannot make a record stale
    assert record.stale(rec, {**other, mod: None}) == []
    # tcp_r calls into tcp_rn: a new tcp_rn makes its runs stale too
    assert record.stale(rec, {**built, "tcp_rn": "0" * 23}) == ["tcp_rn"]
    # reno over pfifo ran no module of ours, though all four were loaded
    # in its guest: no build of them makes it stale ...
    plain = record.load(os.path.join(FIX_RESULTS, reno.relpath()))
    assert set(plain["meta"]["modules"]) == set(built)
    assert record.used_modules(plain) == set()
    assert runner.stored(reno, FIX_RESULTS)
    # ... but a record that does not say what it ran counts every module
    del plain["meta"]["spec"]
    assert record.stale(plain, other) == [mod]
    assert record.stale_note(0) == ""
    assert record.stale_note(1) == " (1 stale run)"
    assert record.stale_note(8) == " (8 stale runs)"


def test_srcversion_is_read_from_the_ko_without_kmod(tmp_path):
    # .modinfo is NUL-separated key=value strings inside the ELF file
    ko = tmp_path / "m.ko"
    ko.write_bytes(b"\x7fELF\0\0license=GPL\0srcversion=0B89F3623A7"
                   b"C1D2E4F5A6B7\0depends=\0\xff")
    assert record.ko_srcversion(str(ko)) == "0B89F3623A7C1D2E4F5A6B7"
    ko.write_bytes(b"\x7fELF\0license=GPL\0xsrcversion=ABC\0")
    assert record.ko_srcversion(str(ko)) is None
    assert record.ko_srcversion(str(tmp_path / "absent.ko")) is None


def test_a_default_written_out_is_the_same_point(tmp_path):
    text = open(os.path.join(FIX_EXP, "fx-sweep.toml")).read()
    exp = xp.load_experiment(os.path.join(FIX_EXP, "fx-sweep.toml"))
    sc = exp.scenario_for(exp.variants[0], {}, 10)
    (tmp_path / "fx-sweep.toml").write_text(text.replace(
        "[sweep]", "set = { \"forward.loss\" = %r }\n\n[sweep]" %
        sc.fwd.loss, 1))
    same = xp.load_experiment(str(tmp_path / "fx-sweep.toml"))
    assert same.set and [p.spec() for p in same.points("full")] == \
        [p.spec() for p in exp.points("full")]


def test_report_marks_stale_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(record, "module_builds",
                        lambda: {"tcp_r": "0" * 23, "sch_epdn": None})
    md = tmp_path / "r.md"
    report.build(md=str(md), results=FIX_RESULTS, experiments=FIX_EXP)
    text = md.read_text()
    assert "\n- clock: real (before flow steering); before flow steering, " \
        "a guest of two CPUs could reorder a flow ([testbed.md](" in text
    # reno's runs ran no module of ours: only tcp-r's are stale
    assert "4 of 8 runs made by the modules as built now; 4 stale " \
        "(other builds of tcp_r" in text, text[:2000]
    assert "stale runs)" in claim_line(md, "fx-ratio")


def test_export_gives_one_row_per_variant_of_each_run(tmp_path):
    out = tmp_path / "runs.csv"
    r = satnet("export", "--results", FIX_RESULTS, "-o", str(out))
    assert r.returncode == 0 and "wrote 8 rows" in r.stderr, r.stderr
    rows = list(csv.DictReader(open(out)))
    assert len(rows) == 8 and tuple(rows[0]) == record.EXPORT_FIELDS
    assert {x["variant"] for x in rows} == {"reno", "tcp-r"}
    # the fixtures' records come from before the guest steered flows
    assert all(float(x["goodput_mbps"]) > 0 and
               x["clock"] == "real (before flow steering)" for x in rows)
    r = satnet("export", "--results", FIX_RESULTS, "--format", "json")
    data = json.loads(r.stdout)
    assert len(data) == 8 and data[0]["experiment"] == "fx-sweep"
    r = satnet("export", "--results", "/nonexistent-typo")
    assert r.returncode == 2 and "no results folder" in r.stderr


def test_export_adds_the_counters_asked_for(tmp_path):
    out = tmp_path / "runs.csv"
    r = satnet("export", "--results", FIX_RESULTS, "-o", str(out),
               "--counter", "TcpRetransSegs", "--counter",
               "rn_sender.acks_dn", "--counter", "TcpRetransSegs")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(open(out)))
    assert tuple(rows[0]) == record.EXPORT_FIELDS + ("TcpRetransSegs",
                                                     "rn_sender.acks_dn")
    for x in rows:
        rec = json.load(open(x["path"]))
        assert float(x["TcpRetransSegs"]) == \
            rec["flows"][0]["counters"]["TcpRetransSegs"]
        assert float(x["rn_sender.acks_dn"]) == \
            rec["host"]["proc_sender"].get("rn_sender.acks_dn", 0)
    assert any(float(x["rn_sender.acks_dn"]) > 0 for x in rows)
    # the receiving host's counters, named receiver.X
    r = satnet("export", "--results", FIX_RESULTS, "-o", str(out),
               "--counter", "receiver.rn_host.acks_inorder")
    assert r.returncode == 0, r.stderr
    for x in csv.DictReader(open(out)):
        rec = json.load(open(x["path"]))
        assert float(x["receiver.rn_host.acks_inorder"]) == \
            rec["host"]["proc_receiver"].get("rn_host.acks_inorder", 0)
    r = satnet("export", "--results", FIX_RESULTS, "--counter",
               "rn_host.acks_inorder")     # not the sender's
    assert r.returncode == 2, r.stderr
    r = satnet("export", "--results", FIX_RESULTS, "--counter",
               "TcpExtNoSuchCounter")
    assert r.returncode == 2 and "no run counts TcpExtNoSuchCounter" in \
        r.stderr, r.stderr


def test_compare_two_results_folders(tmp_path):
    res = three_runs(tmp_path, {"tcp-r": 1.0, "reno": 1.0})
    r = satnet("compare", FIX_RESULTS, res)
    assert r.returncode == 0, r.stderr
    rows = [x for x in r.stdout.splitlines() if x.startswith("| fx-sweep")]
    assert len(rows) == 4, r.stdout
    assert all("(95 % CI" in x and x.rstrip().endswith("|") for x in rows)
    assert "pilot" in r.stdout          # n = 2 in A
    assert "\nclock: A real (before flow steering); B " in r.stdout, \
        r.stdout
    r = satnet("compare", res, res)     # a folder is the same as itself
    rows = [x for x in r.stdout.splitlines() if x.startswith("| fx-sweep")]
    assert rows and all(x.rstrip().endswith("| same |") for x in rows), \
        r.stdout
    # and pooled over its path's four cells
    assert "| leo-palazzi | 4 | 1.000 [" in r.stdout and \
        "| same | Q 0.0, p 1.00 |" in r.stdout, r.stdout
    r = satnet("compare", FIX_RESULTS, "/nonexistent-typo")
    assert r.returncode == 2 and "no results folder" in r.stderr
    r = satnet("compare", FIX_RESULTS, res, "--metric", "colour")
    assert r.returncode == 2 and "unknown metric" in r.stderr


def test_show_prints_a_run(tmp_path):
    path = sorted(glob.glob(os.path.join(FIX_RESULTS, "*", "*", "tcp-r",
                                         "*.json")))[0]
    png = str(tmp_path / "cwnd.png")
    r = satnet("show", path, "--png", png)
    assert r.returncode == 0, r.stderr
    assert "srcversion" in r.stdout and "self-check" in r.stdout
    assert os.path.getsize(png) > 1000
    r = satnet("show", str(tmp_path / "none.json"))
    assert r.returncode == 2


def test_show_prints_time_in_each_ca_state(tmp_path):
    """In process: the command above runs the installed package."""
    assert "CA states" not in show.describe(fixture_records()[0])
    res = with_ca(tmp_path, "tcp-r")
    path = sorted(glob.glob(os.path.join(res, "*", "*", "tcp-r",
                                         "*.json")))[0]
    text = show.describe(record.load(path))
    assert "\n0    CA states Open 30% / Disorder 5% / CWR 0% / Recovery " \
        "60% / Loss 5%; entries Recovery 7, Loss 1 (500 samples over " \
        "10.0 s, every 20 ms, asked 20, longest gap 50 ms)\n" in text, text


def test_fixture_record_json_is_compact():
    """Fixtures are real records with the series cut short."""
    for p in glob.glob(os.path.join(FIX_RESULTS, "**", "*.json"),
                       recursive=True):
        assert os.path.getsize(p) < 40000, p
        json.load(open(p))
    assert EXPERIMENT_DIR.endswith("experiments")


def test_epdn_on_a_red_path_marks_like_red():
    """A variant needing epdn on a RED/ECN path gets epdn with the red
    qdisc's thresholds and averaging weight (iproute2's
    tc_red_eval_ewma: burst 9, min 5 packets -> Wlog 3), and ECN."""
    from satnet.scenario import load_profile
    from satnet.topo import Topology, red_ewma_log
    assert red_ewma_log(5, 9) == 3
    assert red_ewma_log(5, 6) == 2          # a = 2 > (1 - 2^-6) / 0.5
    exp = xp.load_experiment("s000-fig2")
    lines = {}
    for v in ("tcp-r", "rr-tcp"):
        sc = exp.scenario_for(v, {}, 10)
        assert sc.sysctl["net.ipv4.tcp_ecn"] == 1
        lines[v] = Topology(sc, load_profile("linux")).bottleneck_lines(
            "b")[-1]
    assert "epdn" in lines["tcp-r"] and \
        "red min 7500 max 22500 probability 0.1 ewma 3 ecn" in lines["tcp-r"]
    assert "red limit" in lines["rr-tcp"] and "min 7500 max 22500" in \
        lines["rr-tcp"] and "burst 9" in lines["rr-tcp"]


def test_mix_flows_get_their_own_profiles_and_a_swept_profile_wins():
    exp = xp.load_experiment("s000-fig9")
    flows = exp.points("full")[0].spec()["flows"]
    assert {f["variant"]: f["profile"] for f in flows} == {
        "tcp-r": "linux-ecn", "rn-epdnv3": "linux-ecn", "sack-ns2": "sack-ns2",
        "dsack-r": "dsack-r", "rr-tcp": "rr-tcp"}
    exp = xp.load_experiment("s003-fig5")
    for p in exp.points("full")[:2]:
        profiles = {f["profile"] for f in p.spec()["flows"]}
        assert profiles == {p.point["run.profile"]}


def test_a_changed_point_is_run_again(tmp_path):
    from satnet.runner import stored
    exp = xp.load_experiment(write_exp(tmp_path, BASE))
    pt = exp.points("full")[0]
    path = tmp_path / "r" / pt.relpath()
    rec = {"meta": {"spec": pt.spec()}}
    record.write(rec, str(path))
    assert stored(pt, str(tmp_path / "r"))
    rec["meta"]["spec"]["flows"][0]["profile"] = "sack"
    record.write(rec, str(path))
    assert not stored(pt, str(tmp_path / "r"))
    record.write({"meta": {}}, str(path))        # before meta.spec existed
    assert not stored(pt, str(tmp_path / "r"))


# ---- the head-to-head page --------------------------------------------------------

H2H = '''name = "h2h-fx"
title = "Fixture: head to head"
source = "seed 004 §VI"
scenario = "leo-palazzi"
variants = ["reno", "tcp-r"]

[full]
reps = 2
duration_s = 10

[plot]
y = "limit_share"
label = "goodput / limit"

[[claim]]
id = "h2h-fx-best"
text = "ours beats theirs"
best = { ours = ["tcp-r"], theirs = ["reno"] }
'''


def h2h_fixture(tmp_path):
    """The fixture's runs at 2 % packet errors, as a head-to-head
    experiment without a sweep."""
    exp = tmp_path / "exp"
    exp.mkdir()
    shutil.copy(os.path.join(FIX_EXP, "fx-sweep.toml"), exp)
    (exp / "h2h-fx.toml").write_text(H2H)
    res = tmp_path / "r"
    shutil.copytree(FIX_RESULTS, res)
    for path in glob.glob(os.path.join(FIX_RESULTS, "fx-sweep", "full", "*",
                                       "forward.per=0.02-rep*.json")):
        rec = record.load(path)
        rec.pop("_path")
        rec.update(experiment="h2h-fx", point={})
        record.write(rec, str(res / "h2h-fx" / "full" / rec["variant"] /
                              ("base-rep%d.json" % rec["rep"])))
    respec(str(res), str(exp))
    return str(exp), str(res)


def edit_h2h_runs(res, variant, edit):
    """Apply @edit(rec, i) to the i-th stored run of @variant of h2h-fx
    (in path order) and store it again; the paths edited."""
    paths = sorted(glob.glob(os.path.join(res, "h2h-fx", "full", variant,
                                          "*.json")))
    for i, p in enumerate(paths):
        rec = record.load(p)
        rec.pop("_path")
        edit(rec, i)
        record.write(rec, p)
    return paths


def h2h_page(tmp_path, exp, res):
    """The head-to-head page `satnet report` builds from @res."""
    page = tmp_path / "head-to-head.md"
    page.write_text("%s\n%s\n" % (report.h2h.BEGIN, report.h2h.END))
    report.build(md=str(tmp_path / "results.md"), results=res,
                 experiments=exp, command="pytest")
    return page.read_text()


def test_limit_is_the_rate_less_framing_and_loss():
    geo = {"rate_bps": 1.5e6, "mss": 1448,
           "forward": {"mean_loss": 1 - (1 - 1e-6) ** 12000}}
    assert record.limit_bps(geo) / 1.5e6 == pytest.approx(0.9447, abs=1e-4)
    old = {"rate_bps": 1e6, "mss": 0, "forward": {"per": 0.02, "loss": 0.0}}
    assert record.limit_bps(old) == pytest.approx(1e6 * 1448 / 1514 * 0.98)


def test_best_at_least_is_non_inferiority(tmp_path):
    """A best-of claim with at_least = true holds for ours equal to
    theirs within the margin, where `better` finds no effect; the seed
    column says which was asked."""
    exp, res = h2h_fixture(tmp_path)
    for variant in ("tcp-r", "reno"):
        edit_h2h_runs(res, variant, lambda rec, i: rec["summary"][
            "variants"][rec["variant"]].update(
                goodput=(1.0, 1.01, 0.99)[i]))
    for i in (2, 3, 4):
        for variant in ("tcp-r", "reno"):
            src = os.path.join(res, "h2h-fx", "full", variant,
                               "base-rep0.json")
            rec = record.load(src)
            rec.pop("_path")
            rec["rep"] = i
            rec["summary"]["variants"][variant]["goodput"] = \
                (1.0, 1.01, 0.99, 1.0, 1.0)[i]
            record.write(rec, src.replace("rep0", "rep%d" % i))
    path = os.path.join(exp, "h2h-fx.toml")
    rows = {}
    for spec in ("", ", at_least = true"):
        with open(path, "w") as f:
            f.write(H2H.replace('theirs = ["reno"] }',
                                'theirs = ["reno"]%s }' % spec))
        md = tmp_path / "results.md"
        report.build(md=str(md), results=res, experiments=exp,
                     command="pytest")
        rows[spec] = [x for x in md.read_text().splitlines()
                      if x.startswith("| h2h-fx-best")][0]
    assert "best of tcp-r > best of reno" in rows[""]
    assert "**effect absent**" in rows[""], rows[""]
    assert "best of tcp-r ≥ best of reno (margin 1.1×)" in \
        rows[", at_least = true"]
    assert "**reproduced**" in rows[", at_least = true"], rows
    # ours retransmitting more than the cap: not ranked, so nothing of
    # ours is left to meet the goal
    with open(path, "w") as f:
        f.write(H2H.replace('theirs = ["reno"] }', 'theirs = ["reno"], '
                            'at_least = true, retrans_max = 0.01 }'))
    edit_h2h_runs(res, "tcp-r", lambda rec, i: rec["summary"]["variants"][
        "tcp-r"].update(retrans_share=0.02))
    report.build(md=str(md), results=res, experiments=exp, command="pytest")
    row = [x for x in md.read_text().splitlines()
           if x.startswith("| h2h-fx-best")][0]
    assert "over 1 % of what they send not ranked" in row
    assert "every one of ours retransmits more than 1 %" in row
    assert "**contradicted**" in row, row


def test_head_to_head_claims_rank_as_the_page_does():
    """Every head-to-head experiment's best-of claim is the page's goal:
    at least, with the page's cap on retransmissions."""
    exps = [e for e in xp.load_all() if e.name.startswith(report.h2h.PREFIX)]
    assert exps
    for e in exps:
        best = [c for c in e.claims if c.form == "best"]
        assert len(best) == 1, e.name
        assert best[0].spec.get("at_least") is True, e.name
        assert best[0].spec.get("retrans_max") == report.h2h.RETRANS_MAX, \
            e.name


def test_best_takes_only_its_keys():
    for spec in ({"ours": ["a"], "theirs": ["b"], "at_least": 1},
                 {"ours": ["a"], "theirs": ["b"], "most": True},
                 {"ours": ["a"], "theirs": ["b"], "retrans_max": 10},
                 {"ours": ["a"]}):
        with pytest.raises(xp.ExperimentError, match="best needs"):
            xp.Claim({"id": "c", "text": "t", "best": spec},
                     type("E", (), {"name": "e", "source": "", "metric":
                                    "goodput", "variants": ["a", "b"]}))


def test_head_to_head_page_keeps_its_text(tmp_path):
    """The report writes the tables between the page's markers, and
    leaves the text around them as it was; the shares are goodput over
    the path's limit."""
    exp, res = h2h_fixture(tmp_path)
    page = tmp_path / "head-to-head.md"
    page.write_text("# Mine\n\nprose before\n\n%s\nold\n%s\n\nprose after\n"
                    % (report.h2h.BEGIN, report.h2h.END))
    md = tmp_path / "results.md"
    report.build(md=str(md), results=res, experiments=exp, command="pytest")
    text = page.read_text()
    assert text.startswith("# Mine\n\nprose before\n\n" + report.h2h.BEGIN)
    assert text.endswith(report.h2h.END + "\n\nprose after\n")
    assert "\nold\n" not in text
    assert (tmp_path / "results" / "head-to-head.png").stat().st_size > 1000
    recs = [record.load(p) for p in glob.glob(
        os.path.join(res, "h2h-fx", "full", "tcp-r", "*.json"))]
    shares = [r["summary"]["variants"]["tcp-r"]["goodput"] * 1e6 /
              (1e6 * 1436 / 1502 * 0.98) for r in recs]
    want = stats.Estimate(shares)
    row = [x for x in text.splitlines() if x.startswith("| tcp-r | 2 |")][0]
    assert "%.1f ± %.1f %%" % (100 * want.mean, 100 * want.half) in row, row
    summary = [x for x in text.splitlines() if x.startswith("| fx |")][0]
    assert "| tcp-r |" in summary and "| reno |" in summary
    claim = [x for x in md.read_text().splitlines()
             if x.startswith("| h2h-fx-best")][0]
    assert "best of tcp-r > best of reno" in claim
    report.build(md=str(md), results=res, experiments=exp, command="pytest")
    assert page.read_text() == text


def test_best_claim_is_checked(tmp_path):
    bad = H2H.replace('theirs = ["reno"]', 'theirs = []')
    (tmp_path / "h2h-fx.toml").write_text(bad)
    with pytest.raises(xp.ExperimentError, match="best needs"):
        xp.load_all(folder=str(tmp_path))


SS_LINE = (
    "ESTAB 0 1448000 10.0.1.1:40000 10.0.2.1:5201\n"
    "\t cubic wscale:7,7 rto:1236 rtt:612.3/4.1 mss:1448 cwnd:22 "
    "ssthresh:13 bytes_sent:2263173 bytes_retrans:251300 "
    "bytes_acked:1506402 unacked:352 retrans:1/176 lost:1 sacked:340 "
    "reordering:9\n")


def test_ss_row_keeps_the_scoreboard():
    from satnet.measure import parse_ss
    [row] = parse_ss(SS_LINE)
    assert row["sport"] == 40000
    assert (row["unacked"], row["sacked"], row["lost"]) == (352, 340, 1)
    assert (row["retrans_out"], row["retrans_total"]) == (1, 176)
    assert row["reordering"] == 9 and row["rtt_ms"] == 612.3


def test_cc_counters_outlast_the_close():
    """A socket in CLOSE_WAIT shows tcp_info but no congestion control
    counters: the last sample that has them counts."""
    from satnet.measure import last_cc_row, parse_ss
    live = SS_LINE.replace(
        "reordering:9", "reordering:9 dctcp:(ce_state:3,alpha:15,"
        "ab_ecn:0,ab_tot:1)")
    closing = SS_LINE.replace("ESTAB", "CLOSE-WAIT")
    rows = parse_ss(live) + parse_ss(closing)
    assert "dctcp_alpha" not in rows[-1]
    assert last_cc_row(rows)["dctcp_alpha"] == 15
    assert last_cc_row(parse_ss(closing)) == {}


def test_pinned_covers_what_other_variants_set(tmp_path):
    import copy
    exp = xp.load_experiment(write_exp(tmp_path, BASE.replace(
        '["reno", "tcp-r"]', '["reno", "tcp-r", "tcp-r-rtt0"]')))
    plain = copy.copy(exp.catalogue["tcp-r"])
    plain.params = {}                  # a variant that names no rtt0_ms
    exp.catalogue["tcp-r"] = plain
    pts = {p.variant: p for p in exp.points("full")}
    assert pts["tcp-r"].pinned() == {"tcp_r": {"rtt0_ms": None}}
    assert pts["tcp-r-rtt0"].pinned() == {"tcp_r": {"rtt0_ms": 25}}
    assert pts["reno"].pinned() == {}


def test_gate_gives_parameters_back(tmp_path, monkeypatch):
    from satnet import kmod, runner
    monkeypatch.setattr(kmod, "param_path",
                        lambda m, p: str(tmp_path / ("%s.%s" % (m, p))))
    rtt0, es = tmp_path / "tcp_r.rtt0_ms", tmp_path / "tcp_rn.es"
    rtt0.write_text("0\n")
    es.write_text("N\n")
    g = runner.ParamGate()
    with g.hold({"tcp_r": {"rtt0_ms": 25}, "tcp_rn": {"es": True}}):
        assert (rtt0.read_text(), es.read_text()) == ("25\n", "1\n")
        with g.hold({"tcp_r": {"rtt0_ms": 25}}):      # the same: shared
            pass
        assert rtt0.read_text() == "25\n"
        assert not g._free({("tcp_r", "rtt0_ms"): "0"})
    assert (rtt0.read_text(), es.read_text()) == ("0\n", "0\n")
    with g.hold({"tcp_r": {"rtt0_ms": None}, "tcp_rn": {"es": 0}}):
        assert rtt0.read_text() == "0\n"
        assert not g._free({("tcp_r", "rtt0_ms"): "25"})
    assert g.held == {}


def test_own_ehash_sets_the_childrens_table_and_puts_the_parents_back(
        tmp_path):
    from satnet import host
    knob = tmp_path / "tcp_child_ehash_entries"
    knob.write_text("0\n")
    with host.own_ehash(1024, str(knob)):
        assert knob.read_text() == "1024"
    assert knob.read_text() == "0"
    with pytest.raises(RuntimeError):
        with host.own_ehash(64, str(knob)):
            raise RuntimeError("ip netns add failed")
    assert knob.read_text() == "0"
    with host.own_ehash(64, str(tmp_path / "absent")):
        pass
    assert not (tmp_path / "absent").exists()


def test_cpu_use_is_the_elapsed_time_less_idle(tmp_path):
    """Busy time is what the CPUs did not spend idle; the sampled user
    and system ticks are not read."""
    from satnet import measure
    hz = os.sysconf("SC_CLK_TCK")
    stat = tmp_path / "stat"

    def at(idle, now, busy_ticks=0):
        stat.write_text("cpu  %d 0 0 %d 0 0 0 0 0 0\ncpu0 1 2 3 4\n"
                        "cpu1 1 2 3 4\nintr 5\n" % (busy_ticks, idle))
        return measure.cpu_times(str(stat), now=now)

    t0 = at(800 * hz // 100, 100.0)
    assert t0 == (8.0, 2, 100.0)
    use = measure.cpu_use(t0, at(t0[0] * hz + 2 * hz, 110.0, 10 ** 6))
    assert use["busy_share"] == 0.9 and use["cpu_bound"]
    assert use["cpus"] == 2
    use = measure.cpu_use(t0, at(t0[0] * hz + 19.6 * hz, 110.0))
    assert use["busy_share"] == 0.02 and not use["cpu_bound"]
    rec = fixture_records()[0]
    rec["host"]["cpu"] = use
    assert "CPU: busy 2 %" in show.describe(rec)
    assert record.summarize(rec, 1.5e6, 1448)["cpu_bound"] is False


def test_one_version():
    """VERSION is the project's version: the Makefile, the Python package
    and every module take it from there; dkms.conf repeats it."""
    version = open(os.path.join(TOP, "VERSION")).read().strip()
    assert version
    with open(os.path.join(TOP, "dkms.conf")) as f:
        assert 'PACKAGE_VERSION="%s"\n' % version in f.read()
    with open(os.path.join(TOP, "pyproject.toml")) as f:
        py = f.read()
    assert 'dynamic = ["version"]' in py
    assert 'version = { file = "VERSION" }' in py
    with open(os.path.join(TOP, "Kbuild")) as f:
        assert "-DSATNET_VERSION='\"$(file < $(src)/VERSION)\"'" in f.read()
    with open(os.path.join(TOP, "Makefile")) as f:
        assert "PROJECT_VERSION := $(file < VERSION)" in f.read()
    sources = glob.glob(os.path.join(TOP, "*", "*.c"))
    calls = [ln.strip() for src in sources for ln in open(src)
             if ln.startswith("MODULE_VERSION(")]
    assert calls and set(calls) == {"MODULE_VERSION(SATNET_VERSION);"}


# ---- several guests, the width check --------------------------------------


def run_args(*args):
    from satnet.cli import parser
    a = parser().parse_args(["run", FX_SWEEP, "--full"] + list(args))
    a.argv = ["run", FX_SWEEP, "--full"] + list(args)
    return a


def fx_points(reps=5):
    """The fixture's points with durations of 10 to 130 s, unevenly."""
    pts = xp.load_experiment(FX_SWEEP).points("full", reps=reps)
    for i, p in enumerate(pts):
        p.duration = 10 + (i * 37) % 121
    return pts


@pytest.mark.parametrize("n", [1, 2, 3, 7, 30])
def test_split_is_complete_disjoint_balanced_and_deterministic(n):
    from satnet import cli
    pts = fx_points()
    shares = cli.split(pts, n, 3)
    assert len(shares) == n
    got = [id(p) for s in shares for p in s]
    assert sorted(got) == sorted(map(id, pts)) and len(set(got)) == len(pts)
    for s in shares:                    # each in the run's order
        assert s == [p for p in pts if any(p is q for q in s)]
    loads = [cli.estimate_s(s, 3) for s in shares]
    biggest = max(cli.estimate_s([p], 3) for p in pts)
    assert max(loads) - min(loads) <= biggest
    if n <= len(pts):
        assert all(shares)
    assert [[p.relpath() for p in s] for s in cli.split(pts, n, 3)] == \
        [[p.relpath() for p in s] for s in shares]


def test_split_keeps_the_width_check_in_one_guest():
    from satnet import cli
    pts = fx_points(reps=3)
    blocks = cli.width_check_blocks(run_args("--width-check",
                                             "fx-sweep:reno"), pts)
    check = [p for b in blocks for p in b]
    shares = cli.split(pts + check, 2, 3)
    holders = [i for i, s in enumerate(shares) for p in s if p in check]
    assert len(holders) == len(check) and len(set(holders)) == 1
    assert sum(map(len, shares)) == len(pts) + len(check)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_guest_done_early_takes_the_others_points_from_their_ends(n):
    from satnet import cli
    pts = fx_points(reps=3)
    blocks = cli.width_check_blocks(run_args("--width-check",
                                             "fx-sweep:reno"), pts)
    check = [p for b in blocks for p in b]
    shares = cli.split(pts + check, n, 3)
    qs = cli.queues(shares, check)
    assert len(qs) == n
    for g, q in enumerate(qs):
        assert q[:len(shares[g])] == shares[g]
        assert len({id(p) for p in q}) == len(q)
        rest = q[len(shares[g]):]
        assert {id(p) for p in rest} == {
            id(p) for h, s in enumerate(shares) if h != g for p in s
            if not any(p is c for c in check)}
        if n == 2:              # the other's share, from its end
            other = [p for p in shares[1 - g]
                     if not any(p is c for c in check)]
            assert rest == other[::-1]


def test_each_point_is_claimed_by_one_runner(tmp_path, monkeypatch):
    import contextlib
    import threading

    from satnet import cli, runner
    pts = fx_points(reps=3)
    ran = []
    monkeypatch.setattr(runner, "load_modules", lambda pt: None)
    monkeypatch.setattr(runner, "run_point",
                        lambda pt, *a, **k: ran.append(pt.relpath()) or {
                            "meta": {}, "summary": {"goodput_bps": 1e6,
                                                    "jain": None}})
    monkeypatch.setattr(record, "write", lambda rec, path: None)
    monkeypatch.setattr(runner, "stored", lambda *a, **k: False)
    monkeypatch.setattr(record, "git_state", lambda: None)
    folder = tmp_path / "claimed"
    folder.mkdir()
    claim = cli.claimer(str(folder))
    runners = [runner.Runner(2, str(tmp_path), log=lambda m: None,
                             claim=claim) for _ in range(3)]
    for r in runners:
        r.gate = type("Gate", (), {"hold": lambda self, p:
                                   contextlib.nullcontext()})()
    threads = [threading.Thread(target=r.run, args=(q,)) for r, q in
               zip(runners, cli.queues(cli.split(pts, 3, 2)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(ran) == sorted(p.relpath() for p in pts)
    assert sum(r.ran for r in runners) == len(pts)
    assert len(list(folder.iterdir())) == len(pts)
    assert not cli.claimer(str(folder))(pts[0])


def test_default_guests_follow_the_clock(monkeypatch):
    from satnet import cli
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert cli.guest_count(run_args("--clock", "virtual")) == 4
    assert cli.guest_count(run_args()) == 1
    assert cli.guest_count(run_args("--clock", "real")) == 1
    assert cli.guest_count(run_args("--clock", "virtual", "--guests",
                                    "2")) == 2
    assert cli.guest_count(run_args("--guests", "3")) == 3


def test_each_point_runs_on_its_paths_clock_unless_told(monkeypatch):
    """No --clock: the points on a path whose run.clock is virtual in
    guests of the virtual clock first, then the others on the real
    clock; --clock puts every point on one; each guest gets the
    --clock of its group only."""
    from satnet import cli
    from satnet.scenario import load_scenario
    # a point's own clock is its path's run.clock
    assert xp.load_experiment(FX_SWEEP).points("full")[0].clock() == \
        load_scenario("leo-palazzi").clock
    pts = fx_points(reps=2)
    monkeypatch.setattr(xp.Point, "clock", lambda p: "virtual"
                        if p.variant == "tcp-r" else "real")
    groups = cli.clock_groups(run_args(), pts)
    assert [c for c, _ in groups] == ["virtual", "real"]
    assert [p.variant for p in groups[0][1]] == ["tcp-r"] * 4
    assert [p.variant for p in groups[1][1]] == ["reno"] * 4
    assert cli.clock_groups(run_args("--clock", "real"), pts) == \
        [("real", pts)]
    assert cli.clock_groups(run_args(), []) == [("real", [])]
    # the clock is not what a point runs: its stored records stand
    assert "clock" not in pts[0].spec()["scenario"]
    cmds = []
    monkeypatch.setattr(cli, "in_vm", lambda a, shares, check=(): (
        cmds.append((a.clock, len(shares), sorted(
            {p.variant for s in shares for p in s}))), 0)[1])
    monkeypatch.setattr(cli, "check_built", lambda: None)
    monkeypatch.setattr(cli, "selected_points", lambda a: list(pts))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    a = run_args("--results", os.path.join(TOP, "build", "no-such-dir"))
    monkeypatch.setattr(cli, "writable_dir", lambda d: None)
    assert cli.cmd_run(a) == 0
    assert cmds == [("virtual", 2, ["tcp-r"]), ("real", 1, ["reno"])]


def test_the_summary_names_each_clock_and_its_points(monkeypatch, capsys):
    from satnet import cli
    pts = fx_points(reps=2)
    monkeypatch.setattr(xp.Point, "clock", lambda p: "virtual"
                        if p.variant == "tcp-r" else "real")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(cli, "selected_points", lambda a: list(pts))
    a = run_args("--dry-run", "--results", "/nonexistent")
    assert cli.cmd_run(a) == 0
    err = capsys.readouterr().err
    assert "on the virtual clock (4 points), 2 guests at once, then on " \
        "the real clock (4 points) (virtual minutes: " in err, err
    cli.cmd_run(run_args("--dry-run", "--results", "/nonexistent",
                         "--clock", "real"))
    err = capsys.readouterr().err
    assert err.endswith("at width 3 on the real clock\n"), err


def test_a_guests_limit_has_room_for_the_virtual_clocks_start():
    """Twice the estimate and 15 minutes; on the virtual clock, whose
    guest seconds race while the guest waits on a busy host, 30 more."""
    from satnet import cli
    pts = fx_points()
    est = cli.estimate_s(pts, 3)
    assert cli.guest_timeout(run_args(), pts) == int(est * 2 + 900)
    assert cli.guest_timeout(run_args("--clock", "virtual"), pts) == \
        int(est * 2 + 2700)


def test_the_estimate_counts_the_guests(tmp_path):
    one = satnet("run", FX_SWEEP, "--full", "--dry-run", "--results",
                 str(tmp_path), "--clock", "real", "--guests", "1")
    two = satnet("run", FX_SWEEP, "--full", "--dry-run", "--results",
                 str(tmp_path), "--clock", "virtual", "--guests", "2")
    assert one.returncode == two.returncode == 0, two.stderr
    assert "about 3 min at width 3 on the real clock\n" in one.stderr, \
        one.stderr
    # 8 points of 10 s, 4 a guest: 4 * 60 s / 3 = 80 s
    assert "about 1 min at width 3 on the virtual clock, 2 guests at " \
        "once (virtual minutes: " in two.stderr
    assert "virtual minutes" not in one.stderr
    assert one.stdout == two.stdout     # the same records


def test_a_guest_runs_only_the_points_it_was_given(tmp_path):
    from satnet import cli
    pts = xp.load_experiment(FX_SWEEP).points("full")
    shares = cli.split(pts, 2, 3)
    out = []
    for i, share in enumerate(shares):
        only = tmp_path / ("guest-%d.points" % i)
        only.write_text("".join(p.relpath() + "\n" for p in share))
        r = satnet("run", FX_SWEEP, "--full", "--dry-run", "--results",
                   str(tmp_path), "--only", str(only), "--guests", "2",
                   "--here")
        assert r.returncode == 0, r.stderr
        assert "8 to run, %d of them here" % len(share) in r.stderr
        assert r.stdout.split() == [p.relpath() for p in share]
        out += r.stdout.split()
    assert sorted(out) == sorted(p.relpath() for p in pts)


def test_each_guest_has_its_points_and_console_and_fails_alone(
        monkeypatch, tmp_path):
    from satnet import cli
    started = []

    class Proc:
        def __init__(self, rc):
            self.rc = rc

        def wait(self):
            return self.rc

        def poll(self):
            return self.rc

    class Thread:
        def join(self):
            pass

    def guest(cmd, prefix):
        only = cmd[cmd.index("--only") + 1]
        started.append((cmd, open(only).read().split()))
        return Proc(3 if len(started) == 2 else 0), Thread()

    monkeypatch.setattr(cli, "guest", guest)
    pts = fx_points(reps=3)
    a = run_args("--clock", "virtual", "--guests", "3")
    shares = cli.split(pts, 3, a.width)
    assert cli.in_vm(a, shares) == 1
    logs = [c[c.index("--log") + 1] for c, _ in started]
    assert len(set(logs)) == 3 and all(os.path.dirname(x) ==
                                       os.path.join(TOP, "build")
                                       for x in logs)
    assert [names for _, names in started] == \
        [[p.relpath() for p in q] for q in cli.queues(shares)]
    assert all(names[:len(s)] == [p.relpath() for p in s]
               for (_, names), s in zip(started, shares))
    claims = {c[c.index("--claim-dir") + 1] for c, _ in started}
    assert len(claims) == 1
    assert all(c[c.index("--") + 1:][-3:] == ["--here", "--claim-dir",
                                               *claims]
               and "--clock" in c for c, _ in started)
    assert not os.path.exists(os.path.dirname(
        started[0][0][started[0][0].index("--only") + 1]))
    started.clear()
    monkeypatch.setattr(cli, "guest", lambda cmd, prefix: (Proc(0),
                                                           Thread()))
    assert cli.in_vm(a, shares) == 0
    # real clock, two guests: two VMs, never two runs in this kernel
    calls = []
    monkeypatch.setattr(cli, "guest", lambda cmd, prefix: (
        calls.append(cmd), (Proc(0), Thread()))[1])
    assert cli.in_vm(run_args("--guests", "2"), shares[:2]) == 0
    assert all("--vm" in c[:c.index("--")] for c in calls)


def test_two_runs_at_once_write_their_own_consoles():
    """A second run in this checkout while one runs takes other console
    logs: vm-run truncates its log, and its fault check reads it."""
    from satnet import cli
    with contextlib.ExitStack() as first:
        a = cli.console_logs(2, first)
        with contextlib.ExitStack() as second:
            b = cli.console_logs(2, second)
            assert len(set(a + b)) == 4
            assert all(os.path.dirname(x) == os.path.join(TOP, "build")
                       for x in a + b)
            assert cli.console_logs(1, second)[0] not in a + b
    with contextlib.ExitStack() as alone:
        solo = cli.console_logs(1, alone)
    with contextlib.ExitStack() as again:
        assert cli.console_logs(2, again) == a
        assert cli.console_logs(1, again) != solo


@pytest.mark.parametrize("guests", [1, 2])
def test_a_term_signal_stops_every_guest(monkeypatch, guests):
    """`kill` of satnet alone (SIGTERM, not Ctrl-C to the whole group)
    reaches none of its children: the run stops them itself."""
    import signal
    import threading
    from satnet import cli
    started, real_popen = [], subprocess.Popen
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    runs = set(glob.glob(os.path.join(TOP, "build", "satnet-run-*")))

    class Thread:
        def join(self):
            pass

    def guest(cmd, prefix):
        started.append(real_popen(sleeper))
        return started[-1], Thread()

    def popen(cmd):
        started.append(real_popen(sleeper))
        return started[-1]

    monkeypatch.setattr(cli, "guest", guest)
    monkeypatch.setattr(cli.subprocess, "Popen", popen)
    before = signal.getsignal(signal.SIGTERM)
    a = run_args("--clock", "virtual", "--guests", str(guests))
    shares = cli.split(fx_points(reps=2), guests, a.width)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGTERM))
    timer.start()
    try:
        with pytest.raises(SystemExit) as e:
            cli.in_vm(a, shares)
    finally:
        timer.cancel()
    assert e.value.code == 128 + signal.SIGTERM
    assert len(started) == guests
    assert all(p.poll() == -signal.SIGTERM for p in started)
    assert signal.getsignal(signal.SIGTERM) is before
    assert set(glob.glob(os.path.join(TOP, "build", "satnet-run-*"))) == runs


def test_width_check_interleaves_its_two_arms():
    from satnet import cli
    pts = fx_points(reps=4)
    blocks = cli.width_check_blocks(run_args("--width-check",
                                             "fx-sweep:reno"), pts)
    alone = [b for b in blocks if b[0].mode == "check3-alone"]
    beside = [b for b in blocks if b[0].mode == "check3-beside"]
    assert len(alone) + len(beside) == len(blocks)
    # 2 cells of 4 reps: alone one by one; side by side 6 reps a cell
    assert len(alone) == 8 and all(len(b) == 1 for b in alone)
    assert len(beside) == 4 and all(len(b) == 3 for b in beside)
    assert {p.variant for b in blocks for p in b} == {"reno"}
    names = [p.relpath() for b in blocks for p in b]
    assert len(set(names)) == len(names) == 20
    arm = "".join("a" if b in alone else "B" for b in blocks)
    assert arm == "aBaaBaaBaaBa", arm
    assert str(alone[0][0]).endswith("rep 0 (check3-alone)")
    assert cli.width_check_blocks(run_args(), pts) == []
    # a verdict needs 3 runs an arm: a quick set's 2 reps get a third
    blocks = cli.width_check_blocks(run_args("--width-check",
                                             "fx-sweep:reno", "--width",
                                             "2"), fx_points(reps=2))
    reps = [(p.mode, p.key(), p.rep) for b in blocks for p in b]
    assert sorted(reps) == sorted(
        (m, k, r) for k in ("forward.per=0.001", "forward.per=0.02")
        for m, n in (("check2-alone", 3), ("check2-beside", 4))
        for r in range(n))


def fabricated(mode, rep, width, goodput_scale, template):
    rec = json.loads(json.dumps(template))
    rec.pop("_path", None)
    rec["mode"], rec["rep"] = mode, rep
    rec["meta"]["width"] = width
    for f in rec["flows"]:
        f["goodput_bps"] *= goodput_scale
    rec["summary"] = record.summarize(
        rec, rec["meta"]["scenario"]["rate_bps"], 1448)
    return rec


@pytest.mark.parametrize("alone,beside,verdict", [
    ([1.0, 1.01, 0.99], [1.0, 1.02, 0.98], "same"),
    ([1.0, 1.01, 0.99], [1.5, 1.52, 1.48], "differs"),
    ([1.0, 1.01, 0.99], [0.6, 0.61, 0.59], "differs"),
    # a CI that holds 1 but is wider than the margin shows nothing
    ([1.0, 1.5, 0.5], [1.0, 1.4, 0.6], "inconclusive"),
    ([1.0, 1.01], [1.0, 1.02], "pilot (fewer than 3 runs a side)"),
])
def test_width_check_is_judged_as_equivalence(alone, beside, verdict):
    exp = xp.load_experiment(FX_SWEEP)
    path = glob.glob(os.path.join(FIX_RESULTS, "fx-sweep", "full", "reno",
                                  "forward.per=0.02-rep0.json"))[0]
    t = record.load(path)
    recs = [fabricated("check3-alone", i, 1, x, t)
            for i, x in enumerate(alone)]
    recs += [fabricated("check3-beside", i, 3, x, t)
             for i, x in enumerate(beside)]
    # a batch an interrupted run left at width 2 does not count
    recs.append(fabricated("check3-beside", 9, 2, 5.0, t))
    lines = report.width_check({"fx-sweep": report.Results(exp, recs)})
    rows = [x for x in lines if x.startswith("| fx-sweep |")]
    assert len(rows) == 1, lines
    assert "| 3 | interleaved |" in rows[0]
    cell = rows[0].split(" | ")[-1]
    assert cell.startswith(verdict), rows[0]
    # an inconclusive cell says how many runs would decide it
    assert ("runs an arm would decide it" in cell) is \
        (verdict == "inconclusive"), cell
    assert "n=%d" % len(beside) in rows[0]
    assert "within 1.1×" in "\n".join(lines)


def test_older_serial_control_records_are_still_judged():
    exp = xp.load_experiment(FX_SWEEP)
    recs = [record.load(p) for p in glob.glob(os.path.join(
        FIX_RESULTS, "fx-sweep", "full", "reno", "forward.per=0.02-*"))]
    recs += [fabricated("serial", i, 1, 0.5, recs[0]) for i in range(3)]
    lines = report.width_check({"fx-sweep": report.Results(exp, recs)})
    rows = [x for x in lines if x.startswith("| fx-sweep |")]
    assert len(rows) == 1 and "serial control, not interleaved" in rows[0]
    assert "the older serial control" in lines[2]
    assert rows[0].endswith("| pilot (fewer than 3 runs a side) |")


class H2hRuns:
    """A stand-in for report.Results on one head-to-head path: @data maps
    a variant to its (limit share, retransmitted share) per run."""

    def __init__(self, data):
        self.data = data
        self.exp = type("E", (), {"variants": list(data)})

    def estimate(self, variant, point, metric=None):
        col = 1 if metric == "retrans_share" else 0
        return stats.Estimate([run[col] for run in self.data[variant]])

    best = report.Results.best


def test_a_variant_that_retransmits_too_much_is_not_ranked():
    """Over 10 % of what it sends retransmitted: left out of the bests,
    whatever its goodput."""
    res = H2hRuns({"greedy": [(0.95, 0.30), (0.93, 0.34)],
                   "fair": [(0.80, 0.02), (0.82, 0.03)],
                   "edge": [(0.90, 0.10), (0.90, 0.10)]})
    table = [{"variant": v, "share": res.estimate(v, {}),
              "retrans": res.estimate(v, {}, "retrans_share")}
             for v in res.exp.variants]
    assert [r["variant"] for r in table if report.h2h.flagged(r)] == \
        ["greedy"]
    assert report.h2h.best(res, table, ["greedy", "fair"])["variant"] == \
        "fair"
    assert report.h2h.best(res, table, ["greedy", "edge"])["variant"] == \
        "edge"
    assert report.h2h.best(res, table, ["greedy"]) is None


def test_head_to_head_page_gives_tcp_r_reasons_per_run(tmp_path):
    """Each run of a variant on r: its recoveries by reason as ss showed
    them last, the timeouts, the bottleneck's drops and the receiver's
    overflows, read from the record."""
    exp, res = h2h_fixture(tmp_path)
    text = h2h_page(tmp_path, exp, res)
    assert "standard: unmarked dupACK" in text
    for path in glob.glob(os.path.join(res, "h2h-fx", "full", "tcp-r",
                                       "*.json")):
        rec = record.load(path)
        cc = measure.last_cc_row(rec["flows"][0]["ss"])
        row = "| tcp-r | %d | %d | %d | %d | %d | %d | %d |" % (
            rec["rep"], cc.get("dctcp_ce_state", 0),
            cc.get("dctcp_alpha", 0), cc.get("dctcp_ab_ecn", 0),
            cc.get("dctcp_ab_tot", 0),
            rec["flows"][0]["counters"].get("TcpExtTCPTimeouts", 0),
            report.h2h._queue_drops(rec))
        assert row in text, (row, text[-1500:])
    assert "| reno | 0 |" not in text


def test_head_to_head_names_both_retransmission_shares(tmp_path):
    """Retransmitted segments over all segments sent, and over the new
    ones, side by side and named: 1/11 of sent is 1/10 of new."""
    exp, res = h2h_fixture(tmp_path)
    edit_h2h_runs(res, "tcp-r", lambda rec, i: rec["summary"]["variants"][
        "tcp-r"].update(retrans_share=(1 / 11, 1 / 21)[i]))
    text = h2h_page(tmp_path, exp, res)
    assert "| retransmitted, of segments sent | retransmissions per new " \
        "segment |" in text
    sent = stats.Estimate([1 / 11, 1 / 21])
    new = stats.Estimate([1 / 10, 1 / 20])
    row = [x for x in text.splitlines() if x.startswith("| tcp-r | 2 |")][0]
    assert "| %.1f ± %.1f %% | %.1f ± %.1f %% |" % (
        100 * sent.mean, 100 * sent.half, 100 * new.mean, 100 * new.half) \
        in row, row


def test_head_to_head_page_counts_runaway_windows(tmp_path, monkeypatch):
    """Each variant's largest cwnd over what the path holds (BDP at the
    base RTT plus the queue), and the runs whose window went over twice
    that, in bold; for tcp-r a missed goal."""
    monkeypatch.setattr(report.h2h, "GOAL_LINUX", ("reno",))
    exp, res = h2h_fixture(tmp_path)
    holds = math.ceil(1e6 * 0.084 / 8 / 536) + 100          # 20 + 100

    def runaway(rec, i):
        assert report.h2h.path_packets(rec["meta"]["scenario"]) == holds
        if i == 0:
            rec["flows"][0]["ss"][-1]["cwnd"] = 2 * holds + 1
    edit_h2h_runs(res, "tcp-r", runaway)
    text = h2h_page(tmp_path, exp, res)
    rows = {x.split(" | ")[0][2:]: x for x in text.splitlines()
            if x.startswith(("| tcp-r | 2 |", "| reno | 2 |"))}
    assert holds == 120
    assert "| %.2f, **1 of 2 runs over 2** |" % ((2 * holds + 1) / holds) \
        in rows["tcp-r"], rows
    goals = [x for x in text.splitlines() if x.startswith("| fx | 2 |")]
    assert "| 1 of 2 (**missed**) |" in goals[0], goals
    reno = max(s["cwnd"] for p in glob.glob(os.path.join(
        res, "h2h-fx", "full", "reno", "*.json"))
        for s in record.load(p)["flows"][0]["ss"] if "cwnd" in s)
    assert "| %.2f |" % (reno / holds) in rows["reno"], rows


def test_head_to_head_page_sets_tcp_r_against_its_goals(tmp_path,
                                                         monkeypatch):
    """A row per path for tcp-r: its share, its retransmissions against
    the 5 % goal (a miss is marked), its runaway runs, and the ratio to
    the best Linux sender named in GOAL_LINUX."""
    monkeypatch.setattr(report.h2h, "GOAL_LINUX", ("reno",))
    monkeypatch.setattr(record, "module_builds", lambda top=None: {})
    exp, res = h2h_fixture(tmp_path)

    def edit(rec, i):
        rec["summary"]["variants"]["tcp-r"]["retrans_share"] = 0.06 + i / 100
        if i == 0:
            rec["meta"]["clock"] = {"mode": "virtual", "icount_shift": 0}
    edit_h2h_runs(res, "tcp-r", edit)
    reno = record.load(os.path.join(res, "h2h-fx", "full", "reno",
                                    "base-rep0.json"))
    text = h2h_page(tmp_path, exp, res)
    assert "| best of reno | `tcp-r` / it |" in text
    row = [x for x in text.splitlines() if x.startswith("| fx | 2 |")]
    assert len(row) == 1, text
    share = [x for x in text.splitlines()
             if x.startswith("| tcp-r | 2 |")][0].split(" | ")[2]
    assert row[0].split(" | ")[2] == share, (row, share)
    assert "6.5 ± " in row[0] and "(**missed**) | 0 of 2 | reno " in row[0]
    clocks = sorted({"virtual (icount shift 0)",
                     record.clock_name(reno["meta"])})
    assert row[0].endswith("| **pilot** | %s |" % ", ".join(clocks)), row[0]
    # a run by another build of a module it loaded is named stale
    monkeypatch.setattr(record, "module_builds",
                        lambda top=None: {"tcp_r": "NEW"})
    for variant, builds in (("tcp-r", ("OLD", "NEW")), ("reno", ("NEW",) * 2)):
        edit_h2h_runs(res, variant, lambda rec, i: rec["meta"].update(
            modules={"tcp_r": {"srcversion": builds[i]}}))
    row = [x for x in h2h_page(tmp_path, exp, res).splitlines()
           if x.startswith("| fx | 2 |")]
    assert "| **pilot** (1 stale run) |" in row[0], row[0]


def test_flows_do_not_start_behind_a_queue(tmp_path, monkeypatch):
    """The self-check's rate test fills the bottleneck; a point whose
    queue still holds packets when its flows are due fails (the runner
    tries it again on a fresh path) instead of timing its flows behind
    the test's tail.  The qdiscs: a stored GEO record's
    bottleneck.before from before the drain."""
    from types import SimpleNamespace

    from satnet import runner
    full = [{"kind": "htb", "root": True, "qlen": 36, "backlog": 53056},
            {"kind": "epdn", "parent": "1:1", "qlen": 36, "backlog": 53056}]
    started = []
    monkeypatch.setattr(runner, "snapshot", lambda topo: {
        "qdisc": full, "snd": [{}], "rcv": [{}], "proc_snd": {},
        "proc_rcv": {}})
    monkeypatch.setattr(runner, "together",
                        lambda *a, **kw: started.append(a) or [])
    pt = xp.load_experiment(write_exp(tmp_path, BASE)).points("full")[0]
    topo = SimpleNamespace(schedule_steps=lambda duration: [],
                           tc_batch=lambda ns, lines: None)
    with pytest.raises(measure.SelfCheckError,
                       match=r"36 packets \(53056 bytes\) queued"):
        runner.measure_point(pt, topo, {})
    assert not started
    for q in full:
        q.update(qlen=0, backlog=0)
    measure.check_idle(full)


def test_the_self_checks_rtt_tolerance_is_the_runs(monkeypatch):
    """--rtt-tolerance PCT reaches the self-check, which names it when
    it refuses a path and keeps it in the record when it does not."""
    from satnet import cli
    topo = type("T", (), {"sc": type("S", (), {"rate_bps": 1e6})()})()
    monkeypatch.setattr(measure, "ping_rtt", lambda t: 103.0)
    monkeypatch.setattr(measure, "expected_ping_ms", lambda sc: 100.0)
    monkeypatch.setattr(measure, "bottleneck_rate", lambda t: 1e6)
    monkeypatch.setattr(measure, "wait_drained", lambda t: 0.5)
    with pytest.raises(measure.SelfCheckError, match=r"\(\+-2%\)"):
        measure.self_check(topo)
    assert measure.self_check(topo, 0.04)["rtt_tolerance"] == 0.04
    # an emulated real clock's slack is above the expected RTT only
    res = measure.self_check(topo, slack_ms=1.0)
    assert (res["rtt_tolerance"], res["rtt_slack_ms"]) == (0.02, 1.0)
    with pytest.raises(measure.SelfCheckError, match=r"\+0.5 ms on an emu"):
        measure.self_check(topo, slack_ms=0.5)
    monkeypatch.setattr(measure, "ping_rtt", lambda t: 97.0)
    with pytest.raises(measure.SelfCheckError, match="idle RTT 97.00"):
        measure.self_check(topo, slack_ms=4.0)
    monkeypatch.setattr(measure, "EMULATED_REAL", True)
    assert measure.rtt_slack_ms() == measure.RTT_SLACK_MS
    monkeypatch.setattr(measure, "EMULATED_REAL", False)
    assert measure.rtt_slack_ms() == 0
    monkeypatch.setattr(measure, "ping_rtt", lambda t: 103.0)
    assert run_args().rtt_tolerance == 2.0
    assert run_args("--rtt-tolerance", "4").rtt_tolerance == 4.0
    for bad in ("0", "51", "x"):
        with pytest.raises(SystemExit):
            cli.parser().parse_args(["run", "--rtt-tolerance", bad])


@pytest.mark.parametrize("rate, offered, ok", [
    (1.5e6, 1.66e6, True), (1.5e6, 1.64e6, False),
    (6e6, 6.61e6, True), (6e6, 6.5e6, False),
    # as fast as the access links: 95 % of their rate is all a load can be
    (10e6, 9.78e6, True), (10e6, 9.4e6, False), (9e6, 9.6e6, True),
])
def test_the_rate_test_needs_a_load_above_the_bottleneck(rate, offered, ok):
    """The rate test's load exceeds the bottleneck by 10 %, or reaches
    95 % of the access links' rate where the bottleneck is that fast."""
    sc = type("S", (), {"rate_bps": rate})()
    if ok:
        measure.check_offered(sc, offered)
    else:
        with pytest.raises(measure.SelfCheckError, match="offered only"):
            measure.check_offered(sc, offered)


def test_the_self_check_pings_past_the_reordering():
    """Enough pings that the minimum is the base RTT (one ping on the
    short path) but no more: 5, or 10 when half the packets are late."""
    from satnet.scenario import load_scenario
    assert measure.ping_count(load_scenario("geo")) == 5
    assert measure.ping_count(load_scenario("leo-ber")) == 5
    assert measure.ping_count(load_scenario("leo-multipath")) == 10
    late = load_scenario("geo", {"forward.reorder.fraction": 0.3})
    assert measure.ping_count(late) == 6            # 0.3^6 < 1e-3
    # the rate test counts 100 frames, 0.5 to 2 s
    assert measure.rate_window(load_scenario("geo")) == \
        pytest.approx(100 * 1514 * 8 / 1.5e6)
    assert measure.rate_window(load_scenario("mild-reorder")) == 0.5


def test_counters_are_parsed_from_proc_net():
    """What the harness reads in its own process during a point, instead
    of starting cat or ss."""
    dev = ("Inter-|   Receive                            |  Transmit\n"
           " face |bytes    packets errs drop fifo frame compressed "
           "multicast|bytes\n"
           "    lo:       0       0    0    0    0     0          0 "
           "        0        0\n"
           "     b: 1234567     900    0    0    0     0          0 "
           "        0    55555\n")
    assert measure.rx_bytes(dev, "b") == 1234567
    with pytest.raises(RuntimeError, match="no device s0"):
        measure.rx_bytes(dev, "s0")
    tcp6 = ("  sl  local_address                         remote_address"
            "                        st tx_queue rx_queue tr tm->when "
            "retrnsmt   uid  timeout inode\n"
            "   0: 00000000000000000000000000000000:1451 "
            "00000000000000000000000000000000:0000 0A 00000000:00000000 "
            "00:00000000 00000000     0        0 1 1 0000000000000000 100 "
            "0 0 10 0\n"
            "   1: 0000000000000000FFFF00000200000A:14B3 "
            "0000000000000000FFFF00000100000A:9C40 01 00000000:00000000 "
            "00:00000000 00000000     0        0 2 1 0000000000000000 20 "
            "4 30 10 -1\n")
    assert measure.listens(tcp6, 5201)
    assert not measure.listens(tcp6, 5299)        # connected, not LISTEN
    assert measure.listens(tcp6, 5299, udp=True)  # any bound UDP socket
    assert not measure.listens(tcp6, 5202)


def test_tc_reads_its_files_from_the_guest_in_the_vm(tmp_path, monkeypatch):
    """In the VM the checkout is a 9p share: tc (run in a point, with our
    plugin and netem tables) is pointed at a copy in the guest's tmpfs."""
    from satnet import host
    monkeypatch.setenv("SATNET_IN_VM", "1")
    monkeypatch.setattr(host, "GUEST_TC_LIB", str(tmp_path / "tclib"),
                        raising=False)
    monkeypatch.setattr(host, "_tc_lib", [host.TC_LIB], raising=False)
    host.prepare_tclib()
    lib = host.tc_env()["TC_LIB_DIR"]
    assert lib == str(tmp_path / "tclib")
    names = [n for n in os.listdir(host.TC_LIB) if not n.endswith(".tmp")]
    assert "satnet-normal3.dist" in names
    for n in names:
        copy = os.path.join(lib, n)
        assert os.path.isfile(copy) and not os.path.islink(copy)
        with open(copy, "rb") as a, open(os.path.join(host.TC_LIB, n),
                                         "rb") as b:
            assert a.read() == b.read(), n


def test_git_state_is_found_once_per_process(monkeypatch):
    """git status reads the state of every tracked file, in the VM over
    9p: each record of a run copies the state found for the first."""
    calls = []

    def fake_run(argv, **kw):
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 0, stdout="abc123\n",
                                           stderr="")
    from satnet import checkout
    monkeypatch.setattr(checkout, "_found", {})
    monkeypatch.setattr(checkout.subprocess, "run", fake_run)
    first = record.git_state()
    assert first == {"commit": "abc123", "dirty": True} and len(calls) == 2
    first["dirty"] = False                  # a record's own copy
    assert record.git_state() == {"commit": "abc123", "dirty": True}
    assert len(calls) == 2


def test_a_program_runs_from_its_copy_in_the_guest(tmp_path, monkeypatch):
    """In the VM the host's root is a 9p share: the programs a point
    starts run from copies in the guest's tmpfs, through a copy of the
    loader that bears the program's name, and do what the original does."""
    from satnet import host
    argv = host.localize("ls", where=str(tmp_path))
    assert argv[0] == str(tmp_path / "ls")
    with open(argv[0], "rb") as f:
        assert f.read(4) == b"\x7fELF"
    libs = os.listdir(tmp_path / "lib")
    assert "libc.so.6" in libs
    copy = subprocess.run(argv + ["-d", "/"], capture_output=True,
                          text=True, check=True)
    assert copy.stdout == subprocess.run(["ls", "-d", "/"],
                                         capture_output=True,
                                         text=True).stdout
    maps = subprocess.run(argv[:-1] + ["/bin/cat", "/proc/self/maps"],
                          capture_output=True, text=True, check=True).stdout
    assert "/lib/x86_64-linux-gnu/libc" not in maps
    assert str(tmp_path / "lib" / "libc.so.6") in maps
    monkeypatch.setattr(host, "_local", {"ls": argv})
    assert host.local_argv(["ls", "-l"]) == argv + ["-l"]
    assert host.local_argv(["cat", "x"]) == ["cat", "x"]
    assert host.program_env(["ls"])["LC_ALL"] == "C"
    assert host.program_env(["ls"])["TZ"] == "UTC0"
    assert host.program_env(["cat"]).get("LC_ALL") == os.environ.get("LC_ALL")
    monkeypatch.delenv("SATNET_IN_VM", raising=False)
    monkeypatch.setattr(host, "_local", {})
    host.prepare_programs()                 # outside the VM: nothing
    assert host.local_argv(["tc", "-V"]) == ["tc", "-V"]


def test_ldd_answers_are_read_and_a_missing_library_refused(monkeypatch):
    from satnet import host
    out = ("\tlinux-vdso.so.1 (0x00007ffd)\n"
           "\tlibiperf.so.0 => /lib/x86_64-linux-gnu/libiperf.so.0 (0x7f1)\n"
           "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x7f2)\n"
           "\t/lib64/ld-linux-x86-64.so.2 (0x7f3)\n")

    def fake(argv, **kw):
        return subprocess.CompletedProcess(argv, 0, stdout=out, stderr="")
    monkeypatch.setattr(host.subprocess, "run", fake)
    libs, loader = host.ldd("/usr/bin/iperf3")
    assert loader == "/lib64/ld-linux-x86-64.so.2"
    assert libs == {"libiperf.so.0": "/lib/x86_64-linux-gnu/libiperf.so.0",
                    "libc.so.6": "/lib/x86_64-linux-gnu/libc.so.6"}
    out = "\tlibz.so.1 => not found\n\t/lib64/ld-linux-x86-64.so.2 (0x1)\n"
    with pytest.raises(host.TopologyError, match="not found"):
        host.ldd("/usr/sbin/tc")


def test_report_marks_virtual_runs_of_a_path_not_cleared(tmp_path,
                                                          monkeypatch):
    """Runs made on the virtual clock of a path whose clock check has not
    cleared it (run.clock real) are named so in the header, the claim's
    verdict and the experiment's section; once the path is cleared, or
    where the runs are real, nothing is said."""
    import types
    res = tmp_path / "results"
    shutil.copytree(FIX_RESULTS, res)
    for f in glob.glob(str(res / "**" / "*.json"), recursive=True):
        rec = record.load(f)
        rec["meta"]["clock"] = {"mode": "virtual", "icount_shift": 0}
        record.write(rec, f)

    def page(clock, results):
        monkeypatch.setattr(report, "load_scenario",
                            lambda name: types.SimpleNamespace(clock=clock))
        md = tmp_path / ("%s.md" % clock)
        report.build(md=str(md), results=results, experiments=FIX_EXP)
        return md

    md = page("real", str(res))
    text = md.read_text()
    assert "- on the virtual clock of a path the clock check has not " \
        "cleared (its `run.clock` is real): 8 runs, of fx-sweep" in text
    assert "Clock: virtual (icount shift 0). The clock check has not " \
        "cleared" in text
    assert "runs on the virtual clock, which the clock check has not " \
        "cleared for this path)" in claim_line(md, "fx-ratio")
    for md in (page("virtual", str(res)), page("real", FIX_RESULTS)):
        text = md.read_text()
        assert "has not cleared" not in text and "not been cleared" \
            not in text
    assert "Clock: real (before flow steering)." in text


def test_a_module_counter_is_the_sender_hosts_when_its_flow_is_alone():
    flow = {"variant": "rn", "counters": {"TcpExtTCPTimeouts": 4}}
    rec = {"flows": [flow], "host": {"proc_sender": {
        "rn_sender.timeouts": 3}}}
    assert record.counter(rec, "rn", "TcpExtTCPTimeouts") == 4
    assert record.counter(rec, "rn", "rn_sender.timeouts") == 3
    assert record.counter(rec, "rn", "rn_sender.other") == 0
    assert record.counter(rec, "reno", "rn_sender.timeouts") is None
    # two flows share the host: its counters are neither flow's
    rec["flows"] = [flow, dict(flow, variant="reno")]
    assert record.counter(rec, "rn", "rn_sender.timeouts") == 0
