"""Statistics for the paired MirrorCraft study (pure functions, no I/O).

All proportions here are on the 0..1 scale; :mod:`mcbuild.runtime.study.metrics`
rescales to percent / percentage points.  The formulas follow the paper
(Section 4.1, Appendix C "Within-suite comparison" and "Uncertainty of the
main estimates"):

* 95% intervals are normal (Wald) intervals built from **binomial variances
  stratified by model and task**, treating episodes as independent::

      est  = sum_s w_s (p_a,s - p_b,s)                   (w_s = 1/S by default)
      var  = sum_s w_s^2 (p_a,s(1-p_a,s)/n_a,s + p_b,s(1-p_b,s)/n_b,s)
      half = z_{1-(1-level)/2} * sqrt(var)

* The "continuity-corrected" alternative replaces each binomial variance with
  the Agresti-Coull variance ``p~(1-p~)/n~`` where ``n~ = n + z^2`` and
  ``p~ = (x + z^2/2) / n~``.

* Cochran's Q with inverse-variance weights ``w_i = 1/v_i``::

      theta_bar = sum w_i theta_i / sum w_i
      Q         = sum w_i (theta_i - theta_bar)^2,   df = k - 1,
      p         = P(chi2_df >= Q)

* Paired comparisons of two runs on the same episodes (``mcbuild study compare``): the paired
  t-test of the per-episode differences, and McNemar's exact test of paired success (the
  discordant pairs ``b`` = A only, ``c`` = B only; ``p = min(1, 2 P(Bin(b+c, 1/2) <= min(b, c)))``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, NamedTuple, Sequence

from scipy import stats as _sps

__all__ = [
    "Estimate",
    "CochranQ",
    "z_value",
    "binomial_variance",
    "agresti_coull_variance",
    "proportion_variance",
    "binomial_interval",
    "agresti_coull_interval",
    "wilson_interval",
    "stratified_difference",
    "stratified_mean_difference",
    "cochran_q",
    "mean_interval",
    "PairedDifference",
    "paired_difference",
    "McNemar",
    "mcnemar",
    "VARIANCE_METHODS",
]

#: Accepted names for the per-proportion variance used in stratified estimates.
VARIANCE_METHODS = ("binomial", "agresti_coull")


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a symmetric normal interval.

    ``value +- half_width`` is the ``level`` interval; ``half_width = z * se``.
    """

    value: float
    half_width: float
    se: float
    level: float = 0.95

    @property
    def variance(self) -> float:
        return self.se * self.se

    @property
    def lower(self) -> float:
        return self.value - self.half_width

    @property
    def upper(self) -> float:
        return self.value + self.half_width

    def scaled(self, factor: float) -> "Estimate":
        """The same estimate in other units (e.g. ``factor=100`` for points)."""
        f = abs(factor)
        return Estimate(self.value * factor, self.half_width * f, self.se * f, self.level)


class CochranQ(NamedTuple):
    """Result of :func:`cochran_q`; unpacks as ``(q, df, p_value)``."""

    q: float
    df: int
    p_value: float


def z_value(level: float = 0.95) -> float:
    """Two-sided normal quantile ``z_{1-(1-level)/2}`` (1.959964 for 95%)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    return float(_sps.norm.ppf(1.0 - (1.0 - level) / 2.0))


def _check_counts(successes: float, n: float) -> None:
    if n <= 0:
        raise ValueError(f"n must be positive, got {n!r}")
    if successes < 0 or successes > n:
        raise ValueError(f"successes must be in [0, n], got {successes!r} of {n!r}")


def binomial_variance(p: float, n: float) -> float:
    """Plain binomial variance of a sample proportion: ``p(1-p)/n``."""
    if n <= 0:
        raise ValueError(f"n must be positive, got {n!r}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    return p * (1.0 - p) / n


def _agresti_coull_center(successes: float, n: float, level: float) -> tuple[float, float]:
    z2 = z_value(level) ** 2
    n_tilde = n + z2
    p_tilde = (successes + z2 / 2.0) / n_tilde
    return p_tilde, n_tilde


def agresti_coull_variance(successes: float, n: float, level: float = 0.95) -> float:
    """Agresti-Coull ("continuity-corrected") variance ``p~(1-p~)/n~``.

    ``n~ = n + z^2`` and ``p~ = (x + z^2/2)/n~`` -- roughly "add two successes
    and two failures" at 95%.  Unlike the binomial variance it is positive even
    when ``x = 0`` or ``x = n``.
    """
    _check_counts(successes, n)
    p_tilde, n_tilde = _agresti_coull_center(successes, n, level)
    return p_tilde * (1.0 - p_tilde) / n_tilde


def proportion_variance(successes: float, n: float, method: str = "binomial", level: float = 0.95) -> float:
    """Variance of ``successes/n`` by ``method`` (``"binomial"`` or ``"agresti_coull"``)."""
    _check_counts(successes, n)
    if method == "binomial":
        return binomial_variance(successes / n, n)
    if method == "agresti_coull":
        return agresti_coull_variance(successes, n, level)
    raise ValueError(f"unknown variance method {method!r}; expected one of {VARIANCE_METHODS}")


def _clip01(lo: float, hi: float) -> tuple[float, float]:
    return max(0.0, lo), min(1.0, hi)


def binomial_interval(successes: float, n: float, level: float = 0.95, *, clip: bool = True) -> tuple[float, float]:
    """Normal (Wald) interval ``p +- z sqrt(p(1-p)/n)`` for ``p = x/n``.

    With ``clip`` (default) the bounds are clipped to ``[0, 1]``.
    """
    _check_counts(successes, n)
    p = successes / n
    half = z_value(level) * math.sqrt(binomial_variance(p, n))
    lo, hi = p - half, p + half
    return _clip01(lo, hi) if clip else (lo, hi)


def agresti_coull_interval(successes: float, n: float, level: float = 0.95, *, clip: bool = True) -> tuple[float, float]:
    """Agresti-Coull interval ``p~ +- z sqrt(p~(1-p~)/n~)``.

    Its centre ``p~`` equals the centre of the Wilson score interval, and it
    always contains the Wilson interval.  Bounds are clipped to ``[0, 1]``
    unless ``clip=False``.
    """
    _check_counts(successes, n)
    p_tilde, n_tilde = _agresti_coull_center(successes, n, level)
    half = z_value(level) * math.sqrt(p_tilde * (1.0 - p_tilde) / n_tilde)
    lo, hi = p_tilde - half, p_tilde + half
    return _clip01(lo, hi) if clip else (lo, hi)


def wilson_interval(successes: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``x/n``; informative at 0 and n, always inside ``[0, 1]``::

        centre = (x + z^2/2) / (n + z^2)
        half   = z / (n + z^2) * sqrt(x (n - x) / n + z^2 / 4)
    """
    _check_counts(successes, n)
    z = z_value(level)
    z2 = z * z
    centre = (successes + z2 / 2.0) / (n + z2)
    half = z / (n + z2) * math.sqrt(successes * (n - successes) / n + z2 / 4.0)
    return _clip01(centre - half, centre + half)


def _weights(k: int, weights: Sequence[float] | None) -> list[float]:
    if k == 0:
        raise ValueError("at least one stratum is required")
    if weights is None:
        return [1.0 / k] * k
    if len(weights) != k:
        raise ValueError(f"{len(weights)} weights for {k} strata")
    total = float(sum(weights))
    if total <= 0 or any(w < 0 for w in weights):
        raise ValueError("weights must be non-negative with a positive sum")
    return [w / total for w in weights]


def _estimate(value: float, variance: float, level: float) -> Estimate:
    se = math.sqrt(max(variance, 0.0))
    return Estimate(value=value, half_width=z_value(level) * se, se=se, level=level)


def stratified_difference(
    strata: Iterable[tuple[float, float, float, float]],
    level: float = 0.95,
    *,
    variance: str = "binomial",
    weights: Sequence[float] | None = None,
) -> Estimate:
    """Stratified difference of proportions ``A - B`` with a normal interval.

    ``strata`` is a sequence of ``(successes_a, n_a, successes_b, n_b)``, e.g.
    one per (model, task) cell with A = Vanilla and B = Mirror for
    ``RIE_SR``.  Strata are weighted equally unless ``weights`` is given
    (normalised to sum 1), as the paper pools equal-size cells::

        value = sum_s w_s (x_a/n_a - x_b/n_b)
        var   = sum_s w_s^2 (V(x_a, n_a) + V(x_b, n_b))

    where ``V`` is the binomial variance ``p(1-p)/n`` or, with
    ``variance="agresti_coull"``, the Agresti-Coull variance.  The point value
    is always the raw difference of sample proportions (0..1 scale).
    """
    rows = [tuple(s) for s in strata]
    w = _weights(len(rows), weights)
    value = 0.0
    var = 0.0
    for wi, (xa, na, xb, nb) in zip(w, rows):
        _check_counts(xa, na)
        _check_counts(xb, nb)
        value += wi * (xa / na - xb / nb)
        var += wi * wi * (
            proportion_variance(xa, na, variance, level) + proportion_variance(xb, nb, variance, level)
        )
    return _estimate(value, var, level)


def _sample_mean_var(xs: Sequence[float]) -> tuple[float, float, int]:
    n = len(xs)
    if n < 2:
        raise ValueError("each side of a stratum needs at least 2 observations for a sample variance")
    mean = math.fsum(xs) / n
    s2 = math.fsum((x - mean) ** 2 for x in xs) / (n - 1)
    return mean, s2, n


def stratified_mean_difference(
    strata: Iterable[tuple[Sequence[float], Sequence[float]]],
    level: float = 0.95,
    *,
    weights: Sequence[float] | None = None,
) -> Estimate:
    """Stratified difference of means ``A - B`` (e.g. ``RIE_SC`` on Scores).

    ``strata`` is a sequence of ``(values_a, values_b)``.  Each side's mean
    has variance ``s^2/n`` with the sample variance ``s^2`` (ddof = 1)::

        value = sum_s w_s (mean_a - mean_b)
        var   = sum_s w_s^2 (s_a^2/n_a + s_b^2/n_b)
    """
    rows = [(list(a), list(b)) for a, b in strata]
    w = _weights(len(rows), weights)
    value = 0.0
    var = 0.0
    for wi, (a, b) in zip(w, rows):
        ma, va, na = _sample_mean_var(a)
        mb, vb, nb = _sample_mean_var(b)
        value += wi * (ma - mb)
        var += wi * wi * (va / na + vb / nb)
    return _estimate(value, var, level)


def cochran_q(estimates: Sequence[float], variances: Sequence[float]) -> CochranQ:
    """Cochran's Q heterogeneity test with inverse-variance weights.

    ``w_i = 1/v_i``; ``theta_bar = sum w_i theta_i / sum w_i``;
    ``Q = sum w_i (theta_i - theta_bar)^2`` on ``k - 1`` degrees of freedom;
    the p-value is the chi-square upper tail ``chi2.sf(Q, k - 1)``.

    Raises ``ValueError`` for fewer than two estimates or a non-positive
    variance (use Agresti-Coull variances when a cell is all-or-nothing).
    """
    if len(estimates) != len(variances):
        raise ValueError("estimates and variances must have equal length")
    k = len(estimates)
    if k < 2:
        raise ValueError("Cochran's Q needs at least two estimates")
    if any(not (v > 0) or math.isinf(v) for v in variances):
        raise ValueError(f"all variances must be positive and finite, got {list(variances)!r}")
    w = [1.0 / v for v in variances]
    sw = math.fsum(w)
    theta_bar = math.fsum(wi * t for wi, t in zip(w, estimates)) / sw
    q = math.fsum(wi * (t - theta_bar) ** 2 for wi, t in zip(w, estimates))
    df = k - 1
    p = float(_sps.chi2.sf(q, df))
    return CochranQ(q=float(q), df=df, p_value=p)



def mean_interval(values: Sequence[float], level: float = 0.95) -> Estimate:
    """The mean of ``values`` with its normal interval ``mean +- z s/sqrt(n)`` (sample ``s``, ddof 1;
    a single value has half-width 0)."""
    xs = [float(x) for x in values]
    if not xs:
        raise ValueError("the mean of no values")
    if len(xs) == 1:
        return _estimate(xs[0], 0.0, level)
    m, s2, n = _sample_mean_var(xs)
    return _estimate(m, s2 / n, level)


class PairedDifference(NamedTuple):
    """Mean of the paired differences ``a_i - b_i`` with its t interval and the paired t-test;
    ``t`` and ``p_value`` are None when every difference is the same (no variance)."""

    n: int
    mean: float
    lower: float
    upper: float
    t: float | None
    df: int
    p_value: float | None


def paired_difference(a: Sequence[float], b: Sequence[float], level: float = 0.95) -> PairedDifference:
    """The paired t-test of ``a`` against ``b`` (same length, at least 2 pairs)::

        d_i = a_i - b_i,  mean = sum d_i / n,  se = s_d / sqrt(n),  t = mean / se  (df = n - 1)
        interval = mean +- t_{1-(1-level)/2, n-1} se,   p = 2 P(T_{n-1} >= |t|)
    """
    if len(a) != len(b):
        raise ValueError(f"{len(a)} values paired with {len(b)}")
    d = [float(x) - float(y) for x, y in zip(a, b)]
    if len(d) < 2:
        raise ValueError("a paired test needs at least 2 pairs")
    m, s2, n = _sample_mean_var(d)
    df = n - 1
    if s2 == 0.0:
        return PairedDifference(n, m, m, m, None, df, None)
    se = math.sqrt(s2 / n)
    half = float(_sps.t.ppf(1.0 - (1.0 - level) / 2.0, df)) * se
    t = m / se
    return PairedDifference(n, m, m - half, m + half, t, df, float(2.0 * _sps.t.sf(abs(t), df)))


class McNemar(NamedTuple):
    """McNemar's exact test of paired success: ``b`` pairs where only A succeeded, ``c`` where only B did."""

    b: int
    c: int
    p_value: float


def mcnemar(b: int, c: int) -> McNemar:
    """McNemar's exact (binomial) test on the discordant pairs: under no difference each of the
    ``b + c`` discordant pairs is A-only with probability 1/2; ``p = 1`` when there are none."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got {b}, {c}")
    n = b + c
    p = 1.0 if n == 0 else min(1.0, 2.0 * float(_sps.binom.cdf(min(b, c), n, 0.5)))
    return McNemar(int(b), int(c), p)
