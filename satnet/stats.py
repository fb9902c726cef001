# SPDX-License-Identifier: GPL-2.0
"""Means with 95 % confidence intervals, ratios of means, verdicts."""

import math
import statistics

from scipy import stats as _st

LEVEL = 0.95


class Estimate:
    """Mean of n values and its 95 % CI (Student's t; none for n = 1)."""

    def __init__(self, values):
        self.values = [v for v in values if v is not None]
        self.n = len(self.values)
        self.mean = statistics.fmean(self.values) if self.n else None
        if self.n > 1:
            sem = statistics.stdev(self.values) / math.sqrt(self.n)
            self.half = _st.t.ppf((1 + LEVEL) / 2, self.n - 1) * sem
        else:
            self.half = None

    @property
    def lo(self):
        return self.mean - self.half if self.half is not None else None

    @property
    def hi(self):
        return self.mean + self.half if self.half is not None else None

    def fmt(self, digits=3):
        if self.mean is None:
            return "–"
        if self.half is None:
            return "%.*g (n=1)" % (digits, self.mean)
        return "%.*g ± %.2g (n=%d)" % (digits, self.mean, self.half, self.n)


class Ratio:
    """A / B of two independent means, with a 95 % CI by the delta
    method: relative standard errors add in quadrature, with the
    Welch-Satterthwaite degrees of freedom."""

    def __init__(self, a, b):
        self.a, self.b = a, b
        self.value = a.mean / b.mean if a.mean is not None and b.mean \
            else None
        self.half = None
        if self.value is not None and a.n > 1 and b.n > 1 and a.mean:
            ra = (statistics.stdev(a.values) / a.mean) ** 2 / a.n
            rb = (statistics.stdev(b.values) / b.mean) ** 2 / b.n
            if ra + rb == 0:
                self.half = 0.0
            else:
                df = (ra + rb) ** 2 / (ra ** 2 / (a.n - 1) +
                                       rb ** 2 / (b.n - 1))
                self.half = _st.t.ppf((1 + LEVEL) / 2, df) * \
                    self.value * math.sqrt(ra + rb)

    @property
    def lo(self):
        return self.value - self.half if self.half is not None else None

    @property
    def hi(self):
        return self.value + self.half if self.half is not None else None

    def fmt(self):
        if self.value is None:
            return "–"
        if self.half is None:
            return "%.2f" % self.value
        return "%.2f [%.2f, %.2f]" % (self.value, self.lo, self.hi)


def pooled(estimates):
    """The mean of several variants' means, as one estimate over their
    values (the denominator of 'A against the others')."""
    return Estimate([v for e in estimates for v in e.values])


def verdict_ratio(r, seed, tolerance):
    """holds: A is better (the CI lies above 1) and the CI reaches the
    seed's factor less the tolerance; partly holds: better, by less;
    fails: the CI lies below 1 (A is worse); inconclusive: the CI holds 1,
    or there is no CI (one run).  A factor below 1 claims A is worse and
    is judged the other way round."""
    if r.value is None:
        return "no data"
    if r.half is None:
        return "inconclusive"
    if seed < 1:
        if r.hi < 1:
            return "holds" if r.lo <= seed * (1 + tolerance) \
                else "partly holds"
        return "fails" if r.lo > 1 else "inconclusive"
    if r.lo > 1:
        return "holds" if r.hi >= seed * (1 - tolerance) else "partly holds"
    return "fails" if r.hi < 1 else "inconclusive"


def verdict_better(a, b, lower=False):
    """A's metric is higher (lower=True: lower) than B's: judged on the
    ratio's CI, as verdict_ratio with no factor."""
    r = Ratio(b, a) if lower else Ratio(a, b)
    if r.value is None:
        return "no data"
    if r.half is None:
        return "inconclusive"
    if r.lo > 1:
        return "holds"
    return "fails" if r.hi < 1 else "inconclusive"
