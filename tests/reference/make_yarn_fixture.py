#!/usr/bin/python3
"""make_yarn_fixture.py: numpy reference for YaRN (Peng et al. 2023), written
independently of src/ops/op_rope.c from the paper's definition, into
fixtures/yarn.txt (plain text, read by tests/test_eval.c).

  wavelength lam_i = 2 pi base^(2i/dh); r_i = orig_len / lam_i
  gamma_i = clip((r_i - alpha) / (beta - alpha), 0, 1), alpha 1, beta 32
  theta'_i = (1 - gamma_i) theta_i / s + gamma_i theta_i
  attention temperature: q and k both times m = 0.1 ln s + 1

Regenerate:  /usr/bin/python3 tests/reference/make_yarn_fixture.py
Each line: NAME COUNT v1 v2 ... (float64 printed with 17 digits)."""
import os
import numpy as np

ALPHA, BETA = 1.0, 32.0


def yarn_freqs(dh, base, scale, orig):
    i = np.arange(dh // 2, dtype=np.float64)
    theta = base ** (-2.0 * i / dh)
    if scale <= 1.0:
        return theta, 1.0
    lam = 2.0 * np.pi / theta
    r = orig / lam
    gamma = np.clip((r - ALPHA) / (BETA - ALPHA), 0.0, 1.0)
    return (1.0 - gamma) * theta / scale + gamma * theta, 0.1 * np.log(scale) + 1.0


def rotate(x, freqs):
    """x[T, dh], rotate-half convention: (x1, x2) -> (x1 c - x2 s, x2 c + x1 s)."""
    T, dh = x.shape
    ang = np.arange(T, dtype=np.float64)[:, None] * freqs[None, :]
    c, s = np.cos(ang), np.sin(ang)
    x1, x2 = x[:, : dh // 2], x[:, dh // 2:]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=1)


def attention(q, k, v, freqs, m):
    T, dh = q.shape
    qr, kr = rotate(q, freqs) * m, rotate(k, freqs) * m
    s = qr @ kr.T / np.sqrt(dh)
    s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    a = np.exp(s - s.max(axis=1, keepdims=True))
    a /= a.sum(axis=1, keepdims=True)
    return a @ v


def line(name, arr):
    arr = np.atleast_1d(np.asarray(arr, dtype=np.float64)).ravel()
    return name + " " + str(arr.size) + " " + " ".join("%.17g" % x for x in arr) + "\n"


def main():
    out = []
    for name, dh, base, scale, orig in [("a", 16, 10000.0, 4.0, 32),
                                        ("b", 64, 10000.0, 8.0, 64),
                                        ("c", 16, 10000.0, 1.0, 32)]:
        f, m = yarn_freqs(dh, base, scale, orig)
        out.append(line("freq_" + name, f))
        out.append(line("m_" + name, m))
    rng = np.random.default_rng(7)
    T, dh = 24, 16  # attention at 24 tokens, case a (orig 32 is irrelevant to T)
    q, k, v = (rng.standard_normal((T, dh)) for _ in range(3))
    f, m = yarn_freqs(dh, 10000.0, 4.0, 32)
    out += [line("q", q), line("k", k), line("v", v), line("y_yarn", attention(q, k, v, f, m))]
    f1, _ = yarn_freqs(dh, 10000.0, 1.0, 32)
    out.append(line("y_plain", attention(q, k, v, f1, 1.0)))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "yarn.txt")
    with open(path, "w") as fh:
        fh.write("".join(out))
    print("wrote", path)


if __name__ == "__main__":
    main()
