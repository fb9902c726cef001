# SPDX-License-Identifier: GPL-2.0
"""Means with 95 % confidence intervals, ratios of means, verdicts.

docs/experiments.md ("How a claim is judged") states the rule in words;
this file is its only implementation.
"""

import copy
import functools
import math
import statistics

LEVEL = 0.95
MIN_RUNS = 3            # fewer runs per arm, or shorter runs: a pilot
EQUIV_MARGIN = 1.10     # ratios within [1/1.10, 1.10] are "no effect"
COUNT_MARGIN = 2.0      # counts a run within 2 of each other: "no effect"
RUNS_LIMIT = 200        # runs_to_decide() looks no further

# Strongest first; "weakest" of several is the last in this order.
VERDICTS = ("reproduced", "direction reproduced, magnitude open",
            "direction only", "effect absent", "inconclusive",
            "seed's magnitude refuted", "contradicted", "pilot", "no data")


@functools.lru_cache(maxsize=None)
def _t(df, level=LEVEL):
    # scipy takes half a second to import, far longer in the emulated VM,
    # and most commands never reach a confidence interval.
    from scipy import stats

    return float(stats.t.ppf((1 + level) / 2, df))


class Estimate:
    """Mean of n values and its 95 % CI (Student's t; none for n = 1)."""

    def __init__(self, values):
        self.values = [v for v in values if v is not None]
        self.n = len(self.values)
        self.mean = statistics.fmean(self.values) if self.n else None
        self.sd = statistics.stdev(self.values) if self.n > 1 else None
        self.half = _t(self.n - 1) * self.sd / math.sqrt(self.n) \
            if self.n > 1 else None

    @classmethod
    def like(cls, e, n):
        """@e's mean and SD over @n runs: what more runs would give if
        they kept the spread seen so far."""
        s = cls(e.values)
        s.n = n
        s.half = _t(n - 1) * s.sd / math.sqrt(n)
        return s

    @property
    def lo(self):
        return self.mean - self.half if self.half is not None else None

    @property
    def hi(self):
        return self.mean + self.half if self.half is not None else None

    def fmt(self, digits=3):
        """The mean, the CI's half-width and the SD, named as such."""
        if self.mean is None:
            return "–"
        if self.half is None:
            return "%.*g (n=1)" % (digits, self.mean)
        return "%.*g (95 %% CI ± %.2g, SD %.2g, n=%d)" % (
            digits, self.mean, self.half, self.sd, self.n)


def _welch_half(parts, level):
    """The half-width of a sum of independent terms, @parts as
    [(variance, n)]: t at the Welch-Satterthwaite degrees of freedom,
    (sum v)^2 / sum(v^2 / (n - 1)), times the root of the summed
    variances; 0 when they sum to 0."""
    total = sum(v for v, _ in parts)
    if total == 0:
        return 0.0
    df = total ** 2 / sum(v ** 2 / (n - 1) for v, n in parts)
    return _t(df, level) * math.sqrt(total)


class Ratio:
    """A / B of two independent positive means, with its CI on the log
    scale: log A - log B by the delta method (the squared relative
    standard errors add), Welch-Satterthwaite degrees of freedom, then
    exponentiated, so the interval is never below zero and its inverse is
    the interval of B / A.  @level widens it (a multiplicity correction)."""

    def __init__(self, a, b, level=LEVEL):
        self._fit([a], [b], level)

    @property
    def a(self):
        return self.num[0]

    @property
    def b(self):
        return self.den[0]

    def _fit(self, num, den, level):
        """The product of the means @num over that of the means @den."""
        self.num, self.den, self.level = num, den, level
        self.value = self.lo = self.hi = self.diff = None
        self.zero = False
        ests = num + den
        if any(e.mean is None or e.mean < 0 for e in ests):
            return
        if any(e.mean == 0 for e in ests):
            # a count that was 0 in every run: no ratio, but a direction
            self.zero = True
            if len(ests) == 2:
                self.diff = Difference(num[0], den[0], level)
            return
        self.value = math.prod(e.mean for e in num) / \
            math.prod(e.mean for e in den)
        if any(e.n < 2 for e in ests):
            return
        w = _welch_half([((e.sd / e.mean) ** 2 / e.n, e.n) for e in ests],
                        level)
        self.lo, self.hi = self.value * math.exp(-w), self.value * math.exp(w)

    @property
    def has_ci(self):
        return self.lo is not None

    @property
    def estimates(self):
        return self.num + self.den

    def count_diff(self):
        """A - B of a ratio of two means, for counts whose ratio is too
        noisy to judge (a timeout or two a run); None for a Trend."""
        if self.diff:
            return self.diff
        if len(self.num) != 1 or self.value is None:
            return None
        return Difference(self.num[0], self.den[0], self.level)

    def grown(self, n):
        """The same ratio with every arm at @n runs (Estimate.like)."""
        r = copy.copy(self)
        r._fit([Estimate.like(e, n) for e in self.num],
               [Estimate.like(e, n) for e in self.den], self.level)
        return r

    def inverse(self):
        """B / A with the same interval, inverted."""
        r = copy.copy(self)
        r.num, r.den = self.den, self.num
        r.diff = self.diff.negated() if self.diff else None
        r.value = 1 / self.value if self.value else None
        r.lo = 1 / self.hi if self.has_ci else None
        r.hi = 1 / self.lo if self.has_ci else None
        return r

    def fmt(self):
        if self.diff:
            return self.diff.fmt()
        if self.value is None:
            return "–"
        if not self.has_ci:
            return "%.2f" % self.value
        return "%.2f [%.2f, %.2f]" % (self.value, self.lo, self.hi)


class Trend(Ratio):
    """How the ratio of A to B moved across the sweep: (A / B at `to`) /
    (A / B at `from`), four independent positive means, above 1 where the
    ratio grew.  Its log is log A_to - log B_to - log A_from + log B_from,
    so its CI is a Ratio's with four terms: the four squared relative
    standard errors add, with Welch-Satterthwaite degrees of freedom over
    the four.  A mean of 0 leaves it without a value (`zero`): a ratio at
    a point would be 0 or infinite."""

    def __init__(self, a_to, b_to, a_from, b_from, level=LEVEL):
        self._fit([a_to, b_from], [b_to, a_from], level)


class Level:
    """One arm's mean count a run, for a claim that it is almost zero:
    value, lo and hi are the mean and its 95 % CI (Student's t)."""

    diff, zero = None, False

    def __init__(self, e):
        self.e, self.value, self.lo, self.hi = e, e.mean, e.lo, e.hi

    @property
    def has_ci(self):
        return self.hi is not None

    @property
    def estimates(self):
        return [self.e]

    def grown(self, n):
        return Level(Estimate.like(self.e, n))

    def fmt(self):
        return self.e.fmt()


class Difference:
    """A - B with its Welch CI: what a Ratio falls back on when a mean is
    zero (a count that no run saw).  sign() is +1 or -1 when the CI lies
    above or below zero, 0 when both arms were 0 in every run, else
    None."""

    def __init__(self, a, b, level=LEVEL):
        self.value = a.mean - b.mean
        self.lo = self.hi = None
        if a.n < 2 or b.n < 2:
            return
        w = _welch_half([(e.sd ** 2 / e.n, e.n) for e in (a, b)], level)
        self.lo, self.hi = self.value - w, self.value + w

    @property
    def has_ci(self):
        return self.lo is not None

    def negated(self):
        d = Difference.__new__(Difference)
        d.value = -self.value
        d.lo = -self.hi if self.has_ci else None
        d.hi = -self.lo if self.has_ci else None
        return d

    def sign(self):
        if self.lo > 0:
            return 1
        if self.hi < 0:
            return -1
        return 0 if self.lo == self.hi == 0 else None

    def fmt(self):
        if not self.has_ci:
            return "%.3g" % self.value
        return "%.3g [%.3g, %.3g]" % (self.value, self.lo, self.hi)


class Judgement:
    """A verdict with its two parts: the direction of the effect and its
    size against the seed's, each reproduced, contradicted/refuted or
    open ('–' where the claim states no size)."""

    def __init__(self, verdict, direction="–", magnitude="–"):
        self.verdict, self.direction, self.magnitude = \
            verdict, direction, magnitude
        # runs an arm that would decide an inconclusive verdict
        # (runs_to_decide()), when someone asked
        self.decide = None
        # (margin, Difference) when two counts were judged by how far
        # apart they are, not by their ratio (_near())
        self.near = None

    def __repr__(self):
        return "Judgement(%r, %r, %r)" % (self.verdict, self.direction,
                                          self.magnitude)


def _ready(r, full, runs):
    """The Judgement that stands when @r cannot be judged, or None."""
    if r.value is None and r.diff is None and not r.zero:
        return Judgement("no data")
    if not full or runs < MIN_RUNS:
        return Judgement("pilot")
    if r.zero and r.diff is None:
        # a Trend with a mean of 0: no ratio of ratios, nor a direction
        return Judgement("inconclusive", "open")
    if not (r.diff or r).has_ci:
        return Judgement("pilot")
    return None


def _near(r, floor):
    """@r (a Ratio of two counts a run) within @floor events a run of
    equality: its difference's CI inside [-@floor, @floor].  Returns the
    Judgement's `near`, or None (no @floor, or not that close)."""
    d = r.count_diff() if floor else None
    if d is None or not d.has_ci or not -floor <= d.lo <= d.hi <= floor:
        return None
    return floor, d


def _absent(r, margin, floor, verdict="effect absent", direction="open",
            size="–"):
    """The Judgement that no effect was found, by the ratio (inside
    [1/@margin, @margin]) or, for counts, by the difference (_near());
    None when neither says so."""
    near = None
    if not _no_effect(r, margin):
        near = _near(r, floor)
        if near is None:
            return None
    j = Judgement(verdict, direction, size)
    j.near = near
    return j


def _judge_zero(r, kind, floor=None):
    """A mean of zero: the direction from the difference of the means;
    the size of a ratio to zero stays open.  @kind is factor, better,
    at_least or same; @floor as for _near()."""
    sign = r.diff.sign()
    near = _near(r, floor) if sign is None else None
    if kind == "same":
        j = Judgement("reproduced", "reproduced") if sign == 0 or near \
            else Judgement("contradicted", "contradicted") if sign else \
            Judgement("inconclusive", "open")
        j.near = near
        return j
    size = "open" if kind == "factor" else "–"
    if kind == "at_least" and (sign == 1 or r.b.mean == 0):
        return Judgement("reproduced", "reproduced")
    if sign == 1:
        return Judgement("direction reproduced, magnitude open"
                         if kind == "factor" else "reproduced",
                         "reproduced", size)
    if sign == -1:
        return Judgement("contradicted", "contradicted", size)
    if (sign == 0 or near) and kind != "at_least":
        j = Judgement("effect absent", "open", size)
        j.near = near
        return j
    return Judgement("inconclusive", "open", size)


def _no_effect(r, margin):
    return r.has_ci and 1 / margin <= r.lo and r.hi <= margin


def judge_factor(r, seed, full=True, runs=MIN_RUNS, margin=EQUIV_MARGIN,
                 floor=None, more=False):
    """The seed says A / B = @seed (> 1: A higher; < 1: A lower).  The
    ratio is oriented so that the seed's direction is above 1; the
    magnitude is reproduced when the CI lies inside [s^0.5, s^1.5] and
    refuted when it lies outside that band; @more ("more than two
    fold"): the band has no upper end.  @floor: for counts a run, the
    difference within which they count as the same (_near())."""
    j = _ready(r, full, runs)
    if j:
        return j
    if seed < 1:
        r, seed = r.inverse(), 1 / seed
    if r.diff:
        return _judge_zero(r, "factor", floor)
    band = (seed ** 0.5, math.inf if more else seed ** 1.5)
    inside = band[0] <= r.lo and r.hi <= band[1]
    outside = r.hi < band[0] or r.lo > band[1]
    size = "reproduced" if inside else "refuted" if outside else "open"
    if r.lo > 1:
        if inside:
            return Judgement("reproduced", "reproduced", size)
        if outside:
            return Judgement("direction only", "reproduced", size)
        return Judgement("direction reproduced, magnitude open",
                         "reproduced", size)
    if r.hi < 1:
        return Judgement("contradicted", "contradicted", size)
    absent = _absent(r, margin, floor, size=size)
    if absent:
        return absent
    if outside:
        return Judgement("seed's magnitude refuted", "open", size)
    return Judgement("inconclusive", "open", size)


def judge_better(r, full=True, runs=MIN_RUNS, margin=EQUIV_MARGIN,
                 floor=None):
    """The seed says A / B > 1, with no size."""
    j = _ready(r, full, runs)
    if j:
        return j
    if r.diff:
        return _judge_zero(r, "better", floor)
    if r.lo > 1:
        return Judgement("reproduced", "reproduced")
    if r.hi < 1:
        return Judgement("contradicted", "contradicted")
    return _absent(r, margin, floor) or Judgement("inconclusive", "open")


def judge_at_least(r, full=True, runs=MIN_RUNS, margin=EQUIV_MARGIN,
                   floor=None):
    """Non-inferiority: the seed says A is at least B; reproduced when the
    CI's lower end is above 1 / @margin, contradicted when its upper end
    is below it."""
    j = _ready(r, full, runs)
    if j:
        return j
    if r.diff:
        return _judge_zero(r, "at_least", floor)
    if r.lo >= 1 / margin:
        return Judgement("reproduced", "reproduced")
    if r.hi < 1 / margin:
        return Judgement("contradicted", "contradicted")
    return Judgement("inconclusive", "open")


def judge_same(r, full=True, runs=MIN_RUNS, margin=EQUIV_MARGIN,
               floor=None):
    """Equivalence: the seed says A ≈ B; reproduced when the CI lies
    inside [1 / @margin, @margin], contradicted when it lies outside."""
    j = _ready(r, full, runs)
    if j:
        return j
    if r.diff:
        return _judge_zero(r, "same", floor)
    absent = _absent(r, margin, floor, "reproduced", "reproduced")
    if absent:
        return absent
    if r.lo > margin or r.hi < 1 / margin:
        return Judgement("contradicted", "contradicted")
    return Judgement("inconclusive", "open")


def judge_near_zero(r, full=True, runs=MIN_RUNS, floor=COUNT_MARGIN):
    """The seed says A's count is almost zero: reproduced when the CI of
    its mean (@r, a Level) lies at or below @floor events a run,
    contradicted when it lies wholly above it."""
    j = _ready(r, full, runs)
    if j:
        return j
    if r.hi <= floor:
        return Judgement("reproduced", "reproduced")
    if r.lo > floor:
        return Judgement("contradicted", "contradicted")
    return Judgement("inconclusive", "open")


class Pooled:
    """Several cells' ratios B / A pooled on the log scale: each cell's
    log ratio weighted by the inverse of its variance (the squared
    relative standard errors of its two means), the fixed-effect mean of
    a meta-analysis.  Its CI takes Student's t at the cells' summed
    degrees of freedom (the smaller arm's n - 1 each), and Cochran's Q
    with its p-value says whether the cells disagree with one another
    beyond their noise.  @cells: [(A, B)] Estimates; a cell with no
    spread or fewer than 2 runs an arm cannot be weighed and is left
    out (self.left_out).  judge_same() judges it as it judges one
    cell's Ratio, @runs the fewest runs an arm of a cell weighed."""

    diff, zero = None, False

    def __init__(self, cells, level=LEVEL):
        used = [(a, b) for a, b in cells if a.n > 1 and b.n > 1 and
                a.mean and b.mean and a.mean > 0 and b.mean > 0 and
                (a.sd or b.sd)]
        self.used, self.level = used, level
        self.k, self.left_out = len(used), len(cells) - len(used)
        self.runs = min((min(a.n, b.n) for a, b in used), default=0)
        self.value = self.lo = self.hi = self.q = self.p = None
        if not used:
            return
        logs = [math.log(b.mean / a.mean) for a, b in used]
        w = [1 / ((a.sd / a.mean) ** 2 / a.n + (b.sd / b.mean) ** 2 / b.n)
             for a, b in used]
        mean = sum(x * y for x, y in zip(w, logs)) / sum(w)
        df = sum(min(a.n, b.n) - 1 for a, b in used)
        half = _t(df, level) / math.sqrt(sum(w))
        self.value = math.exp(mean)
        self.lo, self.hi = math.exp(mean - half), math.exp(mean + half)
        self.q = sum(x * (y - mean) ** 2 for x, y in zip(w, logs))
        if self.k > 1:
            from scipy import stats
            self.p = float(stats.chi2.sf(self.q, self.k - 1))

    @property
    def has_ci(self):
        return self.lo is not None

    def count_diff(self):
        """Cells pooled have no one difference of counts."""
        return None

    @property
    def estimates(self):
        return [e for cell in self.used for e in cell]

    def grown(self, n):
        """The same pool with every arm of every cell at @n runs."""
        return Pooled([(Estimate.like(a, n), Estimate.like(b, n))
                       for a, b in self.used], self.level)

    def fmt(self):
        if not self.has_ci:
            return "–"
        return "%.3f [%.3f, %.3f]" % (self.value, self.lo, self.hi)


def runs_to_decide(rule, r, **kw):
    """The fewest runs an arm (every arm alike, at full length) at which
    @rule(@r) (a Ratio, Trend or Pooled) would no longer say
    "inconclusive" if the runs to come kept the means and spreads
    measured so far: a power estimate from the runs made, not a promise.
    None when @r has no interval (a mean of 0, a single run) or
    RUNS_LIMIT runs would not do (a ratio on a boundary of the rule).
    A mean of 0 grows as its difference (an arm always 0 stays so)."""
    if r.zero and not r.diff or not (r.diff or r).has_ci:
        return None
    for n in range(max(e.n for e in r.estimates) + 1, RUNS_LIMIT + 1):
        if rule(r.grown(n), full=True, runs=n, **kw).verdict != \
                "inconclusive":
            return n
    return None


def decided(j, tests):
    """@j, and when it is inconclusive the runs an arm that would decide
    it: each of @tests [(rule, Ratio or Pooled, kw)] that is inconclusive
    on its own must be decided, so the most any of them needs (None: one
    of them would not be decided within RUNS_LIMIT)."""
    if j.verdict != "inconclusive":
        return j
    need = [runs_to_decide(rule, r, **kw) for rule, r, kw in tests
            if rule(r, full=True, runs=min(e.n for e in r.estimates),
                    **kw).verdict == "inconclusive"]
    j.decide = max(need) if need and None not in need else None
    return j


def decide_note(j):
    """What an inconclusive verdict needs, or what made two counts the
    same, as the verdict cell says it."""
    if j.near:
        floor, d = j.near
        return " (the counts differ by less than %g a run: difference " \
            "%s)" % (floor, d.fmt())
    if j.verdict != "inconclusive":
        return ""
    if j.decide is None:
        return " (more runs would not decide it: a ratio on the rule's " \
            "boundary, or no spread to go by)"
    return " (about %d runs an arm would decide it, if the spread holds)" \
        % j.decide


def weakest(judgements):
    """A claim against several baselines holds only as far as it holds
    against each: the weakest verdict (VERDICTS' order) stands."""
    return max(judgements, key=lambda j: VERDICTS.index(j.verdict))


def holm_level(k):
    """The CI level for one of @k candidates when the question is whether
    any of them holds: Holm's first step, alpha / k (Bonferroni)."""
    return 1 - (1 - LEVEL) / max(1, k)


def pooled(estimates):
    """The mean of several variants' means, as one estimate over their
    values."""
    return Estimate([v for e in estimates for v in e.values])
