# SPDX-License-Identifier: GPL-2.0
"""Experiment and variant files, and the points they expand to.

docs/experiments.md gives every key.  An experiment is one figure or table
of a seed: a scenario, variants, the seed's x-axis as a sweep, reps and
durations for --quick and --full, what to plot, and the seed's claims.
"""

import glob
import json
import os
import re
import tomllib

from .kmod import param_text
from .paths import EXPERIMENT_DIR, PROFILE_DIR, SCENARIO_DIR, VARIANTS_FILE
from .scenario import LATER_KEYS, ScenarioError, load_scenario
from .stats import COUNT_MARGIN, EQUIV_MARGIN

MODES = ("quick", "full")
# A record's mode beyond those: "point" (another duration), and the two
# arms of satnet run --width-check at width W, "checkW-alone" (width 1)
# and "checkW-beside" (W at once); "serial" is the older control's (the
# points again alone, after the run, not interleaved).
CHECK_MODE = re.compile(r"^check(\d+)-(alone|beside)$")
METRICS = ("goodput", "goodput_share", "limit_share", "retrans_share",
           "timeouts", "recoveries", "jain", "packets")
# events counted a run: two of them a couple apart are the same whatever
# their ratio (stats.COUNT_MARGIN)
COUNTS = ("timeouts", "recoveries")
EXP_KEYS = ("name", "title", "source", "scenario", "set", "sysctl",
            "variants", "mix", "mice", "profile", "scaled", "sweep", "quick",
            "full", "plot", "claim")
MICE_KEYS = ("variant", "pairs", "per_s", "mean_bytes", "shape")
# What claims call the short flows of an experiment with mice.
MICE = "mice"
# a sweep of this key sets each point's run length
SWEPT_LENGTH = "run.duration_s"
VARIANT_KEYS = ("description", "source", "cc", "profile", "params", "set")
FORMS = ("ratio", "better", "at_least", "same", "best", "trend", "steady",
         "near_zero", "na")
ACROSS = ("trend", "steady")     # forms judged across two sweep points
CLAIM_KEYS = ("id", "text", "source", "at", "metric", "margin", "why",
              "counters") + FORMS
NAME = re.compile(r"^[a-z0-9][a-z0-9.-]*$")


class ExperimentError(ValueError):
    pass


def _number(x):
    """An int or float from TOML, not a bool (which Python counts as an
    int)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _keys(d, where, allowed):
    if not isinstance(d, dict):
        raise ExperimentError("%s: expected a table" % where)
    bad = sorted(set(d) - set(allowed))
    if bad:
        raise ExperimentError("%s: unknown key(s) %s (allowed: %s)" %
                              (where, ", ".join(bad), ", ".join(allowed)))


def _read(path):
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ExperimentError("%s: %s" % (path, e)) from None


class Variant:
    """One line of the catalogue: a congestion control on a sysctl profile,
    with module parameters and scenario overrides."""

    def __init__(self, name, d):
        where = "variants.toml [%s]" % name
        _keys(d, where, VARIANT_KEYS)
        if not NAME.match(name):
            raise ExperimentError("%s: names are lower case, digits, "
                                  "'.' and '-'" % where)
        if "cc" not in d:
            raise ExperimentError("%s: needs cc" % where)
        self.name = name
        self.cc = d["cc"]
        self.description = d.get("description", "")
        self.source = d.get("source", "")
        self.profile = d.get("profile")
        self.params = d.get("params", {})
        self.set = d.get("set", {})
        for mod, ps in self.params.items():
            _keys(ps, "%s params.%s" % (where, mod), list(ps))
        if self.profile and not os.path.exists(
                os.path.join(PROFILE_DIR, self.profile + ".toml")):
            raise ExperimentError("%s: no profile %r" % (where, self.profile))


def load_variants(path=VARIANTS_FILE):
    return {name: Variant(name, d) for name, d in _read(path).items()}


class Claim:
    def __init__(self, d, exp):
        where = "%s: claim %s" % (exp.name, d.get("id", "?"))
        _keys(d, where, CLAIM_KEYS)
        forms = [k for k in FORMS if k in d]
        if len(forms) != 1 or "id" not in d or "text" not in d:
            raise ExperimentError("%s: needs id, text and exactly one of "
                                  "%s" % (where, ", ".join(FORMS)))
        self.id, self.text = d["id"], d["text"]
        self.source = d.get("source", exp.source)
        self.form = forms[0]
        self.spec = d[self.form]
        self.at = d.get("at", {})
        self.metric = d.get("metric", exp.metric)
        self.margin = d.get("margin", EQUIV_MARGIN)
        self.floor = COUNT_MARGIN if self.metric in COUNTS else None
        self.why = d.get("why", "")
        self.counters = d.get("counters", [])
        if not (isinstance(self.margin, (int, float)) and
                1 < self.margin < 10):
            raise ExperimentError("%s: margin is a factor above 1, such "
                                  "as 1.1" % where)
        if self.form in ("better", "at_least", "same") and not (
                isinstance(self.spec, dict) and
                {"a", "b"} <= set(self.spec) <= {"a", "b", "lower"}):
            raise ExperimentError("%s: %s needs a and b (and optionally "
                                  "lower)" % (where, self.form))
        if self.metric not in METRICS:
            raise ExperimentError("%s: unknown metric %r" %
                                  (where, self.metric))
        if self.form == "near_zero" and not (
                isinstance(self.spec, dict) and set(self.spec) == {"a"} and
                self.metric in COUNTS):
            raise ExperimentError("%s: near_zero needs a, and a metric "
                                  "that counts events (%s)" %
                                  (where, ", ".join(COUNTS)))
        if self.form == "ratio":
            self._check_ratio(where)
        if self.form in ACROSS:
            self._check_across(where)
        if self.form == "best" and not (
                isinstance(self.spec, dict) and
                {"ours", "theirs"} <= set(self.spec) <=
                {"ours", "theirs", "at_least", "retrans_max"} and
                all(isinstance(self.spec[k], list) and self.spec[k]
                    for k in ("ours", "theirs")) and
                isinstance(self.spec.get("at_least", False), bool) and
                0 < self.spec.get("retrans_max", 1) <= 1):
            raise ExperimentError("%s: best needs non-empty lists ours and "
                                  "theirs (and optionally at_least = true, "
                                  "retrans_max = a share)" % where)
        names = self.variants()
        # EXPERIMENT:VARIANT, a variant's runs in another experiment
        # (checked by load_experiment(), which can read that file)
        self.refs = [tuple(v.split(":")) for v in names
                     if isinstance(v, str) and v.count(":") == 1]
        unknown = [v for v in names if v not in exp.variants and
                   not (v == MICE and exp.mice) and
                   not (isinstance(v, str) and v.count(":") == 1)]
        if unknown:
            raise ExperimentError("%s: variants %s are not in the "
                                  "experiment" % (where, unknown))
        if any(e == exp.name for e, _ in self.refs):
            raise ExperimentError("%s: a variant of this experiment is "
                                  "named without %s:" % (where, exp.name))
        for name, pt in zip(("from", "to") if self.form in ACROSS
                            else ("at",), self.points()):
            if pt and exp.sweep is None:
                raise ExperimentError("%s: '%s' needs a sweep" %
                                      (where, name))
            for k, v in pt.items():
                if k != exp.sweep["key"] or v not in exp.sweep["values"]:
                    raise ExperimentError("%s: %s %s=%r is not a sweep "
                                          "point" % (where, name, k, v))

    def _check_ratio(self, where):
        """num / each of den is the seed's factor; with more = true the
        seed says "more than" that factor, a bound from below."""
        s = self.spec
        seed = s.get("seed") if isinstance(s, dict) else None
        if not (isinstance(s, dict) and
                {"num", "den", "seed"} <= set(s) <= {"num", "den", "seed",
                                                     "more"} and
                isinstance(s["den"], list) and s["den"] and
                _number(seed) and 0 < seed != 1 and
                isinstance(s.get("more", False), bool) and
                (seed > 1 or not s.get("more"))):
            raise ExperimentError("%s: ratio needs num, a list den and "
                                  "the seed's factor (and optionally more "
                                  "= true, for a factor above 1 the seed "
                                  "gives as a bound from below)" % where)

    def _check_across(self, where):
        """trend and steady: a (and optionally b) from one sweep point to
        another; a trend says which way it goes."""
        keys = {"a", "b", "from", "to"} | \
            ({"grows", "falls", "seed"} if self.form == "trend" else set())
        if not (isinstance(self.spec, dict) and
                {"a", "from", "to"} <= set(self.spec) <= keys and
                self.spec["a"] != self.spec.get("b")):
            raise ExperimentError("%s: %s needs a, from and to (and "
                                  "optionally b, not a)" % (where, self.form))
        sense = [k for k in ("grows", "falls") if k in self.spec]
        if self.form == "trend" and (
                len(sense) != 1 or self.spec[sense[0]] is not True):
            raise ExperimentError("%s: a trend says grows = true or "
                                  "falls = true" % where)
        seed = self.spec.get("seed")
        if "seed" in self.spec and (
                not _number(seed) or
                not (seed > 1 if "grows" in sense else 0 < seed < 1)):
            raise ExperimentError("%s: a trend's seed is its factor from "
                                  "`from` to `to`, above 1 where it grows "
                                  "and in (0, 1) where it falls" % where)
        if self.at:
            raise ExperimentError("%s: %s takes from and to, not at" %
                                  (where, self.form))
        if not (self.spec["from"] and isinstance(self.spec["from"], dict)
                and isinstance(self.spec["to"], dict) and
                self.spec["from"].keys() == self.spec["to"].keys() and
                self.spec["from"] != self.spec["to"]):
            raise ExperimentError("%s: from and to are two different "
                                  "points of the sweep" % where)

    def points(self):
        """The sweep points the claim compares: [from, to] of a trend or
        steady claim, else [at]."""
        if self.form in ACROSS:
            return [self.spec["from"], self.spec["to"]]
        return [self.at]

    def variants(self):
        if self.form == "ratio":
            return [self.spec["num"]] + list(self.spec["den"])
        if self.form in ("better", "at_least", "same"):
            return [self.spec["a"], self.spec["b"]]
        if self.form == "near_zero":
            return [self.spec["a"]]
        if self.form == "best":
            return list(self.spec["ours"]) + list(self.spec["theirs"])
        if self.form in ACROSS:
            return [self.spec["a"]] + ([self.spec["b"]] if "b" in self.spec
                                       else [])
        return []


class Experiment:
    def __init__(self, d, path, variants):
        self.path = path
        self.name = d.get("name")
        where = os.path.basename(path)
        _keys(d, where, EXP_KEYS)
        if self.name != os.path.basename(path)[:-5]:
            raise ExperimentError("%s: name must equal the file name" % where)
        for k in ("title", "source", "scenario"):
            if k not in d:
                raise ExperimentError("%s: needs %s" % (where, k))
        self.title, self.source = d["title"], d["source"]
        self.scenario = d["scenario"]
        self.set = d.get("set", {})
        self.sysctl = d.get("sysctl", {})
        self.profile = d.get("profile")
        self.scaled = d.get("scaled", "")
        self.mix = d.get("mix")
        if self.mix:
            self.variants = list(self.mix)
        else:
            self.variants = list(d.get("variants", []))
        if not self.variants:
            raise ExperimentError("%s: needs variants or mix" % where)
        missing = [v for v in self.variants if v not in variants]
        if missing:
            raise ExperimentError("%s: unknown variant(s) %s" %
                                  (where, ", ".join(missing)))
        self.catalogue = {v: variants[v] for v in self.variants}
        self.mice = self._mice(d.get("mice"), where, variants)
        self.base_qdisc = load_scenario(self.scenario).qdisc \
            if os.path.exists(os.path.join(SCENARIO_DIR,
                                           self.scenario + ".toml")) else None
        self.sweep = d.get("sweep")
        if self.sweep is not None:
            _keys(self.sweep, where + " [sweep]",
                  ("key", "values", "label", "scale", "follow"))
            if not self.sweep.get("values"):
                raise ExperimentError("%s: the sweep needs values" % where)
            # Numbers, or names (a categorical axis, such as
            # forward.reorder.dist), not both; names take no scale.
            text = [isinstance(v, str) for v in self.sweep["values"]]
            if any(text) and not all(text):
                raise ExperimentError("%s: the sweep's values are all "
                                      "numbers or all names" % where)
            if all(text) and "scale" in self.sweep:
                raise ExperimentError("%s: a sweep of names takes no "
                                      "scale" % where)
            self._follow(where, any(text))
        self.modes = {}
        for m in MODES:
            if m in d:
                self.modes[m] = self._mode(d[m], "%s [%s]" % (where, m))
        if "full" not in self.modes:
            raise ExperimentError("%s: needs a [full] table" % where)
        plot = d.get("plot", {})
        _keys(plot, where + " [plot]", ("y", "label", "seed"))
        self.metric = plot.get("y", "goodput")
        self.ylabel = plot.get("label", "goodput (Mbit/s)")
        if self.metric not in METRICS:
            raise ExperimentError("%s: unknown metric %r" %
                                  (where, self.metric))
        self.seed_marks = self._seed_marks(plot.get("seed", {}),
                                           where + " [plot] seed")
        self.claims = [Claim(c, self) for c in d.get("claim", [])]
        self.check_scenario()

    def _seed_marks(self, marks, where):
        """The seed's own numbers for the plot: {variant: [[x, y], ...]},
        x a sweep value, y in the plot's metric."""
        _keys(marks, where, self.arms())
        values = self.sweep["values"] if self.sweep else []
        for v, pts in marks.items():
            if not (isinstance(pts, list) and pts and all(
                    isinstance(p, list) and len(p) == 2 and p[0] in values
                    and _number(p[1]) for p in pts)):
                raise ExperimentError("%s: %s is a list of [x, y], x a "
                                      "sweep value" % (where, v))
        return marks

    def arms(self):
        """What the report shows a line of: the variants, and the short
        flows where they run."""
        return self.variants + ([MICE] if self.mice else [])

    def _mice(self, m, where, variants):
        """[mice]: short flows from pairs of their own, after the mix's
        (seed 001 §XII-A), with their variant's congestion control and
        profile; None without."""
        if m is None:
            return None
        where += " [mice]"
        _keys(m, where, MICE_KEYS)
        if not self.mix:
            raise ExperimentError("%s: mice run beside a mix" % where)
        var = variants.get(m.get("variant"))
        if var is None or var.params or var.set:
            raise ExperimentError("%s: variant must be one of the "
                                  "catalogue without params or set" % where)
        m = {"pairs": 1, "mean_bytes": 10000, "shape": 1.5, **m}
        if not (isinstance(m["pairs"], int) and 1 <= m["pairs"] <= 32 and
                isinstance(m.get("per_s"), (int, float)) and
                0 < m["per_s"] <= 100 and m["mean_bytes"] > 0 and
                m["shape"] > 1):
            raise ExperimentError("%s: pairs 1..32, per_s (short flows a "
                                  "second from each pair) above 0 and up "
                                  "to 100, mean_bytes above 0, shape above "
                                  "1" % where)
        self.catalogue[m["variant"]] = var
        return {**m, "cc": var.cc}

    def _mode(self, m, where):
        _keys(m, where, ("reps", "duration_s", "values", "variants"))
        if not isinstance(m.get("reps"), int) or m["reps"] < 1:
            raise ExperimentError("%s: reps must be a positive integer" %
                                  where)
        if not m.get("duration_s", 0) > 0:
            raise ExperimentError("%s: duration_s must be positive" % where)
        for v in m.get("variants", []):
            if v not in self.variants:
                raise ExperimentError("%s: variant %s is not in the "
                                      "experiment" % (where, v))
        for v in m.get("values", []):
            if self.sweep is None or v not in self.sweep["values"]:
                raise ExperimentError("%s: value %r is not a sweep value" %
                                      (where, v))
        return m

    def claim_cells(self):
        """{(experiment, variant, point key)}: every cell a claim of this
        experiment compares, its variants at its sweep points; a variant
        of another experiment (EXPERIMENT:VARIANT) in that one, and the
        flows of a mix in its one run."""
        cells = set()
        for c in self.claims:
            for v in c.variants():
                name, var = v.split(":") if ":" in v else (self.name, v)
                if name == self.name and self.mix:
                    var = "mix"
                cells.update((name, var, point_key(pt)) for pt in c.points())
        return cells

    def check_scenario(self):
        """Load the scenario with every variant and sweep value, so that a
        bad key fails here and not an hour into a run."""
        if not os.path.exists(os.path.join(SCENARIO_DIR,
                                           self.scenario + ".toml")):
            raise ExperimentError("%s: no scenario %r" %
                                  (self.name, self.scenario))
        for point in self.sweep_points(None):
            for v in self.variants:
                try:
                    self.scenario_for(v, point, 10)
                except ScenarioError as e:
                    raise ExperimentError("%s: %s %s: %s" %
                                          (self.name, v, point, e)) from None

    def _follow(self, where, names):
        """[sweep] follow: keys that move with the swept one, each set to
        a factor times the swept value (the seed's reordering delay, a
        multiple of the propagation delay it sweeps)."""
        follow = self.sweep.get("follow", {})
        if not isinstance(follow, dict):
            raise ExperimentError("%s: [sweep] follow is a table of "
                                  "key = factor" % where)
        if follow and names:
            raise ExperimentError("%s: a sweep of names moves no other "
                                  "key" % where)
        for k, f in follow.items():
            if k == self.sweep["key"]:
                raise ExperimentError("%s: [sweep] follow %s: the key is "
                                      "swept" % (where, k))
            if k in self.set:
                raise ExperimentError("%s: [sweep] follow %s: the key is "
                                      "set by the experiment" % (where, k))
            if not _number(f) or f <= 0:
                raise ExperimentError("%s: [sweep] follow %s = %r: the "
                                      "factor is a positive number" %
                                      (where, k, f))

    def followed(self, point):
        """The keys a sweep point moves beside its own."""
        if self.sweep is None or self.sweep["key"] not in point:
            return {}
        v = point[self.sweep["key"]]
        return {k: f * v for k, f in self.sweep.get("follow", {}).items()}

    def sweep_points(self, mode, every=False):
        """The sweep values of a mode (every=True: all of them)."""
        if self.sweep is None:
            return [{}]
        vals = None if every else self.modes.get(mode, {}).get("values")
        vals = vals or self.sweep["values"]
        return [{self.sweep["key"]: v} for v in vals]

    def overrides(self, variant, point, duration):
        """Scenario overrides, in order: experiment, variant(s), point.
        A variant that needs an epdn bottleneck on a RED/ECN path gets
        epdn with the same RED marking (bottleneck.epdn_red)."""
        over = dict(self.set)
        over["run.duration_s"] = duration
        names = [variant] if variant != "mix" else self.variants
        for v in names:
            over.update(self.catalogue[v].set)
        if over.get("bottleneck.qdisc") == "epdn" and \
                self.set.get("bottleneck.qdisc", self.base_qdisc) == "red":
            over["bottleneck.epdn_red"] = True
        over.update(self.followed(point))
        over.update(point)
        if self.mix:
            over["run.pairs"] = sum(self.mix.values()) + \
                (self.mice["pairs"] if self.mice else 0)
        return over

    def scenario_for(self, variant, point, duration):
        """The scenario of one run.  On a RED/ECN path every variant
        negotiates ECN (the seeds mark on all routers), whatever its
        profile says, unless the experiment's sysctl table says otherwise."""
        sc = load_scenario(self.scenario,
                           self.overrides(variant, point, duration))
        ecn = {"net.ipv4.tcp_ecn": 1} if self.set.get(
            "bottleneck.qdisc", self.base_qdisc) == "red" else {}
        sc.sysctl = {**sc.sysctl, **ecn, **self.sysctl}
        return sc

    def profile_for(self, variant, sc, point=None):
        """A swept run.profile; else a variant's profile, else the
        experiment's, else the scenario's.  Each flow of a mix gets its
        own variant's."""
        if point and "run.profile" in point:
            return point["run.profile"]
        if variant == "mix":
            return self.profile or sc.profile
        return self.catalogue[variant].profile or self.profile or sc.profile

    def flows(self, variant):
        """The variants of the flows of one run."""
        if variant != "mix":
            return [variant]
        return [v for v, n in self.mix.items() for _ in range(n)]

    def points(self, mode, reps=None, variants=None, duration=None,
               every=False):
        """Every Point of a mode, repetition-major so that the first
        results cover every variant.  every=True takes every sweep value,
        with the mode's reps and duration."""
        m = self.modes.get(mode) or self.modes["full"]
        reps = reps or m["reps"]
        if duration and self.sweep and self.sweep["key"] == SWEPT_LENGTH:
            raise ExperimentError("%s sweeps %s: --duration cannot set "
                                  "its runs' length" % (self.name,
                                                        SWEPT_LENGTH))
        duration = duration or m["duration_s"]
        if self.mix:
            names = ["mix"]
        else:
            names = variants or m.get("variants") or self.variants
        return [Point(self, mode, v, sp, rep, duration)
                for rep in range(reps)
                for sp in self.sweep_points(mode, every)
                for v in names]


class Point:
    """One run: experiment, mode, variant (or "mix"), sweep point, rep."""

    def __init__(self, exp, mode, variant, point, rep, duration):
        self.exp, self.mode, self.variant = exp, mode, variant
        self.point, self.rep = point, rep
        # a swept run length is the length its scenario gives the run
        self.duration = point.get(SWEPT_LENGTH, duration)

    def key(self):
        return point_key(self.point)

    def relpath(self):
        return os.path.join(self.exp.name, self.mode, self.variant,
                            "%s-rep%d.json" % (self.key(), self.rep))

    def clock(self):
        """The clock this point runs on unless --clock says otherwise:
        its path's run.clock."""
        return self.exp.scenario_for(self.variant, self.point,
                                     self.duration).clock

    def params(self):
        """Module parameters every flow's variant needs: {module: {p: v}}."""
        out = {}
        for v in set(self.exp.flows(self.variant)):
            for mod, ps in self.exp.catalogue[v].params.items():
                for p, val in ps.items():
                    have = out.setdefault(mod, {}).setdefault(p, val)
                    if have != val:
                        raise ExperimentError(
                            "%s: the mix needs %s.%s both %r and %r" %
                            (self.exp.name, mod, p, have, val))
        return out

    def pinned(self):
        """params(), plus every parameter that another variant of the
        experiment sets on a module this point uses, as None: the
        value it had before the run touched it (runner.ParamGate)."""
        out = self.params()
        mods = set(out) | {"tcp_" + self.exp.catalogue[v].cc
                           for v in self.exp.flows(self.variant)}
        for var in self.exp.catalogue.values():
            for mod, ps in var.params.items():
                if mod in mods:
                    for p in ps:
                        out.setdefault(mod, {}).setdefault(p, None)
        return out

    def spec(self):
        """What the point runs, as stored in its record: a stored record
        with another spec (the experiment or a variant changed since) is
        run again."""
        exp = self.exp
        sc = exp.scenario_for(self.variant, self.point, self.duration)
        out = {"scenario": resolved(sc), "sysctl": sc.sysctl,
               "flows": [{"variant": v, "cc": exp.catalogue[v].cc,
                          "profile": exp.profile_for(v, sc, self.point),
                          "params": exp.catalogue[v].params}
                         for v in exp.flows(self.variant)]}
        if sc.sender_drop():
            # Records before the senders' links dropped one segment at a
            # time (Topology.sender_segments) lost two at once.
            out["sender_loss"] = "per segment"
        if exp.mice:
            out["mice"] = {**exp.mice, "profile": exp.profile_for(
                exp.mice["variant"], sc, self.point)}
        return out

    def ran_by(self, rec):
        """@rec ran what the files give for this point now: its meta.spec
        is spec(), as JSON stores it, but for module parameters: one that
        either side leaves out counts at the value the record's module had
        (meta.modules), so that writing out a default changes nothing."""
        have = rec["meta"].get("spec") or {}
        want = json.loads(json.dumps(self.spec()))
        ran_s = rec["meta"].get("duration_s")
        if ran_s is not None and float(ran_s) != float(self.duration):
            return False
        if len(have.get("flows") or []) != len(want["flows"]):
            return False
        ran = rec["meta"].get("modules") or {}
        return _without_params(have) == _without_params(want) and all(
            same_params(a.get("params") or {}, b["params"], ran)
            for a, b in zip(have["flows"], want["flows"]))

    def __str__(self):
        return "%s %s %s rep %d%s" % (self.exp.name, self.variant,
                                      self.key(), self.rep,
                                      " (%s)" % self.mode
                                      if CHECK_MODE.match(self.mode) else "")


def resolved(obj):
    """Every value a scenario resolved to, defaults included, so that a
    default written out in a file does not change what a point is.  The
    clock a path runs on by default is not what it runs: meta.clock
    names the one a record had.  A key added later (LATER_KEYS) counts
    only where it differs from the default older records ran with."""
    if hasattr(obj, "__dict__"):
        return {k: resolved(v) for k, v in sorted(vars(obj).items())
                if k not in ("path", "source", "clock") and
                not (k in LATER_KEYS and v == LATER_KEYS[k])}
    if isinstance(obj, dict):
        return {k: resolved(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [resolved(v) for v in obj]
    return obj


def _without_params(spec):
    return {**spec, "flows": [{k: v for k, v in f.items() if k != "params"}
                              for f in spec["flows"]]}


def same_params(a, b, ran):
    """Module parameters @a and @b ({module: {param: value}}) agree, a
    parameter missing from one taken at its value in @ran (a record's
    meta.modules: what the kernel showed, bools as Y or N)."""
    for m in set(a) | set(b):
        had = (ran.get(m) or {}).get("parameters") or {}
        for p in set(a.get(m, {})) | set(b.get(m, {})):
            x, y = (_param(d.get(m, {}).get(p, had.get(p))) for d in (a, b))
            if x is None or x != y:
                return False
    return True


def _param(v):
    if v is None:
        return None
    text = param_text(v)
    return {"Y": "1", "N": "0"}.get(text, text)


def current(exp, rec):
    """@rec, a stored record of @exp, ran what @exp's files give for its
    point now (a record of another spec, or of a variant since removed,
    did not)."""
    pt = Point(exp, rec["mode"], rec["variant"], rec["point"], rec["rep"],
               rec["meta"].get("duration_s"))
    try:
        return pt.ran_by(rec)
    except (ExperimentError, ScenarioError, KeyError):
        return False


def point_key(point):
    if not point:
        return "base"
    return ",".join("%s=%s" % (k, re.sub(r"[^A-Za-z0-9.+-]", "_", str(v)))
                    for k, v in sorted(point.items()))


def load_experiment(name, variants=None, refs=True):
    """An experiment file by name or path.  refs: also load the
    experiments its claims name (EXPERIMENT:VARIANT, from the same
    folder) and check that each has that variant and the claim's point."""
    variants = variants or load_variants()
    path = name if name.endswith(".toml") else \
        os.path.join(EXPERIMENT_DIR, name + ".toml")
    if not os.path.exists(path):
        raise ExperimentError("no experiment %r (satnet list shows them)" %
                              name)
    exp = Experiment(_read(path), path, variants)
    if refs:
        check_refs(exp, variants)
    return exp


def check_refs(exp, variants):
    """Each EXPERIMENT:VARIANT of a claim: that experiment, beside this
    one, has the variant and runs the claim's point."""
    folder = os.path.dirname(exp.path)
    for c in exp.claims:
        where = "%s: claim %s" % (exp.name, c.id)
        for name, var in c.refs:
            path = os.path.join(folder, name + ".toml")
            if not os.path.exists(path):
                raise ExperimentError("%s: no experiment %r beside this "
                                      "one" % (where, name))
            other = load_experiment(path, variants, refs=False)
            if var not in other.variants and not (var == MICE and
                                                  other.mice):
                raise ExperimentError("%s: %s has no variant %r" %
                                      (where, name, var))
            keys = [point_key(p) for p in other.sweep_points(None, True)]
            for pt in c.points():
                if point_key(pt) not in keys:
                    raise ExperimentError("%s: %s does not run the point "
                                          "%s" % (where, name,
                                                  point_key(pt)))


def load_all(variants=None, folder=EXPERIMENT_DIR):
    variants = variants or load_variants()
    return [load_experiment(p, variants) for p in
            sorted(glob.glob(os.path.join(folder, "*.toml")))]


def parse_point(items, exp):
    """--point KEY=V: values of the sweep key, or 'variant=NAME'.  Either
    may repeat, and a point then matches any of them: returns
    ({key: [values]}, [names])."""
    point, variants = {}, []
    for it in items:
        key, _, val = it.partition("=")
        if key == "variant":
            variants.append(val)
            continue
        try:
            val = tomllib.loads("v = " + val)["v"]
        except tomllib.TOMLDecodeError:
            pass
        if exp.sweep is None or key != exp.sweep["key"]:
            raise ExperimentError("%s: --point %s: the sweep key is %s" %
                                  (exp.name, key, exp.sweep and
                                   exp.sweep["key"]))
        point.setdefault(key, []).append(val)
    for v in variants:
        if v not in exp.variants and not (exp.mix and v == "mix"):
            raise ExperimentError("%s: no variant %r here (%s)" %
                                  (exp.name, v, ", ".join(exp.variants)))
    return point, variants
