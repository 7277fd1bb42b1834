"""Tests for mcbuild.runtime.study.metrics.stats against hand computations and scipy."""

from __future__ import annotations

import math
import statistics

import pytest
from scipy import stats as sps

from mcbuild.runtime.study.metrics import stats as st

Z95 = sps.norm.ppf(0.975)


def test_z_value():
    assert st.z_value() == pytest.approx(1.959963984540054, abs=1e-12)
    assert st.z_value(0.90) == pytest.approx(sps.norm.ppf(0.95))
    with pytest.raises(ValueError):
        st.z_value(1.0)


def test_binomial_variance_and_wald_interval():
    assert st.binomial_variance(0.6, 30) == pytest.approx(0.24 / 30)
    assert st.binomial_variance(0.0, 30) == 0.0
    lo, hi = st.binomial_interval(18, 30)
    half = Z95 * math.sqrt(0.6 * 0.4 / 30)  # 1.959964 * 0.0894427
    assert half == pytest.approx(0.1753045, abs=1e-6)
    assert (lo, hi) == pytest.approx((0.6 - half, 0.6 + half))
    # 90% interval
    lo90, hi90 = st.binomial_interval(18, 30, level=0.90)
    assert hi90 - 0.6 == pytest.approx(sps.norm.ppf(0.95) * math.sqrt(0.008))


def test_wald_interval_clipping_and_degenerate():
    assert st.binomial_interval(0, 10) == (0.0, 0.0)
    lo, hi = st.binomial_interval(1, 10)
    assert lo == 0.0
    lo_raw, _ = st.binomial_interval(1, 10, clip=False)
    assert lo_raw == pytest.approx(0.1 - Z95 * math.sqrt(0.09 / 10))
    assert lo_raw < 0
    with pytest.raises(ValueError):
        st.binomial_interval(11, 10)
    with pytest.raises(ValueError):
        st.binomial_interval(0, 0)


def test_agresti_coull_hand_computation():
    x, n = 18, 30
    n_t = n + Z95**2
    p_t = (x + Z95**2 / 2) / n_t
    assert st.agresti_coull_variance(x, n) == pytest.approx(p_t * (1 - p_t) / n_t)
    lo, hi = st.agresti_coull_interval(x, n)
    half = Z95 * math.sqrt(p_t * (1 - p_t) / n_t)
    assert (lo, hi) == pytest.approx((p_t - half, p_t + half))
    # positive even for all-or-nothing cells, unlike the binomial variance
    assert st.agresti_coull_variance(0, 30) > 0
    assert st.agresti_coull_variance(30, 30) == pytest.approx(st.agresti_coull_variance(0, 30))


@pytest.mark.parametrize("x,n", [(0, 10), (1, 10), (5, 10), (18, 30), (29, 30), (30, 30), (7, 180)])
def test_agresti_coull_vs_scipy_wilson(x, n):
    """AC is centred on the Wilson midpoint and contains the Wilson interval."""
    wil = sps.binomtest(x, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = st.agresti_coull_interval(x, n, clip=False)
    assert (lo + hi) / 2 == pytest.approx((wil.low + wil.high) / 2, abs=1e-12)
    assert lo <= wil.low + 1e-12 and hi >= wil.high - 1e-12
    clo, chi = st.agresti_coull_interval(x, n)
    assert 0.0 <= clo <= chi <= 1.0


def test_proportion_variance_dispatch():
    assert st.proportion_variance(3, 10) == pytest.approx(0.021)
    assert st.proportion_variance(3, 10, "agresti_coull") == pytest.approx(st.agresti_coull_variance(3, 10))
    with pytest.raises(ValueError):
        st.proportion_variance(3, 10, "wilson")


def test_stratified_difference_equal_weights():
    strata = [(20, 30, 10, 30), (5, 30, 2, 30)]
    est = st.stratified_difference(strata)
    value = ((20 / 30 - 10 / 30) + (5 / 30 - 2 / 30)) / 2
    v = lambda p, n: p * (1 - p) / n
    var = (v(20 / 30, 30) + v(10 / 30, 30) + v(5 / 30, 30) + v(2 / 30, 30)) / 4
    assert est.value == pytest.approx(value)
    assert est.value == pytest.approx(0.2166667, abs=1e-6)
    assert est.se == pytest.approx(math.sqrt(var))
    assert est.half_width == pytest.approx(Z95 * math.sqrt(var))
    assert est.lower == pytest.approx(value - Z95 * math.sqrt(var))
    pts = est.scaled(100)
    assert pts.value == pytest.approx(100 * value) and pts.half_width == pytest.approx(100 * est.half_width)
    assert est.variance == pytest.approx(var)


def test_stratified_difference_weights_and_ac():
    strata = [(20, 30, 10, 30), (5, 30, 2, 30)]
    est = st.stratified_difference(strata, weights=[3, 1])
    assert est.value == pytest.approx(0.75 * (10 / 30) + 0.25 * (3 / 30))
    ac = st.stratified_difference(strata, variance="agresti_coull")
    assert ac.value == pytest.approx(st.stratified_difference(strata).value)
    var_ac = sum(st.agresti_coull_variance(x, n) for x, n in [(20, 30), (10, 30), (5, 30), (2, 30)]) / 4
    assert ac.variance == pytest.approx(var_ac)
    with pytest.raises(ValueError):
        st.stratified_difference([])


def test_stratified_mean_difference_sample_variance():
    a1, b1 = [100, 65, 35, 100], [65, 35, 35]
    a2, b2 = [10, 25, 45], [10, 10, 25, 0]
    est = st.stratified_mean_difference([(a1, b1), (a2, b2)])
    value = ((statistics.mean(a1) - statistics.mean(b1)) + (statistics.mean(a2) - statistics.mean(b2))) / 2
    var = sum(statistics.variance(x) / len(x) for x in (a1, b1, a2, b2)) / 4
    assert est.value == pytest.approx(value)
    assert est.variance == pytest.approx(var)
    with pytest.raises(ValueError):
        st.stratified_mean_difference([([1.0], [2.0, 3.0])])


def test_cochran_q_hand_computation():
    theta = [0.1, 0.3, 0.2]
    var = [0.01, 0.02, 0.04]
    w = [100.0, 50.0, 25.0]
    bar = (100 * 0.1 + 50 * 0.3 + 25 * 0.2) / 175
    q_hand = sum(wi * (t - bar) ** 2 for wi, t in zip(w, theta))
    q, df, p = st.cochran_q(theta, var)
    assert q == pytest.approx(q_hand) and q == pytest.approx(1.357143, abs=1e-6)
    assert df == 2
    assert p == pytest.approx(sps.chi2.sf(q_hand, 2))
    assert p == pytest.approx(math.exp(-q_hand / 2))  # closed form for df = 2
    res = st.cochran_q(theta, var)
    assert res.q == q and res.p_value == p


def test_cochran_q_reproduces_paper_p_values():
    # Q = 11.4 with 2 df -> p = 0.003; Q = 2.1 with 5 df -> p = 0.84;
    # Q = 41.7 with 4 df -> p < 0.001 (Appendix C).
    a = math.sqrt(11.4 / 2)
    q, df, p = st.cochran_q([-a, 0.0, a], [1.0, 1.0, 1.0])
    assert q == pytest.approx(11.4) and df == 2 and round(p, 3) == 0.003
    # six estimates, unit variances, sum of squares about the mean = 2.1
    base = [-1.0, -0.6, -0.2, 0.2, 0.6, 1.0]
    scale = math.sqrt(2.1 / sum(x * x for x in base))
    q, df, p = st.cochran_q([x * scale for x in base], [1.0] * 6)
    assert q == pytest.approx(2.1) and df == 5 and round(p, 2) == 0.84
    b = math.sqrt(41.7 / 2)
    q, df, p = st.cochran_q([-b, 0, 0, 0, b], [1.0] * 5)
    assert df == 4 and p < 0.001


def test_cochran_q_errors():
    with pytest.raises(ValueError):
        st.cochran_q([0.1], [0.01])
    with pytest.raises(ValueError):
        st.cochran_q([0.1, 0.2], [0.01, 0.0])
    with pytest.raises(ValueError):
        st.cochran_q([0.1, 0.2], [0.01])


def test_cochran_q_of_stratified_rie_sr_binomial_and_agresti_coull():
    per = {
        "react": [(28, 30, 4, 30), (27, 30, 10, 30)],
        "reflexion": [(27, 30, 23, 30), (25, 30, 21, 30)],
        "voyager": [(26, 30, 22, 30), (24, 30, 20, 30)],
    }

    def q(groups, method="binomial"):
        ests = [st.stratified_difference(s, variance=method) for s in groups.values()]
        return st.cochran_q([e.value for e in ests], [e.variance for e in ests])

    res, res_ac = q(per), q(per, "agresti_coull")
    assert st.stratified_difference(per["react"]).value == pytest.approx(((28 - 4) / 30 + (27 - 10) / 30) / 2)
    assert res.df == res_ac.df == 2 and res_ac.q != res.q
    # an all-or-nothing configuration: binomial variance 0, AC still defined
    degenerate = {"a": [(30, 30, 30, 30)], "b": [(20, 30, 10, 30)]}
    with pytest.raises(ValueError):
        q(degenerate)
    assert q(degenerate, "agresti_coull").q > 0
