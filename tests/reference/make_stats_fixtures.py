#!/usr/bin/python3
"""Write tests/reference/stats_fixtures.h: expected values for
tests/test_stats.c computed with SciPy, an implementation independent of
analysis/stats/stats.c.

    /usr/bin/python3 tests/reference/make_stats_fixtures.py

Needs python3-scipy and clang-format (Debian). Deterministic (fixed numpy seeds): a rerun
writes the same file. The C test never runs this script; rerun it only
when a definition in analysis/stats/stats.h changes, and commit the header.

What each table holds (definitions: analysis/stats/stats.h, docs/statistics.md):
- welch:    scipy.stats.ttest_ind(a, b, equal_var=False): t, p; df from the
            Welch-Satterthwaite formula (SciPy 1.10 does not return it).
- mw:       exact two-sided Mann-Whitney p. Without ties,
            scipy.stats.mannwhitneyu(method="exact"); with ties,
            scipy.stats.permutation_test over every split of the pooled
            sample (the rank sum with midranks), which is what stats.h
            defines. Tie-free cases are checked against both.
- spearman: rho from scipy.stats.spearmanr; p for n <= 8 from
            scipy.stats.permutation_test over all n! pairings, for n = 9
            from a NumPy enumeration of all 9! orders (checked against
            permutation_test on every n <= 8 case), above 9 from spearmanr
            (t approximation).
- boot:     the exact bootstrap distribution of mean(a*) - mean(b*)
            (every resample enumerated as a multiset with its multinomial
            weight) and its quantiles at 0.025 -+ d and 0.975 -+ d, with d
            4.5 binomial standard errors for 10000 resamples: a correct
            percentile interval from 10000 resamples lies inside these
            brackets except with probability ~1e-5.
- family:   Holm and Benjamini-Hochberg by hand in NumPy from their
            textbook definitions (statsmodels is not in Debian's SciPy
            stack): Holm = running max of min(1, (n-j+1) p_(j)), BH =
            running min from the top of min(1, n p_(j) / j).
- cp:       Clopper-Pearson from scipy.stats.beta.ppf, checked against
            scipy.stats.binomtest(...).proportion_ci(method="exact").
- fisher:   scipy.stats.fisher_exact, checked against an enumeration of
            the hypergeometric tables in exact fractions (math.comb) with
            SciPy's 1e-14 relative tolerance.
- tost:     two scipy.stats.ttest_ind(equal_var=False) one-sided tests on
            shifted samples: p_lower from (a + margin, b, "greater"),
            p_upper from (a - margin, b, "less").
- paired:   scipy.stats.ttest_rel; df = n - 1.
- wilcoxon: tie- and zero-free cases from scipy.stats.wilcoxon(method=
            "exact"); cases with ties or zeros from scipy.stats.
            permutation_test(permutation_type="samples") over all 2^n sign
            flips of W+ (zeros dropped). Every case is also checked against
            an exact count over tie blocks in Python integers.
- mw 20+20, 60+60: with ties the exact p counts the splits tie block by
            tie block in Python integers (C(40, 20) splits are too many for
            permutation_test); that count is checked against
            permutation_test on every smaller tied case.
- within:   r from NumPy (ranks over all observations, minus their group's
            mean, Pearson of the residuals); exact p by brute force
            (itertools: every within-group permutation of y, re-ranked);
            for the Monte Carlo case the exact p of the same test from a
            convolution of the groups' distributions in exact fractions
            (checked against the brute force on the small cases); the C
            test checks its Monte Carlo p against that within 4.5 binomial
            standard errors.
"""
import fractions
import itertools
import math
import os
import subprocess
import warnings

import numpy as np
import scipy
from scipy import stats

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "stats_fixtures.h")
MAXN = 60
BOOT_B = 10000


def rng(seed):
    return np.random.default_rng(seed)


def welch_cases():
    r = rng(1)
    return [
        ("n=5 vs n=6", [1, 2, 3, 4, 5], [2, 4, 6, 8, 10, 12]),
        ("n=2 vs n=2", [0.1, 0.3], [0.2, 0.9]),
        ("ties in each sample", [1, 1, 2], [1, 2, 2, 2]),
        ("a has zero variance", [3, 3, 3], [1, 2, 4, 7]),
        ("clear difference (F-Attn like)", [0.206, 0.21, 0.20, 0.19, 0.22],
         [0.08, 0.081, 0.079, 0.082, 0.078]),
        ("normal 5 vs 5", r.normal(0, 1, 5), r.normal(0.8, 1, 5)),
        ("normal 3 vs 7, unequal spread", r.normal(1, 0.1, 3), r.normal(0, 2, 7)),
        ("equal means", [1, 2, 3], [0, 2, 4]),
    ]


def welch_row(name, a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    with warnings.catch_warnings():  # SciPy warns when one sample is constant
        warnings.simplefilter("ignore", RuntimeWarning)
        res = stats.ttest_ind(a, b, equal_var=False)
    qa, qb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    df = (qa + qb) ** 2 / (qa ** 2 / (len(a) - 1) + qb ** 2 / (len(b) - 1))
    return [name, a, b, res.statistic, df, res.pvalue]


def ranksum_p(a, b):
    """Exact permutation p of the midrank sum of a (every split)."""
    def stat(x, y, axis):
        ranks = stats.rankdata(np.concatenate([x, y], axis=axis), axis=axis)
        return np.take(ranks, range(x.shape[axis]), axis=axis).sum(axis=axis)
    res = stats.permutation_test((a, b), stat, permutation_type="independent",
                                 vectorized=True, n_resamples=np.inf, batch=20000,
                                 alternative="two-sided")
    return res.pvalue


def doubled_blocks(v):
    """Doubled midranks of v and the tie blocks: (doubled midrank, size)."""
    r2 = np.rint(2 * stats.rankdata(v)).astype(np.int64)
    vals, inv, cnt = np.unique(v, return_inverse=True, return_counts=True)
    blocks = [(int(r2[np.flatnonzero(inv == j)[0]]), int(cnt[j])) for j in range(len(vals))]
    return r2, blocks


def two_sided_exact(dist, obs):
    """min(1, 2 min(P(S <= obs), P(S >= obs))) from {value: count}."""
    total = sum(dist.values())
    le = sum(c for v, c in dist.items() if v <= obs)
    ge = sum(c for v, c in dist.items() if v >= obs)
    return float(min(fractions.Fraction(1), fractions.Fraction(2 * min(le, ge), total)))


def ranksum_block_p(a, b):
    """Exact p of the midrank sum of a, counting splits tie block by tie
    block: c of a block's t values in a in comb(t, c) ways."""
    pooled = np.concatenate([a, b])
    r2, blocks = doubled_blocks(pooled)
    dist = {(0, 0): 1}  # (values chosen, doubled sum) -> ways
    for rank2, t in blocks:
        nxt = {}
        for (k, s), w in dist.items():
            for c in range(0, min(t, len(a) - k) + 1):
                key = (k + c, s + c * rank2)
                nxt[key] = nxt.get(key, 0) + w * math.comb(t, c)
        dist = nxt
    full = {s: w for (k, s), w in dist.items() if k == len(a)}
    return two_sided_exact(full, int(r2[: len(a)].sum()))


def mw_cases():
    r = rng(2)
    return [
        ("no ties 3 vs 4", [1.2, 3.4, 0.5], [2.2, 5.1, 4.4, 6.0]),
        ("n=1 vs n=1", [1.0], [2.0]),
        ("n=2 vs n=2 interleaved", [1.0, 4.0], [2.0, 3.0]),
        ("complete separation 5 vs 5", [6, 7, 8, 9, 10], [1, 2, 3, 4, 5]),
        ("ties 4 vs 5", [1, 2, 2, 3], [2, 3, 3, 4, 5]),
        ("all values equal", [1, 1], [1, 1, 1]),
        ("ties across groups only", [5, 5, 5], [1, 2, 5]),
        ("no ties 10 vs 12", r.normal(0, 1, 10), r.normal(0.7, 1, 12)),
        ("ties 8 vs 9 (rounded)", np.round(r.normal(0, 1, 8)), np.round(r.normal(0.5, 1, 9))),
        ("identical samples", [0.3, 0.1, 0.2], [0.1, 0.2, 0.3]),
        ("no ties 20 vs 20", r.normal(0, 1, 20), r.normal(0.6, 1, 20)),
        ("ties 20 vs 20 (2 decimals)", np.round(r.normal(0.2, 0.05, 20), 2),
         np.round(r.normal(0.17, 0.05, 20), 2)),
        ("heavy ties 20 vs 20 (4 values)", r.integers(0, 4, 20), r.integers(1, 5, 20)),
        ("no ties 60 vs 60", r.normal(0, 1, 60), r.normal(0.4, 1, 60)),
        ("ties 60 vs 60 (2 decimals)", np.round(r.normal(1.80, 0.03, 60), 2),
         np.round(r.normal(1.79, 0.03, 60), 2)),
    ]


def mw_row(name, a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    pooled = np.concatenate([a, b])
    u = stats.rankdata(pooled)[: len(a)].sum() - len(a) * (len(a) + 1) / 2
    ties = len(np.unique(pooled)) < len(pooled)
    # permutation_test wants >= 2 values per sample; n = 1 cases have no ties
    # (and the no-tie 10 vs 12 case would take a minute: SciPy's exact test)
    small = min(len(a), len(b)) >= 2 and math.comb(len(pooled), len(a)) <= 50000
    p = ranksum_p(a, b) if small else None
    block = ranksum_block_p(a, b)
    if p is not None:
        assert abs(block - p) <= 1e-12 * max(1, p), (name, block, p)
    elif ties:
        p = block
    if not ties:
        ref = stats.mannwhitneyu(a, b, method="exact", alternative="two-sided")
        assert abs(ref.statistic - u) < 1e-12, name
        if p is None:
            p = ref.pvalue
        assert abs(block - p) <= 1e-12 * max(1, p), (name, block, p)
        assert abs(ref.pvalue - p) <= 1e-12 * max(1, p), (name, ref.pvalue, p)
    return [name, a, b, u, p]


def spearman_exact_p(x, y):
    rx, ry = stats.rankdata(x), stats.rankdata(y)

    def pearson(v, axis):  # one sample: its n! orders against fixed rx
        u = rx - rx.mean()
        v = v - v.mean(axis=axis, keepdims=True)
        return (u * v).sum(axis=axis) / np.sqrt((u * u).sum() * (v * v).sum(axis=axis))
    res = stats.permutation_test((ry,), pearson, permutation_type="pairings",
                                 vectorized=True, n_resamples=np.inf, batch=20000,
                                 alternative="two-sided")
    return res.pvalue


def spearman_enum_p(x, y):
    """The same exact p by enumerating all n! orders of y's ranks with
    itertools and NumPy: used at n = 9, where permutation_test is too slow;
    checked against permutation_test for every n <= 8 case."""
    rx, ry = stats.rankdata(x), stats.rankdata(y)
    perms = np.array(list(itertools.permutations(range(len(x)))), dtype=np.int64)
    s = (rx[None, :] * ry[perms]).sum(axis=1)
    obs = float(np.dot(rx, ry))
    tol = 1e-9 * abs(obs)
    le, ge = np.mean(s <= obs + tol), np.mean(s >= obs - tol)
    return min(1.0, 2 * min(le, ge))


def spearman_cases():
    r = rng(3)
    x9 = r.normal(0, 1, 9)
    x20 = np.round(r.normal(0, 2, 20))
    return [
        ("n=2", [1, 2], [3, 1]),
        ("n=3 perfect", [1, 2, 3], [10, 20, 30]),
        ("n=5 no ties", [0.3, 0.1, 0.9, 0.4, 0.5], [1.0, 0.2, 0.8, 0.9, 0.1]),
        ("n=6 ties in x and y", [1, 2, 2, 3, 4, 4], [2, 1, 3, 3, 5, 4]),
        ("n=8 no ties", [2.0, 7.0, 1.0, 8.0, 4.0, 6.0, 3.0, 5.0],
         [1.5, 6.0, 3.0, 5.5, 2.0, 8.0, 4.0, 7.0]),
        ("n=9 exact boundary", x9, x9 + r.normal(0, 1, 9)),
        ("n=10 t approximation", r.normal(0, 1, 10), r.normal(0, 1, 10)),
        ("n=20 with ties", x20, np.round(x20 - r.normal(0, 2, 20))),
        ("n=12 perfect negative", np.arange(12.0), -np.arange(12.0) ** 3),
    ]


def spearman_row(name, x, y):
    x, y = np.asarray(x, float), np.asarray(y, float)
    res = stats.spearmanr(x, y)
    rho = float(res.correlation)
    if len(x) <= 8:
        p, exact = spearman_exact_p(x, y), 1
        q = spearman_enum_p(x, y)
        assert abs(p - q) <= 1e-12, (name, p, q)
    elif len(x) == 9:
        p, exact = spearman_enum_p(x, y), 1
    else:
        p, exact = float(res.pvalue), 0
    return [name, x, y, rho, p, exact]


def boot_dist(x):
    """Values and probabilities of mean(x*) over all n^n resamples."""
    n = len(x)
    vals, wts = [], []
    for combo in itertools.combinations_with_replacement(range(n), n):
        counts = np.bincount(combo, minlength=n)
        w = math.factorial(n)
        for c in counts:
            w //= math.factorial(int(c))
        vals.append(float(np.dot(counts, x)) / n)
        wts.append(w / n ** n)
    return np.array(vals), np.array(wts)


def quantile(vals, wts, q):
    """Smallest v with P(D <= v) >= q."""
    order = np.argsort(vals, kind="stable")
    cdf = np.cumsum(wts[order])
    return float(vals[order][np.searchsorted(cdf, q - 1e-15)])


def boot_cases():
    r = rng(4)
    return [
        ("normal 5 vs 5", r.normal(0.2, 0.08, 5), r.normal(0.08, 0.02, 5)),
        ("3 vs 4", [1.0, 2.5, 4.0], [0.5, 0.7, 3.0, 1.1]),
        ("n=2 vs n=2 (atoms)", [0.0, 1.0], [0.0, 3.0]),
        ("6 vs 6 skewed", r.exponential(1.0, 6), r.exponential(2.0, 6)),
    ]


def boot_row(name, a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    va, wa = boot_dist(a)
    vb, wb = boot_dist(b)
    d = (va[:, None] - vb[None, :]).ravel()
    w = (wa[:, None] * wb[None, :]).ravel()
    assert abs(w.sum() - 1) < 1e-12
    delta = 4.5 * math.sqrt(0.025 * 0.975 / BOOT_B)
    br = [quantile(d, w, q) for q in (0.025 - delta, 0.025 + delta,
                                       0.975 - delta, 0.975 + delta)]
    return [name, a, b] + br


# ------------------------------------------------------------ p families

def holm(p):
    """Holm: adj_(j) = max_{i <= j} min(1, (n - i + 1) p_(i)), 1-based j."""
    p = np.asarray(p, float)
    n = len(p)
    order = np.argsort(p, kind="stable")
    steps = np.minimum(1.0, (n - np.arange(n)) * p[order])
    adj = np.empty(n)
    adj[order] = np.maximum.accumulate(steps)
    return adj


def bh(p):
    """BH: q_(j) = min_{i >= j} min(1, n p_(i) / i), 1-based i."""
    p = np.asarray(p, float)
    n = len(p)
    order = np.argsort(p, kind="stable")
    steps = n * p[order] / np.arange(1, n + 1)
    q = np.empty(n)
    q[order] = np.minimum(1.0, np.minimum.accumulate(steps[::-1])[::-1])
    return q


def family_cases():
    r = rng(5)
    return [
        ("n=1", [0.03]),
        ("n=1 p=1", [1.0]),
        ("all p equal", [0.02] * 6),
        ("p = 0 and p = 1", [0.0, 1.0, 0.04, 0.0, 0.5]),
        ("ties and order kept", [0.04, 0.01, 0.03, 0.01, 0.2, 0.03, 0.9]),
        ("report-like (Welch p of 8 contrasts)",
         [0.00149, 0.0002, 0.028, 0.18, 0.12, 0.33, 0.049, 0.0079]),
        ("uniform 20", r.uniform(0, 1, 20)),
        ("small 20 (mostly signals)", r.uniform(0, 0.01, 20)),
    ]


def family_row(name, p):
    p = np.asarray(p, float)
    h, q = holm(p), bh(p)
    # one independent check: Holm is Bonferroni step-down, so adj >= p and
    # the smallest adj is min(1, n p_min); BH never exceeds Holm
    assert np.all(h >= p) and abs(h.min() - min(1, len(p) * p.min())) < 1e-15
    assert np.all(q <= h + 1e-15)
    return [name, len(p), list(p), list(h), list(q)]


# ------------------------------------------------------- Clopper-Pearson

def cp_cases():
    return [(0, 5, 0.95), (5, 5, 0.95), (0, 1, 0.95), (1, 1, 0.95), (3, 5, 0.95),
            (1, 20, 0.95), (19, 20, 0.95), (10, 20, 0.95), (7, 20, 0.9), (4, 20, 0.99),
            (50, 100, 0.95), (0, 20, 0.95)]


def cp_row(k, n, level):
    a = 1 - level
    lo = 0.0 if k == 0 else float(stats.beta.ppf(a / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - a / 2, k + 1, n - k))
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    assert abs(ci.low - lo) < 1e-12 and abs(ci.high - hi) < 1e-12, (k, n, ci, lo, hi)
    return ["%d of %d at %g" % (k, n, level), k, n, level, lo, hi]


# ---------------------------------------------------------------- Fisher

def fisher_enum_p(ka, na, kb, nb):
    """Two-sided p by enumerating every table with the observed margins,
    probabilities as exact fractions, SciPy's 1e-14 relative tolerance."""
    col = ka + kb
    if na == 0 or nb == 0 or col == 0 or col == na + nb:
        return 1.0
    def prob(x):
        return fractions.Fraction(math.comb(na, x) * math.comb(nb, col - x),
                                  math.comb(na + nb, col))
    obs = prob(ka)
    xs = range(max(0, col - nb), min(col, na) + 1)
    tol = obs * fractions.Fraction(1 + 10 ** 14, 10 ** 14)
    return float(min(1, sum(prob(x) for x in xs if prob(x) <= tol)))


def fisher_cases():
    return [(5, 5, 0, 5), (0, 5, 5, 5), (0, 5, 0, 5), (5, 5, 5, 5), (0, 0, 3, 5),
            (2, 5, 0, 0), (3, 5, 1, 5), (1, 1, 0, 1), (15, 20, 8, 20), (3, 20, 3, 20),
            (20, 20, 0, 20), (4, 20, 11, 20), (60, 100, 45, 100), (1, 3, 7, 12),
            (7, 12, 1, 3), (0, 20, 1, 20)]


def fisher_row(ka, na, kb, nb):
    p = stats.fisher_exact([[ka, na - ka], [kb, nb - kb]]).pvalue
    q = fisher_enum_p(ka, na, kb, nb)
    assert abs(p - q) <= 1e-12 * max(q, 1e-300), (ka, na, kb, nb, p, q)
    return ["%d/%d vs %d/%d" % (ka, na, kb, nb), ka, na, kb, nb, float(p)]


# ------------------------------------------------------------------ TOST

def tost_cases():
    r = rng(6)
    base = r.normal(1.05, 0.004, 20)
    return [
        ("equivalent 5 vs 5, margin 0.05", [1.051, 1.049, 1.052, 1.050, 1.048],
         [1.047, 1.053, 1.050, 1.049, 1.051], 0.05),
        ("not shown: margin too tight", [1.051, 1.049, 1.052, 1.050, 1.048],
         [1.047, 1.053, 1.050, 1.049, 1.051], 0.001),
        ("different means 5 vs 5", [0.20, 0.21, 0.19, 0.22, 0.20],
         [0.08, 0.09, 0.07, 0.08, 0.10], 0.05),
        ("margin so large every sample is equivalent", [0.20, 0.21, 0.19, 0.22, 0.20],
         [0.08, 0.09, 0.07, 0.08, 0.10], 100.0),
        ("unequal n and spread 3 vs 7", r.normal(0, 0.1, 3), r.normal(0.05, 1, 7), 0.5),
        ("20 vs 20, diff near -margin", base, base[::-1] + r.normal(0.008, 0.004, 20), 0.01),
        ("a constant", [2.0, 2.0, 2.0], [1.9, 2.1, 2.05, 1.95], 0.2),
    ]


def tost_row(name, a, b, margin):
    a, b = np.asarray(a, float), np.asarray(b, float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lower = stats.ttest_ind(a + margin, b, equal_var=False, alternative="greater").pvalue
        upper = stats.ttest_ind(a - margin, b, equal_var=False, alternative="less").pvalue
    return [name, a, b, margin, a.mean() - b.mean(), lower, upper, max(lower, upper)]


# -------------------------------------------------------------- paired t

def paired_cases():
    r = rng(7)
    x20 = r.normal(0.3, 0.05, 20)
    return [
        ("n=2", [1.0, 2.0], [0.5, 1.0]),
        ("n=5 intervention lowers", [0.21, 0.20, 0.22, 0.19, 0.23],
         [0.18, 0.19, 0.17, 0.19, 0.20]),
        ("n=5 no effect", [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]),
        ("n=20", x20, x20 + r.normal(0.01, 0.02, 20)),
        ("negative mean, n=8", r.normal(0, 1, 8), r.normal(1, 1, 8)),
    ]


def paired_row(name, x, y):
    x, y = np.asarray(x, float), np.asarray(y, float)
    res = stats.ttest_rel(x, y)
    return [name, x, y, float(np.mean(x - y)), res.statistic, len(x) - 1, res.pvalue]


# -------------------------------------------------------------- Wilcoxon

def signed_rank_block_p(d):
    """Exact p of W+ over all sign flips of the non-zero d, counted tie block
    by tie block: c positives in a block of t in comb(t, c) ways."""
    d = d[d != 0]
    if len(d) == 0:
        return 1.0
    r2, blocks = doubled_blocks(np.abs(d))
    dist = {0: 1}
    for rank2, t in blocks:
        nxt = {}
        for s, w in dist.items():
            for c in range(t + 1):
                nxt[s + c * rank2] = nxt.get(s + c * rank2, 0) + w * math.comb(t, c)
        dist = nxt
    return two_sided_exact(dist, int(r2[d > 0].sum()))


def w_plus(x, y, axis=-1):
    """W+ of x - y with zeros dropped: ranks of |d| over all pairs minus the
    number of zeros (zeros take the lowest ranks and stay zero under every
    sign flip). Vectorized along axis."""
    d = x - y
    zeros = np.sum(d == 0, axis=axis, keepdims=True)
    ranks = stats.rankdata(np.abs(d), axis=axis) - zeros
    return np.sum(np.where(d > 0, ranks, 0), axis=axis)


def wilcoxon_cases():
    r = rng(8)
    x20 = r.normal(0, 1, 20)
    return [
        ("n=1", [2.0], [1.0]),
        ("no ties n=8", r.normal(0.5, 1, 8), r.normal(0, 1, 8)),
        ("all positive n=6", [3.0, 4, 5, 6, 7, 8], [1.0, 1.5, 2, 2.5, 3, 3.5]),
        ("ties n=10", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [0, 3, 2, 3, 4, 8, 5, 10, 7, 12]),
        ("zeros and ties n=12", [1, 1, 2, 3, 4, 5, 5, 6, 7, 8, 9, 9],
         [1, 2, 1, 3, 2, 6, 4, 6, 9, 5, 8, 10]),
        ("one non-zero difference", [1.0, 2.0, 3.0], [1.0, 2.0, 2.5]),
        ("no ties n=20", x20, x20 + r.normal(0.3, 0.5, 20)),
        ("ties n=20 (1 decimal)", np.round(x20, 1), np.round(x20 + r.normal(0.2, 0.4, 20), 1)),
    ]


def wilcoxon_row(name, x, y):
    x, y = np.asarray(x, float), np.asarray(y, float)
    d = x - y
    nz = d[d != 0]
    wp = float(w_plus(x, y))
    tie_free = len(np.unique(np.abs(nz))) == len(nz) and len(nz) == len(d) and len(d) > 1
    if tie_free:
        res = stats.wilcoxon(x, y, method="exact", zero_method="wilcox")
        assert res.statistic == min(wp, len(d) * (len(d) + 1) / 2 - wp), name
        p = res.pvalue
    elif len(d) == 1:  # permutation_test wants two pairs: both signs, p = 1
        p = 1.0
    else:
        res = stats.permutation_test((x, y), w_plus, permutation_type="samples",
                                     vectorized=True, n_resamples=np.inf, batch=1 << 16,
                                     alternative="two-sided")
        p = res.pvalue
    q = signed_rank_block_p(d)
    assert abs(p - q) <= 1e-12 * max(1, q), (name, p, q)
    return [name, x, y, wp, len(nz), p]


# ------------------------------------------------- within-group correlation

def within_r(x, y, group):
    """Ranks over all observations, minus the group's mean rank, Pearson."""
    def resid(v):
        rv = stats.rankdata(v)
        out = rv.copy()
        for g in np.unique(group):
            out[group == g] -= rv[group == g].mean()
        return out
    ex, ey = resid(x), resid(y)
    return float(np.sum(ex * ey) / np.sqrt(np.sum(ex * ex) * np.sum(ey * ey)))


def within_brute_p(x, y, group):
    """Every within-group permutation of y, re-ranked from scratch."""
    r = within_r(x, y, group)
    idx = [np.flatnonzero(group == g) for g in np.unique(group)]
    hits = total = 0
    for perms in itertools.product(*[itertools.permutations(ix) for ix in idx]):
        yp = y.copy()
        for ix, pm in zip(idx, perms):
            yp[ix] = y[list(pm)]
        hits += abs(within_r(x, yp, group)) >= abs(r) - 1e-10
        total += 1
    return hits / total, total


def within_conv_p(x, y, group):
    """The same p in exact fractions: S = sum_g sum_i ex_i ey_pi(i) over
    independent within-group permutations, each group's k! values convolved;
    p = P(|S*| >= |S|)."""
    F = fractions.Fraction
    rx = [F(int(v)) / 2 for v in np.rint(2 * stats.rankdata(x))]
    ry = [F(int(v)) / 2 for v in np.rint(2 * stats.rankdata(y))]
    dist, obs = {F(0): 1}, F(0)
    for g in np.unique(group):
        ix = list(np.flatnonzero(group == g))
        mx = sum(rx[i] for i in ix) / len(ix)
        my = sum(ry[i] for i in ix) / len(ix)
        ex, ey = [rx[i] - mx for i in ix], [ry[i] - my for i in ix]
        obs += sum(a * b for a, b in zip(ex, ey))
        vals = {}
        for pm in itertools.permutations(range(len(ix))):
            s = sum(ex[i] * ey[pm[i]] for i in range(len(ix)))
            vals[s] = vals.get(s, 0) + 1
        nxt = {}
        for s0, w0 in dist.items():
            for s1, w1 in vals.items():
                nxt[s0 + s1] = nxt.get(s0 + s1, 0) + w0 * w1
        dist = nxt
    total = sum(dist.values())
    return float(F(sum(w for s, w in dist.items() if abs(s) >= abs(obs)), total)), total


def within_cases():
    r = rng(9)
    g12 = np.repeat(np.arange(4), 3)
    shift = 10.0 * g12
    xw = r.normal(0, 1, 12)
    g24 = np.repeat(np.arange(4), 6)
    x24 = r.normal(0, 1, 24) + g24
    return [
        ("3 groups of 3", r.normal(0, 1, 9), r.normal(0, 1, 9), np.repeat(np.arange(3), 3)),
        ("ties, groups 4 4 3", np.round(r.normal(0, 1, 11)), np.round(r.normal(0, 1, 11)),
         np.repeat(np.arange(3), [4, 4, 3])),
        ("sparse labels, groups of 1 2 3 4", r.normal(0, 1, 10), r.normal(0, 1, 10),
         np.array([7, 0, 0, 9, 9, 9, 2, 2, 2, 2])),
        ("within positive, between negative", shift + xw, -shift + xw + r.normal(0, 0.3, 12),
         g12),
        ("groups 5 5 3 (86400 permutations, exact)", r.normal(0, 1, 13), r.normal(0, 1, 13),
         np.repeat(np.arange(3), [5, 5, 3])),
        ("4 groups of 6 (Monte Carlo)", x24, -g24 + 0.4 * x24 + r.normal(0, 1, 24), g24),
    ]


def within_row(name, x, y, group):
    x, y, group = np.asarray(x, float), np.asarray(y, float), np.asarray(group)
    rr = within_r(x, y, group)
    p, total = within_conv_p(x, y, group)
    exact = int(total <= 200000)
    if exact:
        q, t2 = within_brute_p(x, y, group)
        assert t2 == total and abs(p - q) <= 1e-12, (name, p, q)
    return [name, len(x), list(x), list(y), [int(g) for g in group], rr, p, exact,
            len(np.unique(group))]


def c_num(v):
    if isinstance(v, int):
        return str(v)
    v = float(v)
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return repr(v)


def c_arr(x):
    assert len(x) <= MAXN
    return "{" + ", ".join(c_num(v) for v in x) + "}"


def c_field(v):
    if isinstance(v, str):
        return '"%s"' % v
    if isinstance(v, (list, np.ndarray)):
        return c_arr(v)
    return c_num(v)


def emit_rows(f, ctype, var, rows):
    """One initializer per row, its fields in order."""
    f.write("static const %s %s[] = {\n" % (ctype, var))
    for row in rows:
        f.write("    {%s},\n" % ", ".join(c_field(v) for v in row))
    f.write("};\n\n")


def emit(f, ctype, var, rows):
    """Rows [name, a, b, values...] as {name, na, nb, a, b, values...}."""
    emit_rows(f, ctype, var, [[r[0], len(r[1]), len(r[2])] + list(r[1:]) for r in rows])


def main():
    with open(OUT, "w") as f:
        f.write("/* stats_fixtures.h: expected values for tests/test_stats.c, GENERATED by\n"
                " * tests/reference/make_stats_fixtures.py with SciPy %s, NumPy %s.\n"
                " * Do not edit; rerun the script. */\n" % (scipy.__version__, np.__version__))
        f.write("#define FIX_MAXN %d\n#define FIX_BOOT_RESAMPLES %d\n\n" % (MAXN, BOOT_B))
        f.write("typedef struct { const char *name; int na, nb; double a[FIX_MAXN], "
                "b[FIX_MAXN]; double t, df, p; } WelchFix;\n")
        f.write("typedef struct { const char *name; int na, nb; double a[FIX_MAXN], "
                "b[FIX_MAXN]; double u, p; } MwFix;\n")
        f.write("/* na == nb == n; a is x, b is y */\n")
        f.write("typedef struct { const char *name; int na, nb; double a[FIX_MAXN], "
                "b[FIX_MAXN]; double rho, p; int exact; } SpearmanFix;\n")
        f.write("/* brackets: lo in [lo_min, lo_max], hi in [hi_min, hi_max] */\n")
        f.write("typedef struct { const char *name; int na, nb; double a[FIX_MAXN], "
                "b[FIX_MAXN]; double lo_min, lo_max, hi_min, hi_max; } BootFix;\n")
        f.write("typedef struct { const char *name; int n; double p[FIX_MAXN], "
                "holm[FIX_MAXN], bh[FIX_MAXN]; } FamilyFix;\n")
        f.write("typedef struct { const char *name; int k, n; double level, lo, hi; } CpFix;\n")
        f.write("typedef struct { const char *name; int ka, na, kb, nb; double p; } FisherFix;\n")
        f.write("typedef struct { const char *name; int na, nb; double a[FIX_MAXN], "
                "b[FIX_MAXN]; double margin, diff, p_lower, p_upper, p; } TostFix;\n")
        f.write("/* paired samples: na == nb == n; a is x, b is y */\n")
        f.write("typedef struct { const char *name; int na, nb; double a[FIX_MAXN], "
                "b[FIX_MAXN]; double mean_diff, t; int df; double p; } PairedFix;\n")
        f.write("typedef struct { const char *name; int na, nb; double a[FIX_MAXN], "
                "b[FIX_MAXN]; double w_plus; int m; double p; } WilcoxonFix;\n")
        f.write("/* p: the exact permutation p (also for the Monte Carlo case) */\n")
        f.write("typedef struct { const char *name; int n; double x[FIX_MAXN], y[FIX_MAXN]; "
                "int group[FIX_MAXN]; double r, p; int exact, groups; } WithinFix;\n\n")
        emit(f, "WelchFix", "welch_fix", [welch_row(*c) for c in welch_cases()])
        emit(f, "MwFix", "mw_fix", [mw_row(*c) for c in mw_cases()])
        emit(f, "SpearmanFix", "spearman_fix", [spearman_row(*c) for c in spearman_cases()])
        emit(f, "BootFix", "boot_fix", [boot_row(*c) for c in boot_cases()])
        emit_rows(f, "FamilyFix", "family_fix", [family_row(*c) for c in family_cases()])
        emit_rows(f, "CpFix", "cp_fix", [cp_row(*c) for c in cp_cases()])
        emit_rows(f, "FisherFix", "fisher_fix", [fisher_row(*c) for c in fisher_cases()])
        emit(f, "TostFix", "tost_fix", [tost_row(*c) for c in tost_cases()])
        emit(f, "PairedFix", "paired_fix", [paired_row(*c) for c in paired_cases()])
        emit(f, "WilcoxonFix", "wilcoxon_fix", [wilcoxon_row(*c) for c in wilcoxon_cases()])
        emit_rows(f, "WithinFix", "within_fix", [within_row(*c) for c in within_cases()])
    # the repository's .clang-format lays the tables out (tests/check_format.sh)
    subprocess.run(["clang-format", "-i", OUT], check=True)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
