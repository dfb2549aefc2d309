#!/usr/bin/python3
"""Write tests/reference/stats_fixtures.h: expected values for
tests/test_stats.c computed with SciPy, an implementation independent of
analysis/stats.c.

    /usr/bin/python3 tests/reference/make_stats_fixtures.py

Needs python3-scipy (Debian). Deterministic (fixed numpy seeds): a rerun
writes the same file. The C test never runs this script; rerun it only
when a definition in analysis/stats.h changes, and commit the header.

What each table holds (definitions: analysis/stats.h, docs/statistics.md):
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
"""
import itertools
import math
import os
import warnings

import numpy as np
import scipy
from scipy import stats

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "stats_fixtures.h")
MAXN = 24
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
    ]


def mw_row(name, a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    pooled = np.concatenate([a, b])
    u = stats.rankdata(pooled)[: len(a)].sum() - len(a) * (len(a) + 1) / 2
    ties = len(np.unique(pooled)) < len(pooled)
    # permutation_test wants >= 2 values per sample; n = 1 cases have no ties
    # (and the no-tie 10 vs 12 case would take a minute: SciPy's exact test)
    small = min(len(a), len(b)) >= 2 and math.comb(len(pooled), len(a)) <= 50000
    p = ranksum_p(a, b) if small or ties else None
    if not ties:
        ref = stats.mannwhitneyu(a, b, method="exact", alternative="two-sided")
        assert abs(ref.statistic - u) < 1e-12, name
        if p is None:
            p = ref.pvalue
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


def emit(f, ctype, var, rows):
    f.write("static const %s %s[] = {\n" % (ctype, var))
    for row in rows:
        name, a, b, rest = row[0], row[1], row[2], row[3:]
        f.write('    {"%s", %d, %d, %s, %s, %s},\n' % (
            name, len(a), len(b), c_arr(a), c_arr(b), ", ".join(c_num(v) for v in rest)))
    f.write("};\n\n")


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
                "b[FIX_MAXN]; double lo_min, lo_max, hi_min, hi_max; } BootFix;\n\n")
        emit(f, "WelchFix", "welch_fix", [welch_row(*c) for c in welch_cases()])
        emit(f, "MwFix", "mw_fix", [mw_row(*c) for c in mw_cases()])
        emit(f, "SpearmanFix", "spearman_fix", [spearman_row(*c) for c in spearman_cases()])
        emit(f, "BootFix", "boot_fix", [boot_row(*c) for c in boot_cases()])
    print("wrote", OUT)


if __name__ == "__main__":
    main()
