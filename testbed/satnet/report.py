# SPDX-License-Identifier: GPL-2.0
"""The report: per experiment a CSV and a PNG with the seed's axes, and
docs/results.md with every plot and the claims table.  Built from stored
records only; nothing is run.
"""

import csv
import functools
import math
import os
import re

from . import h2h, record, stats
from .castate import CA_STATES, fmt_shares
from .experiment import ACROSS, CHECK_MODE, current, load_all, point_key
from .paths import EXPERIMENT_DIR, TOP
from .record import limit_bps, load_all as load_records
from .scenario import load_scenario

MODE_ORDER = ("full", "quick", "point")
VERDICTS = stats.VERDICTS + ("not comparable", "not run")
# Verdicts whose claim's "why" explains a disagreement.
DISAGREE = ("direction only", "seed's magnitude refuted", "contradicted",
            "effect absent")


def _metric(rec, variant, metric):
    v = rec["summary"]["variants"].get(variant)
    if not v:
        return None
    if metric == "limit_share" and v.get(metric) is None:
        sc = rec["meta"].get("scenario")
        return v["goodput"] * 1e6 / limit_bps(sc) if sc else None
    if metric == "recoveries" and v.get(metric) is None:
        # records summarised before the metric existed: their counters
        return record.recoveries([f for f in rec["flows"]
                                  if f["variant"] == variant])
    return v.get(metric)


def _ca_share(rec, variant, state):
    share = _metric(rec, variant, "ca_share")
    return share.get(state) if share else None


class Results:
    """The records of one experiment in one mode, indexed by variant and
    sweep point."""

    def __init__(self, exp, recs):
        self.exp = exp
        modes = {r["mode"] for r in recs}
        self.mode = next((m for m in MODE_ORDER if m in modes), None)
        self.recs = [r for r in recs if r["mode"] == self.mode]
        # the older control: the points again, alone, after the run
        self.serial = [r for r in recs if r["mode"] == "serial"]
        self.checks = {}         # width -> {"alone": recs, "beside": recs}
        for r in recs:
            m = CHECK_MODE.match(r["mode"])
            if m:
                self.checks.setdefault(int(m.group(1)), {
                    "alone": [], "beside": []})[m.group(2)].append(r)

    def runs(self, variant, point, recs=None):
        key = point_key(point)
        return [r for r in (self.recs if recs is None else recs)
                if point_key(r["point"]) == key and
                (r["variant"] == variant or r["variant"] == "mix") and
                variant in r["summary"]["variants"]]

    def estimate(self, variant, point, metric=None, recs=None):
        metric = metric or self.exp.metric
        return stats.Estimate([_metric(r, variant, metric)
                               for r in self.runs(variant, point, recs)])

    def best(self, variants, point, metric=None):
        """(variant, Estimate) with the highest mean among @variants that
        have runs, or None."""
        ests = [(v, self.estimate(v, point, metric)) for v in variants]
        return max(((v, e) for v, e in ests if e.n),
                   key=lambda x: x[1].mean, default=None)

    def stale(self, variants, point):
        """Runs of @variants at @point made by other module builds."""
        builds = record.module_builds()
        return sum(1 for v in variants for r in self.runs(v, point)
                   if record.stale(r, builds))

    def counter(self, variant, point, name):
        return stats.Estimate([record.counter(r, variant, name)
                               for r in self.runs(variant, point)])

    @functools.cached_property
    def path_clock(self):
        """The clock the clock check cleared this experiment's path for
        (its run.clock): "virtual", or "real" while it is open."""
        return load_scenario(self.exp.scenario).clock

    def off_clock(self, recs=None):
        """Those of @recs (default: all) made on the virtual clock of a
        path that the clock check has not cleared for it."""
        if self.path_clock == "virtual":
            return []
        return [r for r in (self.recs if recs is None else recs)
                if on_virtual(r)]

    def unchecked(self, variants, point):
        return sum(len(self.off_clock(self.runs(v, point)))
                   for v in variants)

    def clocks(self):
        return sorted({record.clock_name(r["meta"]) for r in self.recs})

    def ca_shares(self, variant, point):
        """Per congestion-avoidance state, the runs' shares of time in it
        (runs from before the state was sampled have none)."""
        runs = self.runs(variant, point)
        return {k: stats.Estimate([_ca_share(r, variant, k) for r in runs])
                for k in CA_STATES}

    def points(self):
        return self.exp.sweep_points("full")


class ClaimRuns:
    """The runs one claim compares: its experiment's (@res), and for a
    variant named EXPERIMENT:VARIANT that experiment's (from @pool, the
    Results by experiment name).  The same calls as Results; its mode is
    "full" only where every experiment the claim reads is."""

    def __init__(self, claim, res, pool=None):
        self.own, self.pool = res, pool or {}
        parts = [self._where(v)[0] for v in claim.variants()] or [res]
        modes = [r.mode if r is not None else None for r in parts]
        self.mode = modes[0] if len(set(modes)) == 1 else None
        self.recs = [x for r in parts if r is not None for x in r.recs]

    def _where(self, variant):
        name, sep, var = variant.rpartition(":")
        return (self.pool.get(name), var) if sep else (self.own, variant)

    def runs(self, variant, point):
        res, var = self._where(variant)
        return res.runs(var, point) if res is not None else []

    def estimate(self, variant, point, metric=None):
        res, var = self._where(variant)
        return res.estimate(var, point, metric) if res is not None else \
            stats.Estimate([])

    def counter(self, variant, point, name):
        res, var = self._where(variant)
        return res.counter(var, point, name) if res is not None else \
            stats.Estimate([])

    def stale(self, variants, point):
        return sum(res.stale([var], point) for res, var in
                   map(self._where, variants) if res is not None)

    def unchecked(self, variants, point):
        return sum(res.unchecked([var], point) for res, var in
                   map(self._where, variants) if res is not None)


def on_virtual(rec):
    return (rec["meta"].get("clock") or {}).get("mode") == "virtual"


def unchecked_note(n):
    """What a verdict says of its @n runs on a clock its path was not
    cleared for: '' when there are none."""
    return " (%d run%s on the virtual clock, which the clock check has " \
        "not cleared for this path)" % (n, "" if n == 1 else "s") \
        if n else ""


def table_rows(res):
    rows = []
    for pt in res.points():
        for v in res.exp.arms():
            e = res.estimate(v, pt)
            if not e.n:
                continue
            rtx = res.estimate(v, pt, "retrans_share")
            ca = res.ca_shares(v, pt)
            rows.append({"variant": v, "x": next(iter(pt.values()), ""),
                         "n": e.n, "mean": e.mean, "ci95": e.half,
                         "retrans_share": rtx.mean,
                         **{"ca_" + k: c.mean for k, c in ca.items()},
                         "ca_n": ca["open"].n})
    return rows


CSV_COLUMNS = ["variant", "x", "n", "mean", "ci95", "retrans_share"] + \
    ["ca_" + k for k in CA_STATES]


def write_csv(res, path):
    rows = table_rows(res)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, CSV_COLUMNS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    return rows


def _categories(exp):
    """The values of a sweep of names (a categorical axis, such as the
    delay distribution), in the file's order; None for numbers."""
    vals = exp.sweep["values"] if exp.sweep else []
    return list(vals) if vals and all(isinstance(v, str) for v in vals) \
        else None


def _series(res):
    """[(variant, [(x, Estimate)])] of the variants with runs (x scaled,
    or a name of a categorical sweep)."""
    exp = res.exp
    scale = exp.sweep.get("scale", 1) if exp.sweep else 1
    if _categories(exp):
        scale = None
    out = []
    for v in exp.arms():
        pts = [(next(iter(p.values()), None), res.estimate(v, p))
               for p in res.points()]
        pts = [(x * scale if x is not None and scale is not None else x, e)
               for x, e in pts if e.n]
        if pts:
            out.append((v, pts))
    return out


def _colour(exp, v):
    """A variant's colour, the same in every plot of the experiment."""
    return "C%d" % (exp.arms().index(v) % 10)


def _bars(ax, series, xlabel, colour):
    names = [v for v, _ in series]
    ests = [pts[0][1] for _, pts in series]
    ax.bar(range(len(ests)), [e.mean for e in ests],
           yerr=[e.half or 0 for e in ests], capsize=3,
           color=[colour(v) for v in names])
    ax.set_xticks(range(len(ests)), names, rotation=25, ha="right",
                  fontsize=8)
    if xlabel:
        ax.set_xlabel(xlabel)


def _lines(ax, series, xlabel, colour, join=True):
    """One line per variant; join=False: markers only (names on the x
    axis have no order to draw a line along), dodged further apart."""
    xs = sorted({x for _, pts in series for x, _ in pts})
    dodge = (xs[-1] - xs[0]) * (0.008 if join else 0.03)
    for i, (v, pts) in enumerate(series):
        off = (i - (len(series) - 1) / 2) * dodge
        ax.errorbar([x + off for x, _ in pts], [e.mean for _, e in pts],
                    yerr=[e.half or 0 for _, e in pts], marker="o",
                    capsize=3, label=v, linestyle="-" if join else "none",
                    color=colour(v))
    ax.set_xlabel(xlabel)


def _seed_marks(ax, exp, where, colour):
    """The seed's own numbers ([plot] seed) as hollow diamonds in the
    colour of the variant's line; @where(variant, sweep value) is its
    position on the x axis (None: not drawn)."""
    for v, pts in exp.seed_marks.items():
        xy = [(where(v, x), y) for x, y in pts if where(v, x) is not None]
        if xy:
            ax.plot(*zip(*xy), linestyle="none", marker="D", markersize=7,
                    markerfacecolor="none", color=colour(v),
                    label="seed: %s" % v)


def _same_x(sweep_value, x, scale):
    """Whether a sweep value is the plotted @x (scaled, or a name)."""
    if isinstance(x, str) or isinstance(sweep_value, str):
        return sweep_value == x
    return math.isclose(sweep_value * scale, x)


def plot(res, path):
    """The seed's axes: the metric against the sweep, one line per
    variant (error bars: 95 % CI); bars where one x value was run."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    exp = res.exp
    series = _series(res)
    xs = {x for _, pts in series for x, _ in pts}
    label = exp.sweep.get("label", exp.sweep["key"]) if exp.sweep else ""
    scale = exp.sweep.get("scale", 1) if exp.sweep else 1
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    cats = _categories(exp)
    colour = functools.partial(_colour, exp)
    if len(xs) > 1 and cats:
        # names, at evenly spaced positions in the sweep's order
        used = [c for c in cats if c in xs]
        pos = {c: i for i, c in enumerate(used)}
        _lines(ax, [(v, [(pos[x], e) for x, e in pts])
                    for v, pts in series], label, colour, join=False)
        _seed_marks(ax, exp, lambda _, x: pos.get(x), colour)
        ax.set_xticks(range(len(used)), used)
        ax.set_xlim(-0.5, len(used) - 0.5)
    elif len(xs) > 1:
        _lines(ax, series, label, colour)
        _seed_marks(ax, exp, lambda _, x: x * scale, colour)
    else:
        x = next(iter(xs), None)
        _bars(ax, series, "" if x is None else "%s = %s" % (
            label, x if isinstance(x, str) else "%g" % x), colour)
        bar = {v: i for i, (v, _) in enumerate(series)}
        _seed_marks(ax, exp, lambda v, sx: bar.get(v) if x is not None and
                    _same_x(sx, x, scale) else None, colour)
    if series and (len(xs) > 1 or exp.seed_marks):
        ax.legend(fontsize=7, ncol=2)
    ax.set_ylabel(exp.ylabel)
    ax.set_title("%s (%s, %s; %s clock)" % (
        exp.source, res.mode, exp.name,
        ", ".join(c.split(" (")[0] for c in res.clocks())), fontsize=9)
    ax.set_ylim(bottom=0)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _runs(*estimates):
    return min(e.n for e in estimates)


def _kw(claim):
    """A claim's margins, as the stats.judge_* rules take them."""
    return {"margin": claim.margin, "floor": claim.floor}


def _pair(claim, res):
    """(A, B, Ratio oriented so that the claim's direction is above 1)."""
    a = res.estimate(claim.spec["a"], claim.at, claim.metric)
    b = res.estimate(claim.spec["b"], claim.at, claim.metric)
    lower = claim.spec.get("lower", False)
    return a, b, stats.Ratio(b, a) if lower else stats.Ratio(a, b)


def judge(claim, res, pool=None):
    """(ours as text, stats.Judgement) of one claim.  @pool: the Results
    of other experiments by name, for variants named EXPERIMENT:VARIANT."""
    if claim.form == "na":
        return "–", stats.Judgement("not comparable")
    res = ClaimRuns(claim, res, pool)
    if not all(res.runs(v, pt) for v in claim.variants()
               for pt in claim.points()):
        return "–", stats.Judgement("not run")
    full = res.mode == "full"
    if claim.form == "ratio":
        return judge_ratio(claim, res, full)
    if claim.form == "best":
        return judge_best(claim, res, full)
    if claim.form in ACROSS:
        return judge_across(claim, res, full)
    if claim.form == "near_zero":
        return judge_near_zero(claim, res, full)
    a, b, r = _pair(claim, res)
    rule = {"better": stats.judge_better, "at_least": stats.judge_at_least,
            "same": stats.judge_same}[claim.form]
    kw = _kw(claim)
    # a "lower" claim is judged on B / A (or B - A), so that above 1 is
    # the seed's direction; the comparison is named as it is computed
    num, den = (claim.spec["b"], claim.spec["a"]) if \
        claim.spec.get("lower") else (claim.spec["a"], claim.spec["b"])
    if r.diff:
        cmp = "difference %s - %s %s (a mean is 0)" % (num, den, r.fmt())
    else:
        cmp = "ratio %s / %s %s" % (num, den, r.fmt())
    text = "%s: %s; %s: %s; %s" % (claim.spec["a"], a.fmt(),
                                   claim.spec["b"], b.fmt(), cmp)
    return text, stats.decided(rule(r, full, _runs(a, b), **kw),
                               [(rule, r, kw)])


def judge_near_zero(claim, res, full):
    """A's count a run against the floor at which counts are the same."""
    a = res.estimate(claim.spec["a"], claim.at, claim.metric)
    r = stats.Level(a)
    kw = {"floor": claim.floor}
    return "%s: %s" % (claim.spec["a"], a.fmt()), stats.decided(
        stats.judge_near_zero(r, full, a.n, **kw),
        [(stats.judge_near_zero, r, kw)])


def judge_ratio(claim, res, full):
    """A against each baseline of the claim: the weakest verdict stands."""
    num = res.estimate(claim.spec["num"], claim.at, claim.metric)
    parts, js, tests = [], [], []
    rule = functools.partial(stats.judge_factor, seed=claim.spec["seed"],
                             more=claim.spec.get("more", False))
    for v in claim.spec["den"]:
        den = res.estimate(v, claim.at, claim.metric)
        r = stats.Ratio(num, den)
        kw = _kw(claim)
        js.append(rule(r, full=full, runs=_runs(num, den), **kw))
        tests.append((rule, r, kw))
        parts.append("%s%s %s (n=%d/%d)" % ("-" if r.diff else "/", v,
                                              r.fmt(), num.n, den.n))
    return "; ".join(parts), stats.decided(stats.weakest(js), tests)


def judge_best(claim, res, full):
    """Some variant of ours beats every one of theirs (with at_least: is
    non-inferior to every one of theirs, at the claim's margin).  Each of
    ours is judged against each of theirs with CIs widened for the number
    of ours (Holm's first step), so picking the winner on the same runs
    cannot make the claim hold by chance; the strongest of ours stands."""
    cap = claim.spec.get("retrans_max", 1)
    out = [v for v in claim.variants() if (res.estimate(
        v, claim.at, "retrans_share").mean or 0) > cap]
    ours, theirs = [[v for v in claim.spec[k] if v not in out]
                    for k in ("ours", "theirs")]
    if not ours or not theirs:
        return "every one of %s retransmits more than %g %% of what it " \
            "sends" % ("ours" if not ours else "theirs", 100 * cap), \
            stats.Judgement("contradicted" if not ours else "no data")
    rule, kw = (stats.judge_at_least, {"margin": claim.margin}) \
        if claim.spec.get("at_least") else (stats.judge_better, {})
    kw["floor"] = claim.floor
    level = stats.holm_level(len(ours))
    best = None
    for o in ours:
        eo = res.estimate(o, claim.at, claim.metric)
        js, tests = [], []
        for t in theirs:
            r = stats.Ratio(eo, res.estimate(t, claim.at, claim.metric),
                            level)
            js.append(rule(r, full, _runs(*r.estimates), **kw))
            tests.append((rule, r, kw))
        j = stats.weakest(js)
        # the strongest verdict; among equal ones, the highest mean
        rank = (stats.VERDICTS.index(j.verdict), -(eo.mean or 0))
        if best is None or rank < best[0]:
            best = (rank, o, stats.decided(j, tests))
    _, o, j = best
    eo = res.estimate(o, claim.at, claim.metric)
    return ("strongest of ours: %s %s; CIs at %.1f %% (Holm, %d of ours)%s"
            % (o, eo.fmt(), 100 * level, len(ours),
               "; not ranked, retransmitting more than %g %% of what they "
               "send: %s" % (100 * cap, ", ".join(out)) if out else ""), j)


def _value(point):
    """A sweep point by its value alone ("1e-07")."""
    return ", ".join("%g" % v if isinstance(v, (int, float)) else str(v)
                     for v in point.values())


def judge_across(claim, res, full):
    """trend and steady: A at `to` against A at `from`, or with B the
    ratio of ratios (A / B at `to`) / (A / B at `from`); a trend is
    judged as `better` in its direction (as `ratio` where the seed gives
    its factor), steady as `same`."""
    s = claim.spec
    frm, to = claim.points()
    ends = (("from", frm), ("to", to))
    est = {(v, end): res.estimate(v, pt, claim.metric)
           for v in claim.variants() for end, pt in ends}
    a, b = s["a"], s.get("b")
    if b:
        r = stats.Trend(est[a, "to"], est[b, "to"], est[a, "from"],
                        est[b, "from"])
        what = "ratio of ratios (%s / %s at %s) / (at %s)" % (
            a, b, _value(to), _value(frm))
    else:
        r = stats.Ratio(est[a, "to"], est[a, "from"])
        what = "ratio %s at %s / at %s" % (a, _value(to), _value(frm))
    if r.diff:
        what = "difference %s at %s - at %s %s (a mean is 0)" % (
            a, _value(to), _value(frm), r.diff.fmt())
    elif r.zero:
        what += " none (a mean is 0)"
    else:
        what += " " + r.fmt()
    rule = stats.judge_better if claim.form == "trend" else stats.judge_same
    r = r.inverse() if s.get("falls") else r
    kw = _kw(claim)
    if "seed" in s:
        rule = functools.partial(stats.judge_factor,
                                 seed=max(s["seed"], 1 / s["seed"]))
    j = stats.decided(rule(r, full=full, runs=_runs(*est.values()), **kw),
                      [(rule, r, kw)])
    text = "; ".join("%s at %s: %s" % (v, _value(pt), est[v, end].fmt())
                     for v in claim.variants() for end, pt in ends)
    return "%s; %s" % (text, what), j


def seed_value(claim):
    if claim.form == "ratio":
        s = claim.spec["seed"]
        if claim.spec.get("more"):
            return "more than %g× (magnitude band from %.2f)" % (s, s ** 0.5)
        return "%g× (magnitude band %.2f–%.2f)" % (
            s, *(sorted((s ** 0.5, s ** 1.5))))
    if claim.form in ("better", "at_least", "same"):
        op = {"better": "<" if claim.spec.get("lower") else ">",
              "at_least": "≤" if claim.spec.get("lower") else "≥",
              "same": "≈"}[claim.form]
        margin = " (margin %g×)" % claim.margin \
            if claim.form != "better" else ""
        return "%s %s %s%s" % (claim.spec["a"], op, claim.spec["b"], margin)
    if claim.form == "near_zero":
        return "%s ≈ 0 (at most %g a run)" % (claim.spec["a"], claim.floor)
    if claim.form == "best":
        return "best of %s %s best of %s%s" % (
            "/".join(claim.spec["ours"]),
            "≥" if claim.spec.get("at_least") else ">",
            "/".join(claim.spec["theirs"]),
            " (margin %g×)" % claim.margin if claim.spec.get("at_least")
            else "") + (", those retransmitting over %g %% of what they "
                        "send not ranked" % (100 * claim.spec["retrans_max"])
                        if "retrans_max" in claim.spec else "")
    if claim.form in ACROSS:
        s = claim.spec
        frm, to = claim.points()
        how = "grows" if s.get("grows") else "falls" if s.get("falls") \
            else "steady (margin %g×)" % claim.margin
        if "seed" in s:
            how += " %g× (magnitude band %.2f–%.2f)" % (
                s["seed"], *sorted((s["seed"] ** 0.5, s["seed"] ** 1.5)))
        return "%s %s, %s %s → %s" % (
            " / ".join(claim.variants()), how, ", ".join(to), _value(frm),
            _value(to))
    return "–"


def _range(e):
    """A counter per run: its mean and the range of the runs."""
    if not e.n:
        return "–"
    lo, hi = min(e.values), max(e.values)
    return "%.3g" % e.mean if lo == hi else \
        "%.3g (%.3g–%.3g)" % (e.mean, lo, hi)


def evidence(claim, res, pool=None):
    """The counters a claim names, each variant's mean per run."""
    res = ClaimRuns(claim, res, pool)
    if not res.recs or not claim.counters:
        return ""
    parts, pts = [], claim.points()
    for c in claim.counters:
        vals = ["%s%s %s" % (v, " at " + _value(p) if len(pts) > 1 else "",
                             _range(res.counter(v, p, c)))
                for v in claim.variants() for p in pts]
        parts.append("%s: %s" % (c.replace("TcpExt", ""), ", ".join(vals)))
    return "; ".join(parts)


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def claims_table(exps, results):
    lines = ["| claim | seed | seed says | ours (95 % CI) | direction | "
             "magnitude | verdict | why, and the counters per run "
             "(mean, range) |",
             "|---|---|---|---|---|---|---|---|"]
    count = dict.fromkeys(VERDICTS, 0)
    per_seed = {}
    for exp in exps:
        for c in exp.claims:
            res = results.get(exp.name)
            ours, j = judge(c, res, results)
            count[j.verdict] += 1
            seed = per_seed.setdefault(seed_of(c.source),
                                       dict.fromkeys(VERDICTS, 0))
            seed[j.verdict] += 1
            runs = ClaimRuns(c, res, results)
            old = sum(runs.stale(c.variants(), p) for p in c.points())
            off = sum(runs.unchecked(c.variants(), p) for p in c.points())
            verdict = "**%s**%s%s%s" % (j.verdict, stats.decide_note(j),
                                        record.stale_note(old),
                                        unchecked_note(off))
            why = c.why if j.verdict in DISAGREE else ""
            if c.form == "na":
                why = c.spec
            ev = evidence(c, res, results)
            lines.append("| %s: %s | %s | %s | %s | %s | %s | %s | %s |"
                         % (c.id, _cell(c.text), _cell(c.source),
                            _cell(seed_value(c)), _cell(ours), j.direction,
                            j.magnitude, verdict,
                            _cell("; ".join(x for x in (why, ev) if x))))
    summary = ", ".join("%d %s" % (n, v) for v, n in count.items() if n)
    return lines, summary, per_seed


def seed_of(source):
    """'seed 000' of a claim's source ('seed 000 §4.1.1'), or the source."""
    m = re.match(r"seed \d+", source or "")
    if m:
        return m.group(0)
    return "head-to-head goals" if "head-to-head" in (source or "") \
        else "other"


def seed_summary(per_seed):
    """One screen: per seed, how many claims got each verdict."""
    used = [v for v in VERDICTS if any(c[v] for c in per_seed.values())]
    lines = ["| seed | claims | " + " | ".join(used) + " |",
             "|---|---|" + "---|" * len(used)]
    for seed in sorted(per_seed):
        c = per_seed[seed]
        lines.append("| %s | %d | %s |" % (
            seed, sum(c.values()), " | ".join(str(c[v]) for v in used)))
    return lines


def builds_line(recs):
    """How many runs the project's modules as built now made."""
    builds = record.module_builds()
    if not any(builds.values()):
        return "- module builds: not known (the modules are not built " \
            "here, so stale runs cannot be told)"
    old = [r for r in recs if record.stale(r, builds)]
    mods = sorted({m for r in old for m in record.stale(r, builds)})
    return "- module builds: %d of %d runs made by the modules as built " \
        "now%s" % (len(recs) - len(old), len(recs),
                   "; %d stale (other builds of %s: `satnet run` runs them "
                   "again)" % (len(old), ", ".join(mods)) if old else "")


def clock_line(recs):
    names = sorted({record.clock_name(r["meta"]) for r in recs})
    line = "- clock: %s" % ", ".join(names)
    if any("before flow steering" in n for n in names):
        line += "; before flow steering, a guest of two CPUs could reorder " \
            "a flow ([testbed.md](testbed.md#one-flow-one-cpu))"
    return line


def header(recs, command, older=0, superseded=0):
    def span(key):
        vals = sorted({r["meta"].get(key) or "?" for r in recs})
        return ", ".join(vals) if len(vals) <= 3 else \
            "%s … %s (%d values)" % (vals[0], vals[-1], len(vals))
    commits = sorted({(r["meta"].get("git") or {}).get("commit") or "?"
                      for r in recs})
    dirty = any((r["meta"].get("git") or {}).get("dirty") for r in recs)
    dates = sorted(r["meta"].get("date") or "?" for r in recs)
    return [
        "Built by `%s` from %d stored runs of the experiments below%s "
        "(`satnet report` rebuilds this page from `results/` without "
        "running anything)." % (command, len(recs),
                                " and %d older runs" % older if older
                                else ""),

        "",
        "- kernel: %s" % span("kernel"),
        clock_line(recs),
        "- commit: %s%s" % (", ".join(c[:12] for c in commits),
                            " (some runs from a modified tree)" if dirty
                            else ""),
        "- runs dated %s to %s" % (dates[0], dates[-1]) if dates else "",
        "- machine time: %.0f s over all runs (`meta.wall_s`)" %
        sum(r["meta"].get("wall_s", 0) for r in recs),
        builds_line(recs),
        "- CPU-bound runs (the guest's CPU busy more than half of the "
        "flows' time, `host.cpu`): %d of %d" %
        (sum(bool((r.get("summary") or {}).get("cpu_bound")) for r in recs),
         sum("cpu" in (r.get("host") or {}) for r in recs)),
    ] + ([
        "- superseded: %d stored runs ran what the experiment files no "
        "longer specify (their `meta.spec` differs: a scenario, variant or "
        "profile changed since); they judge nothing here, and `satnet run` "
        "runs their points again" % superseded] if superseded else [])


SAME_WORDS = {"reproduced": "same", "contradicted": "differs",
              "pilot": "pilot (fewer than %d runs a side)" % stats.MIN_RUNS}


def same_word(verdict):
    """An equivalence verdict said of two measurements, not of a claim."""
    return SAME_WORDS.get(verdict, verdict)


def width_arms(res):
    """(width, alone runs, side-by-side runs, how) of each width check
    of an experiment.  A side-by-side run counts at its check's width
    only (meta.width: a batch left part done ran narrower).  Records of
    the older serial control (mode "serial": alone, after the run) are
    set against the run's own records, not interleaved with them."""
    out = []
    for w, arms in sorted(res.checks.items()):
        beside = [r for r in arms["beside"] if r["meta"].get("width") == w]
        out.append(("%d" % w, arms["alone"], beside, "interleaved"))
    if res.serial:
        ws = sorted({str(r["meta"].get("width")) for r in res.recs})
        out.append(("/".join(ws) or "–", res.serial, res.recs,
                    "serial control, not interleaved"))
    return out


def width_check(results):
    """Whether running points side by side changed their results: per
    width check and cell, the side-by-side runs' mean over the alone
    runs' with its log-scale CI, judged as equivalence (same, differs,
    inconclusive)."""
    lines = []
    for name, res in results.items():
        for width, alone, beside, how in width_arms(res):
            for pt in res.points():
                for v in res.exp.variants:
                    a = res.estimate(v, pt, recs=alone)
                    b = res.estimate(v, pt, recs=beside)
                    if not (a.n and b.n):
                        continue
                    r = stats.Ratio(b, a)
                    j = stats.decided(stats.judge_same(
                        r, True, min(a.n, b.n)), [(stats.judge_same, r, {})])
                    lines.append("| %s | %s %s | %s | %s | %s | %s | %s | "
                                 "%s%s |" % (name, v, point_key(pt), width,
                                             how, a.fmt(), b.fmt(), r.fmt(),
                                             same_word(j.verdict),
                                             stats.decide_note(j)))
    if not lines:
        return []
    m = stats.EQUIV_MARGIN
    older = " Rows of the older serial control compare the points run " \
        "alone after the run with the run's own, not interleaved." \
        if any("not interleaved" in x for x in lines) else ""
    return ["## Width check", "",
            "The same cells run alone (width 1) and side by side "
            "(`satnet run --width-check`; the two arms interleaved in "
            "time), judged as equivalence on the ratio of the means, "
            "side by side over alone, with its 95 %% CI: *same* where the "
            "CI lies inside [1/%.2g, %.2g], *differs* where it lies "
            "outside, *inconclusive* otherwise (a CI that merely holds 1 "
            "shows nothing); at least %d runs an arm.%s" %
            (m, m, stats.MIN_RUNS, older), "",
            "| experiment | cell | width | arms | alone | side by side | "
            "ratio (95 %% CI) | within %.2g× |" % m,
            "|---|---|---|---|---|---|---|---|"] + lines + [""]


def experiment_section(res, figdir, mddir):
    exp = res.exp
    out = ["## %s: %s" % (exp.name, exp.title), "",
           "%s. Scenario `%s`%s; %s runs; metric: %s." %
           (exp.source, exp.scenario,
            ", sweep of `%s`" % exp.sweep["key"] if exp.sweep else "",
            res.mode, exp.ylabel), ""]
    out += ["Clock: %s." % ", ".join(res.clocks()) +
            (" The clock check has not cleared the virtual clock for this "
             "path (its `run.clock` is real; [testbed.md](testbed.md#which-"
             "paths-run-on-the-virtual-clock)), so these runs may differ "
             "from real-clock ones by more than its margin."
             if res.off_clock() else ""), ""]
    if exp.scaled:
        out += ["Scaled: " + exp.scaled.strip(), ""]
    rows = write_csv(res, os.path.join(figdir, exp.name + ".csv"))
    plot(res, os.path.join(figdir, exp.name + ".png"))
    rel = os.path.relpath(figdir, mddir)
    out += ["![%s](%s/%s.png)" % (exp.name, rel, exp.name), "",
            "| variant | %s | n | %s | retransmitted | time in CA state "
            "(mean of runs) |" %
            (exp.sweep.get("label", exp.sweep["key"]) if exp.sweep else
             "point", exp.ylabel), "|---|---|---|---|---|---|"]
    for r in rows:
        out.append("| %s | %s | %d | %.3g%s | %s | %s |" % (
            r["variant"], r["x"], r["n"], r["mean"],
            " ± %.2g" % r["ci95"] if r["ci95"] is not None else "",
            "%.2f %%" % (100 * r["retrans_share"])
            if r["retrans_share"] is not None else "–", ca_cell(r)))
    return out + [""]


def ca_cell(row):
    """Open x% / Disorder / CWR / Recovery / Loss of a table row, and the
    runs behind it where fewer than the row's."""
    if not row["ca_n"]:
        return "–"
    text = fmt_shares({k: row["ca_" + k] for k in CA_STATES})
    return text if row["ca_n"] == row["n"] else \
        "%s (n=%d)" % (text, row["ca_n"])


def other_records(recs, known):
    """Records whose experiment has no file (removed or renamed since)."""
    groups = {}
    for r in recs:
        if r["experiment"] in known:
            continue
        key = (r["experiment"], r["variant"], point_key(r["point"]))
        groups.setdefault(key, []).append(r["summary"]["goodput_bps"] / 1e6)
    if not groups:
        return []
    out = ["## Older runs", "",
           "Runs of experiments that no longer have a file: total "
           "goodput.", "",
           "| experiment | variant | point | goodput (Mbit/s) |",
           "|---|---|---|---|"]
    for (e, v, p), vals in sorted(groups.items()):
        out.append("| %s | %s | %s | %s |" % (e, v, p,
                                              stats.Estimate(vals).fmt()))
    return out + [""]


def build(names=None, md=None, figdir=None, results=None, command=None,
          warn=print, experiments=EXPERIMENT_DIR):
    """Rebuild the report; returns the markdown path."""
    md = md or os.path.join(TOP, "docs", "results.md")
    figdir = figdir or os.path.join(os.path.dirname(md), "results")
    os.makedirs(figdir, exist_ok=True)
    every = load_all(folder=experiments)
    exps = [e for e in every if not names or e.name in names]
    # and the experiments whose runs their claims read (EXPERIMENT:VARIANT)
    read = {e.name for e in exps} | {n for e in exps for c in e.claims
                                     for n, _ in c.refs}
    kw = {"results": results} if results else {}
    recs = load_records(experiments=sorted(read) if names else None,
                        warn=warn, **kw)
    # a record of what the files no longer specify judges nothing
    named = {e.name: e for e in every}
    keep = [r["experiment"] not in named or
            current(named[r["experiment"]], r) for r in recs]
    superseded = keep.count(False)
    recs = [r for r, k in zip(recs, keep) if k]
    by_exp = {}
    for r in recs:
        by_exp.setdefault(r["experiment"], []).append(r)
    pool = {e.name: Results(e, by_exp[e.name]) for e in every
            if e.name in read and e.name in by_exp}
    results_ = {n: r for n, r in pool.items()
                if any(e.name == n for e in exps)}
    recs = [r for r in recs if r["experiment"] not in pool or
            r["experiment"] in results_]
    claims, summary, per_seed = claims_table(exps, pool)
    used = [r for r in recs if r["experiment"] in results_]
    out = ["# Results: the seeds' claims on a real kernel", "",
           "Verdicts per seed (the rule: [experiments.md](experiments.md"
           "#how-a-claim-is-judged); *pilot*: fewer than 3 full-length "
           "runs a side):", ""] + seed_summary(per_seed) + [""]
    out += header(used, command or "satnet report",
                  len(recs) - len(used), superseded) if used else \
        ["No stored runs yet: `satnet run --quick` makes some.", ""]
    off = [r for res in results_.values() for r in res.off_clock()]
    if off:
        out += ["- on the virtual clock of a path the clock check has not "
                "cleared (its `run.clock` is real): %d runs, of %s; their "
                "verdicts say so" % (len(off), ", ".join(
                    sorted({r["experiment"] for r in off})))]
    out += ["", "## Claims", "",
            "Each headline claim of the seeds ([references.md]"
            "(references.md)) at the point the seed states it, against our "
            "runs of that point: the ratio or comparison with its 95 % CI "
            "and n (runs of the numerator / the denominator). How a verdict "
            "is reached: [experiments.md](experiments.md). Verdicts: " +
            summary + ".", ""] + claims + [""]
    out += width_check(results_)
    for e in exps:
        if e.name in results_:
            out += experiment_section(results_[e.name], figdir,
                                      os.path.dirname(md))
    not_run = [e.name for e in exps if e.name not in results_]
    if not_run:
        out += ["## Not run yet", "", ", ".join(not_run) +
                ": `satnet run --full NAME` runs one.", ""]
    out += other_records(recs, {e.name for e in exps})
    with open(md, "w") as f:
        f.write("\n".join(out).rstrip() + "\n")
    head_to_head(results_, figdir, os.path.dirname(md), command)
    return md


def head_to_head(results, figdir, mddir, command):
    """docs/head-to-head.md's tables and plot, where h2h-* runs exist."""
    exps = h2h.experiments(results)
    if not exps:
        return
    recs = [r for res in exps for r in res.recs]
    h2h.write(os.path.join(mddir, "head-to-head.md"),
              h2h.block(exps, figdir, mddir,
                        header(recs, command or "satnet report")))


def compare(a_dir, b_dir, metric="goodput", warn=print):
    """Markdown lines: every (experiment, mode, point, variant) stored in
    both folders, B's mean against A's as a ratio with its log-scale CI,
    and whether they are the same within the equivalence margin."""
    groups, paths, clocks = {}, {}, (set(), set())
    for side, d in ((0, a_dir), (1, b_dir)):
        for r in load_records(d, warn=warn):
            clocks[side].add(record.clock_name(r["meta"]))
            for v in r["summary"]["variants"]:
                key = (r["experiment"], r["mode"], point_key(r["point"]), v)
                groups.setdefault(key, ([], []))[side].append(
                    _metric(r, v, metric))
                paths[key] = r["meta"].get("scenario", {}).get("name", "?")
    lines = ["clock: A %s; B %s" % tuple(", ".join(sorted(c)) or "-"
                                         for c in clocks), "",
             "| experiment | mode | point | variant | A (n) | B (n) | "
             "B / A (95 % CI) | " +
             "same within %g× |" % stats.EQUIV_MARGIN,
             "|---|---|---|---|---|---|---|---|"]
    by_path = {}
    for key in sorted(k for k, (a, b) in groups.items() if a and b):
        a, b = (stats.Estimate(x) for x in groups[key])
        r = stats.Ratio(b, a)
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            *key, a.fmt(), b.fmt(), r.fmt(),
            same_word(stats.judge_same(r, True, min(a.n, b.n)).verdict)))
        by_path.setdefault(paths[key], []).append((a, b))
    return lines + [""] + pooled_lines(by_path)


def pooled_lines(by_path):
    """compare()'s cells pooled per path (scenario): stats.Pooled,
    whether it lies within the margin, and Cochran's Q."""
    lines = ["| path (scenario) | cells | pooled B / A (95 %% CI) | "
             "same within %g× | cells disagree (Q, p) |" %
             stats.EQUIV_MARGIN, "|---|---|---|---|---|"]
    for name in sorted(by_path):
        pool = stats.Pooled(by_path[name])
        j = stats.decided(stats.judge_same(pool, True, pool.runs),
                          [(stats.judge_same, pool, {})])
        lines.append("| %s | %d%s | %s | %s%s | %s |" % (
            name, pool.k, " (%d left out: no spread)" % pool.left_out
            if pool.left_out else "", pool.fmt(),
            same_word(j.verdict), stats.decide_note(j),
            "Q %.1f, p %.2f" % (pool.q, pool.p) if pool.p is not None
            else "–"))
    return lines
