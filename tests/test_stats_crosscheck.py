"""Each interval and test helper of ``mcbuild.runtime.study.metrics.stats`` against an independent
library on the same inputs: statsmodels (proportion intervals, two-sample Wald intervals, the
meta-analysis Q, McNemar, t and z intervals of means) and scipy (the paired t-test)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from scipy import stats as sps

from mcbuild.runtime.study.metrics import stats as st

sm_proportion = pytest.importorskip("statsmodels.stats.proportion")
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.meta_analysis import combine_effects
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

COUNTS = [(0, 10), (1, 10), (5, 10), (9, 10), (10, 10), (18, 30), (29, 30), (7, 180), (1, 1), (0, 1), (60, 60)]
LEVELS = [0.95, 0.90, 0.99]
Z = st.z_value()


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("x,n", COUNTS)
def test_wilson_wald_and_agresti_coull_intervals_match_statsmodels(x, n, level):
    alpha = 1 - level
    assert st.wilson_interval(x, n, level) == pytest.approx(
        sm_proportion.proportion_confint(x, n, alpha, method="wilson"), abs=1e-12)
    assert st.binomial_interval(x, n, level) == pytest.approx(
        sm_proportion.proportion_confint(x, n, alpha, method="normal"), abs=1e-12)
    assert st.agresti_coull_interval(x, n, level) == pytest.approx(
        sm_proportion.proportion_confint(x, n, alpha, method="agresti_coull"), abs=1e-12)
    assert st.z_value(level) == pytest.approx(sps.norm.isf(alpha / 2), abs=1e-12)


@pytest.mark.parametrize("x,n", [(5, 10), (18, 30), (7, 180), (3, 8)])
def test_the_variances_are_the_statsmodels_half_widths_over_z(x, n):
    """Where nothing is clipped, each variance is (half-width / z)^2 of statsmodels' interval."""
    lo, hi = sm_proportion.proportion_confint(x, n, method="normal")
    assert st.proportion_variance(x, n, "binomial") == pytest.approx(((hi - lo) / 2 / Z) ** 2, rel=1e-10)
    lo, hi = sm_proportion.proportion_confint(x, n, method="agresti_coull")
    assert st.proportion_variance(x, n, "agresti_coull") == pytest.approx(((hi - lo) / 2 / Z) ** 2, rel=1e-10)


def _wald_2indep(xa, na, xb, nb) -> tuple[float, float]:
    """(difference, its variance) of two proportions from statsmodels' two-sample Wald interval."""
    lo, hi = sm_proportion.confint_proportions_2indep(xa, na, xb, nb, method="wald", compare="diff")
    return (lo + hi) / 2, ((hi - lo) / 2 / Z) ** 2


STRATA = [
    [(20, 30, 10, 30)],
    [(20, 30, 10, 30), (5, 30, 2, 30)],
    [(9, 10, 3, 10), (10, 10, 4, 12), (7, 20, 7, 20), (1, 5, 0, 6)],
]


@pytest.mark.parametrize("strata", STRATA)
def test_stratified_difference_combines_statsmodels_two_sample_wald_intervals(strata):
    est = st.stratified_difference(strata)
    cells = [_wald_2indep(*s) for s in strata]
    w = 1 / len(strata)
    assert est.value == pytest.approx(sum(w * d for d, _ in cells), abs=1e-12)
    assert est.variance == pytest.approx(sum(w * w * v for _, v in cells), rel=1e-9, abs=1e-15)
    if len(strata) == 1:
        lo, hi = sm_proportion.confint_proportions_2indep(*strata[0], method="wald", compare="diff")
        assert (est.lower, est.upper) == pytest.approx((lo, hi), abs=1e-12)


@pytest.mark.parametrize("strata", STRATA)
def test_stratified_difference_with_agresti_coull_variances(strata):
    est = st.stratified_difference(strata, variance="agresti_coull")
    w = 1 / len(strata)

    def ac_var(x, n):
        lo, hi = sm_proportion.proportion_confint(x, n, method="agresti_coull")
        centre = (x + Z * Z / 2) / (n + Z * Z)
        assert (lo + hi) / 2 == pytest.approx(centre) or lo == 0 or hi == 1     # clipped only at the ends
        return centre * (1 - centre) / (n + Z * Z)

    assert est.variance == pytest.approx(sum(w * w * (ac_var(xa, na) + ac_var(xb, nb))
                                             for xa, na, xb, nb in strata), rel=1e-12)


SAMPLES = [
    [([1, 2, 3, 4.0], [2, 2, 5, 7.0])],
    [([100, 65, 100, 35, 100], [15, 35, 65, 65]), ([0, 10, 25, 25, 50, 100], [10, 10, 25, 70, 100, 100])],
]


@pytest.mark.parametrize("strata", SAMPLES)
def test_stratified_mean_difference_combines_statsmodels_z_intervals(strata):
    est = st.stratified_mean_difference(strata)
    w = 1 / len(strata)
    cells = []
    for a, b in strata:
        lo, hi = CompareMeans(DescrStatsW(np.array(a)), DescrStatsW(np.array(b))).zconfint_diff(usevar="unequal")
        cells.append(((lo + hi) / 2, ((hi - lo) / 2 / Z) ** 2))
    assert est.value == pytest.approx(sum(w * d for d, _ in cells), abs=1e-10)
    assert est.variance == pytest.approx(sum(w * w * v for _, v in cells), rel=1e-10)


@pytest.mark.parametrize("estimates,variances", [
    ([0.1, 0.3, 0.2], [0.01, 0.02, 0.015]),
    ([0.25, -0.05], [0.004, 0.006]),
    ([0.0, 0.5, 0.3, 0.9, 0.2, 0.4], [0.01, 0.03, 0.02, 0.05, 0.01, 0.02]),
])
def test_cochran_q_matches_the_statsmodels_meta_analysis(estimates, variances):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # statsmodels' random-effects estimate warns on tiny samples
        res = combine_effects(np.array(estimates), np.array(variances))
        hom = res.test_homogeneity()
    q = st.cochran_q(estimates, variances)
    assert q.q == pytest.approx(float(res.q), rel=1e-12)
    assert q.df == int(hom.df) == len(estimates) - 1
    assert q.p_value == pytest.approx(float(hom.pvalue), rel=1e-9)


@given(hs.lists(hs.floats(0, 100, allow_nan=False), min_size=2, max_size=40))
@settings(max_examples=60, deadline=None)
def test_mean_interval_matches_statsmodels(values):
    est = st.mean_interval(values)
    lo, hi = DescrStatsW(np.array(values)).zconfint_mean()
    assert est.value == pytest.approx(np.mean(values), abs=1e-9)
    if np.isfinite(lo):
        assert (est.lower, est.upper) == pytest.approx((lo, hi), abs=1e-7)


@given(hs.lists(hs.tuples(hs.sampled_from([0, 10, 25, 50, 70, 100]), hs.sampled_from([0, 10, 25, 50, 70, 100])),
                min_size=2, max_size=60))
@settings(max_examples=80, deadline=None)
def test_paired_difference_matches_scipy_and_statsmodels(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    res = st.paired_difference(a, b)
    d = np.array(a, float) - np.array(b, float)
    assert res.mean == pytest.approx(d.mean(), abs=1e-9) and res.n == len(d) and res.df == len(d) - 1
    if np.all(d == d[0]):
        assert res.p_value is None and res.lower == res.upper == res.mean
        return
    ref = sps.ttest_rel(a, b)
    assert res.t == pytest.approx(ref.statistic, rel=1e-9)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-7, abs=1e-300)
    lo, hi = DescrStatsW(d).tconfint_mean()
    assert (res.lower, res.upper) == pytest.approx((lo, hi), abs=1e-7)


@pytest.mark.parametrize("b,c", [(0, 0), (5, 9), (9, 5), (0, 7), (12, 1), (30, 31), (3, 3), (1, 0), (40, 12)])
def test_mcnemar_exact_matches_statsmodels(b, c):
    ours = st.mcnemar(b, c)
    theirs = sm_mcnemar(np.array([[11, b], [c, 7]]), exact=True)
    assert (ours.b, ours.c) == (b, c)
    assert ours.p_value == pytest.approx(float(theirs.pvalue), rel=1e-12, abs=1e-300)


def test_mcnemar_and_paired_difference_refuse_what_they_cannot_test():
    with pytest.raises(ValueError):
        st.mcnemar(-1, 2)
    with pytest.raises(ValueError):
        st.paired_difference([1.0], [2.0])
    with pytest.raises(ValueError):
        st.paired_difference([1.0, 2.0], [2.0])
    assert math.isclose(st.mean_interval([7.0]).half_width, 0.0)
