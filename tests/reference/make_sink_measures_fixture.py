"""Reference values of the probe's measures beyond position 0
(docs/metrics.md "Beyond the first token"), computed with numpy
independently of the C code:
- for two of the tiny Hugging Face checkpoints, from the attention maps and
  block outputs that the plain-PyTorch forward of make_hf_fixtures.py wrote
  (hf/<name>/expected.h5): writes hf/<name>/sinks.h5;
- for a trained-architecture model (the var-g1-add-id case of
  fixtures/intervene/intervene.h5: its config, weights and two token
  sequences), from the maps and block outputs of gatelab.ref.Model's
  float64 forward: writes fixtures/sinks/trained.h5 (a subdirectory, so
  test_reference.c does not take it for one of its cases), the same
  datasets with a leading sequence axis where they are per sequence, and
  secsinks [n,4] (seq, pos, layer, lifetime).
Both are read by ../test_sink_measures.c.

  /usr/bin/python3 tests/reference/make_sink_measures_fixture.py

Datasets (L layers, H heads, T positions, d residual width):
  key_alpha [L,H,T]    alpha_k = mean over queries t >= k of A[t,k]
  dist_weight [L,T]    mean over heads and queries t >= d of A[t,t-d]
  dist_mass [L,T]      mean over heads of sum_t A[t,t-d] / the map's mass
  bos_cosine [L,T]     cos(h_t, h_0) of each block output
  resid_share [L,d]    share of positions with |h_t[i]| > FACTOR x median |h|
  resid_share_boost [L,d]  the same after multiplying feature BOOST_DIM of
                       every block output by BOOST (a planted residual sink)
  secsinks [n,3] int32 (pos, layer, lifetime), secsink_peak [n]
The thresholds are attributes; they must equal metrics_sinks.h's.
"""
import os

import sys

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from gatelab import ref  # noqa: E402
import make_fixtures as mf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = ["qwen2-bf16", "llama-f32"]
EPS = 0.3          # SECSINK_EPS (= SINK_EPS)
MIN_QUERIES = 4    # SECSINK_MIN_QUERIES
FACTOR = 10.0      # RESID_SINK_FACTOR
BOOST_DIM, BOOST = 5, 50.0
MARGIN = 1e-3      # no score this close to EPS, so float error cannot flip a sink


def key_alpha(A):
    T = A.shape[-1]
    return np.stack([A[..., k:, k].mean(-1) for k in range(T)], -1)


def distance(A):
    T = A.shape[-1]
    w = np.stack([np.mean([A[..., t, t - d] for t in range(d, T)], 0) for d in range(T)], -1)
    s = np.stack([np.sum([A[..., t, t - d] for t in range(d, T)], 0) for d in range(T)], -1)
    mass = s / A.sum((-1, -2))[..., None]
    return w.mean(1), mass.mean(1)


def cosine(h):
    n = np.linalg.norm(h, axis=-1)
    return (h @ h[:, 0, :, None])[..., 0] / (n * n[:, :1])


def resid_share(h):
    L = h.shape[0]
    med = np.median(np.abs(h.reshape(L, -1)), axis=1)
    return (np.abs(h) > FACTOR * med[:, None, None]).mean(1)


def secondary(score):
    L, T = score.shape
    ok = np.zeros_like(score, dtype=bool)
    ok[:, 1:T - MIN_QUERIES + 1] = score[:, 1:T - MIN_QUERIES + 1] > EPS
    near = np.abs(score[:, 1:T - MIN_QUERIES + 1] - EPS) < MARGIN
    assert not near.any(), "a score is within MARGIN of eps"
    out, peak = [], []
    for k in range(1, T):
        for l in range(L):
            if not ok[l, k] or (l > 0 and ok[l - 1, k]):
                continue
            m = l
            while m < L and ok[m, k]:
                m += 1
            out.append((k, l, m - l))
            peak.append(score[l:m, k].max())
    return np.array(out, np.int32).reshape(-1, 3), np.array(peak, np.float64)


TRAINED = "var-g1-add-id"


class MapModel(ref.Model):
    """gatelab.ref.Model keeping each layer's attention maps and block output."""

    def normalise(self, l, s, q, mask):
        a, slot = super().normalise(l, s, q, mask)
        self.maps.append(a)
        return a, slot

    def run(self, tokens):
        self.maps, self.blocks = [], []
        c, P = self.cfg, self.p
        x = P["tok_embed"][tokens]
        rope = ref.rope_tables(c, x.shape[1], x.dtype) if c["pos"] == "rope" else None
        for l in range(c["n_layers"]):
            x = x + self.attention(l, x, rope)
            x = x + self.mlp(l, x)
            self.blocks.append(x)
        return torch.stack(self.maps, 1).numpy(), torch.stack(self.blocks, 1).numpy()


def trained():
    cfg = {n: c for n, _, c in mf.cases()}[TRAINED]
    with h5py.File(os.path.join(HERE, "fixtures", "intervene", "intervene.h5"), "r") as f:
        g = f[TRAINED]
        tok = torch.tensor(g["tokens"][()].astype(np.int64))
        params = {k: torch.tensor(v[()].astype(np.float64)) for k, v in g["params"].items()}
    with torch.no_grad():
        A, h = MapModel(cfg, params).run(tok)  # [B,L,H,T,T], [B,L,T,d]
    B = A.shape[0]
    ka = key_alpha(A)
    w, m = distance(A.mean(0))
    ss, peak = [], []
    for b in range(B):
        s, p = secondary(ka[b].mean(1))
        ss += [(b,) + tuple(r) for r in s]
        peak += list(p)
    L, T, d = h.shape[1:]
    med = np.median(np.abs(h.reshape(B, L, -1)), axis=2)  # per sequence and layer
    share = (np.abs(h) > FACTOR * med[:, :, None, None]).mean((0, 2))
    os.makedirs(os.path.join(HERE, "fixtures", "sinks"), exist_ok=True)
    with h5py.File(os.path.join(HERE, "fixtures", "sinks", "trained.h5"), "w") as f:
        f["key_alpha"] = ka.astype(np.float32)
        f["dist_weight"], f["dist_mass"] = w, m
        f["bos_cosine"] = np.stack([cosine(h[b]) for b in range(B)])
        f["resid_share"] = share
        f["secsinks"] = np.array(ss, np.int32).reshape(-1, 4)
        f["secsink_peak"] = np.array(peak, np.float64)
        f.attrs["case"] = TRAINED
    print(f"{TRAINED}: {len(ss)} secondary sink(s), largest resid share {share.max():.3f}")


def main():
    torch.set_num_threads(1)
    trained()
    for name in FIXTURES:
        d = os.path.join(HERE, "hf", name)
        with h5py.File(os.path.join(d, "expected.h5"), "r") as e:
            A = e["attention"][()].astype(np.float64)  # [L,H,T,T]
            h = e["hidden"][()].astype(np.float64)     # [L,T,d]
        ka = key_alpha(A)
        w, m = distance(A)
        boosted = h.copy()
        boosted[:, :, BOOST_DIM] *= BOOST
        ss, peak = secondary(ka.mean(1))
        with h5py.File(os.path.join(d, "sinks.h5"), "w") as f:
            f["key_alpha"] = ka.astype(np.float32)
            f["dist_weight"], f["dist_mass"] = w, m
            f["bos_cosine"] = cosine(h)
            f["resid_share"] = resid_share(h)
            f["resid_share_boost"] = resid_share(boosted)
            f["secsinks"], f["secsink_peak"] = ss, peak
            for k, v in dict(eps=EPS, min_queries=MIN_QUERIES, factor=FACTOR,
                             boost_dim=BOOST_DIM, boost=BOOST).items():
                f.attrs[k] = v
        print(f"{name}: {len(ss)} secondary sink(s), boosted residual-sink share "
              f"{resid_share(boosted)[:, BOOST_DIM]}")


if __name__ == "__main__":
    main()
