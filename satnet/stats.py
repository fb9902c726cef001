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
    method (relative errors add in quadrature; the degrees of freedom of
    the smaller sample)."""

    def __init__(self, a, b):
        self.a, self.b = a, b
        self.value = a.mean / b.mean if a.mean is not None and b.mean \
            else None
        self.half = None
        if self.value is not None and a.n > 1 and b.n > 1 and a.mean:
            se = self.value * math.sqrt(
                (statistics.stdev(a.values) / math.sqrt(a.n) / a.mean) ** 2 +
                (statistics.stdev(b.values) / math.sqrt(b.n) / b.mean) ** 2)
            df = min(a.n, b.n) - 1
            self.half = _st.t.ppf((1 + LEVEL) / 2, df) * se

    @property
    def lo(self):
        return self.value - self.half if self.half is not None \
            else self.value

    @property
    def hi(self):
        return self.value + self.half if self.half is not None \
            else self.value

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
    """holds: our CI reaches the seed's factor (less the tolerance);
    partly: A is better by less; fails: not better.  A factor below 1
    claims A is worse, and is judged the other way round."""
    if r.value is None:
        return "no data"
    if seed < 1:
        if r.lo <= seed * (1 + tolerance):
            return "holds"
        return "partly holds" if r.hi < 1 else "fails"
    if r.hi >= seed * (1 - tolerance):
        return "holds"
    if r.lo > 1:
        return "partly holds"
    return "fails"


def verdict_better(a, b, lower=False):
    if a.mean is None or b.mean is None:
        return "no data"
    if lower:
        a, b = b, a
    if a.mean <= b.mean:
        return "fails"
    if a.lo is not None and b.hi is not None and a.lo > b.hi:
        return "holds"
    return "partly holds"
