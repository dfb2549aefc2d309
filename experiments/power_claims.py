#!/usr/bin/env python3
"""Power of claims-nonlin's and claims-length's declared tests, simulated
from earlier paired data (confirm-natural's val loss at natural.ini, seeds
101-120), as the sweep files' comments state. Needs NumPy and SciPy.

  python3 experiments/power_claims.py nonlin 40 60
  python3 experiments/power_claims.py length 30 50
"""
import collections
import csv
import math
import sys

import numpy as np
from scipy import stats

CSV = "results/reference/earlier/confirm-natural/results.csv"


def paired_gain():
    """g1-elem - baseline val loss per seed of confirm-natural."""
    g = collections.defaultdict(dict)
    for r in csv.DictReader(open(CSV)):
        g[r["run"]][int(r["seed"])] = float(r["val_loss"])
    return np.array([g["g1-elem"][s] - g["baseline"][s] for s in sorted(g["baseline"])])


def wilcoxon_p(d, alternative="two-sided"):
    return stats.wilcoxon(d, alternative=alternative,
                          method="exact" if len(d) <= 50 else "approx").pvalue


def nonlin(ns, rng, draws=2000):
    """Each claim's effect: the paper's ln PPL ratio scaled by our gain at
    1500 steps over the paper's g1-elem gain; noise: the centred paired
    differences of g1-elem - baseline; two-sided exact Wilcoxon at the
    Holm family's smallest bound 0.05 / 8."""
    d1 = paired_gain()
    noise, scale = d1 - d1.mean(), -d1.mean() / math.log(6.026 / 5.761)
    ppl = {"baseline": 6.026, "g1-elem": 5.761, "sdpa-rmsnorm": 5.847, "sdpa-silu": 5.975,
           "g1-add-id": 5.882, "g1-const": 5.917, "g1-ns": 5.900}
    pairs = [(a, "baseline") for a in ("sdpa-rmsnorm", "sdpa-silu", "g1-add-id")]
    pairs += [("g1-elem", r) for r in ("sdpa-rmsnorm", "sdpa-silu", "g1-add-id", "g1-const",
                                         "g1-ns")]
    for a, r in pairs:
        delta = math.log(ppl[r] / ppl[a]) * scale
        power = []
        for n in ns:
            hits = 0
            for _ in range(draws):
                d = -delta + rng.choice(noise, n)
                hits += wilcoxon_p(d) < 0.05 / len(pairs) and np.median(d) < 0
            power.append("n=%d: %.2f" % (n, hits / draws))
        print("%s < %s: assumed %.4f nats; %s" % (a, r, delta, ", ".join(power)))


def length(ns, rng, draws=4000, margin=0.04):
    """d = (a2 - b2) - (a1 - b1) with both differences drawn independently
    from confirm-natural's paired differences (the 2x one shifted by the
    change), one-sided exact Wilcoxon of d - margin below 0."""
    d1 = paired_gain()
    for change in (0.0, -d1.mean() / 2, -d1.mean()):
        power = []
        for n in ns:
            hits = sum(wilcoxon_p(rng.choice(d1, n) + change - rng.choice(d1, n) - margin,
                                  "less") < 0.05 for _ in range(draws))
            power.append("n=%d: %.3f" % (n, hits / draws))
        print("gain shrinks by %.4f nats: rejection rate %s" % (change, ", ".join(power)))


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("nonlin", "length"):
        sys.exit("usage: power_claims.py nonlin|length N [N ...]")
    rng = np.random.default_rng(1)
    (nonlin if sys.argv[1] == "nonlin" else length)([int(x) for x in sys.argv[2:]], rng)
