#!/usr/bin/python3
"""make_task_floor_fixture.py: bigram-backcopy's task floor on small.ini's
val batches, computed independently of the C code from the generator's
definition (docs/metrics.md, "Task floor"; src/train/data.c describes the
generator): xoshiro256** seeded through splitmix64 as rng_seed4 does, the
trigger subset and the bigram rows as open_bigram draws them (float32 cdf),
the val rows as bigram_row draws them, and the mean over every target of
the entropy of the generator's conditional given the context. Writes
tests/reference/task_floor_fixture.h, which tests/test_data.c compares
with data_task_floor. Run: /usr/bin/python3 tests/reference/make_task_floor_fixture.py
"""
import math
import os

import numpy as np

M = (1 << 64) - 1


def splitmix(x):
    x = (x + 0x9E3779B97F4A7C15) & M
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return x, z ^ (z >> 31)


class Rng:
    def __init__(self, a, b, c, d):
        x, h = splitmix(a)
        x, h = splitmix(h ^ b)
        x, h = splitmix(h ^ c)
        x, h = splitmix(h ^ d)
        x = h
        self.s = []
        for _ in range(4):
            x, z = splitmix(x)
            self.s.append(z)

    def u64(self):
        s = self.s
        rotl = lambda v, k: ((v << k) | (v >> (64 - k))) & M
        result = (rotl((s[1] * 5) & M, 7) * 9) & M
        t = (s[1] << 17) & M
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def uniform(self):
        return (self.u64() >> 11) * 2.0**-53

    def below(self, n):
        return ((self.u64() >> 32) * n) >> 32

    def normal(self):
        u1, u2 = self.uniform(), self.uniform()
        u1 = max(u1, 1e-300)
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2)


def generator(v, k, seed):
    r = Rng(seed, 0x74726967, 0, 0)
    perm = list(range(v))
    trig = [0] * v
    for i in range(k):
        j = i + r.below(v - i)
        perm[i], perm[j] = perm[j], perm[i]
        trig[perm[i]] = 1
    cdf = np.zeros((v, v), dtype=np.float32)
    for row in range(v):
        r = Rng(seed, 0x726F77, row, 0)
        perm = list(range(v))
        w = [0.0] * v
        total = 0.0
        for i in range(min(v, 8)):
            j = i + r.below(v - i)
            perm[i], perm[j] = perm[j], perm[i]
            w[perm[i]] = math.exp(1.5 * r.normal())
            total += w[perm[i]]
        last = max(j for j in range(v) if w[j] > 0)
        acc = 0.0
        for j in range(v):
            acc += w[j]
            cdf[row, j] = 1.0 if j >= last else np.float32(acc / total)
    return trig, cdf


def row_elements(r, trig, cdf, v, n):
    """The n elements of one bigram-backcopy row."""
    out, prev, prev2 = [], -1, -1
    for kk in range(n):
        if kk == 0:
            while True:
                x = r.below(v)
                if not trig[x]:
                    break
        elif trig[prev]:
            x = prev2
        else:
            u = r.uniform()
            x = int(np.argmax(u < cdf[prev].astype(np.float64)))
        out.append(x)
        prev2, prev = prev, x
    return out


def main():
    v, k, seed, batch, T, nb = 64, 16, 1, 32, 64, 8  # experiments/small.ini
    eval_seed, split_val = 0xE7A1, 1  # train_loop.c EVAL_SEED, data.h SPLIT_VAL
    trig, cdf = generator(v, k, seed)
    steps = np.diff(np.concatenate([np.zeros((v, 1)), cdf.astype(np.float64)], axis=1), axis=1)
    h_row = [-sum(p * math.log(p) for p in steps[r] if p > 0) for r in range(v)]
    total, count = 0.0, 0
    for step in range(nb):
        for b in range(batch):
            r = Rng(eval_seed, split_val, step, b)
            el = row_elements(r, trig, cdf, v, T)  # with BOS: T elements, all targets
            for t in range(T):
                if t == 0:
                    total += math.log(v - k)
                elif not trig[el[t - 1]]:
                    total += h_row[el[t - 1]]
                count += 1
    floor = total / count
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "task_floor_fixture.h")
    with open(path, "w") as f:
        f.write("/* task_floor_fixture.h: written by tests/reference/make_task_floor_fixture.py;\n"
                " * do not edit. bigram-backcopy's task floor on experiments/small.ini's val\n"
                " * batches (B 32, T 64, 8 batches, EVAL_SEED 0xE7A1), nats per target. */\n")
        f.write("#define TASK_FLOOR_SMALL %.17g\n" % floor)
    print(floor)


if __name__ == "__main__":
    main()
