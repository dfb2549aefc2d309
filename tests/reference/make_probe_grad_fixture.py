#!/usr/bin/python3
"""make_probe_grad_fixture.py: the PyTorch reference of the probe's
training-time measures (src/train/probe_grad.h, docs/metrics.md
"Training-time measures"), for tests/test_probe_grad.c.

    /usr/bin/python3 tests/reference/make_probe_grad_fixture.py [--out DIR]

Writes fixtures/probe_grad/probe_grad.h5 (its own directory: test_reference.c
takes every fixtures/*.h5 as one of its cases), one group per case (a tiny
model of make_fixtures.py: same configs, weights drawn the same way,
float32-exact):
  <case>/config            uint8 [n]: INI text
  <case>/tokens, targets   int32 [N, T]; sequence 1 has some targets -1 and
                           sequence N-1 none at all
  <case>/params/<name>     float32 weights
  <case>/grad_in_norm      float64 [L, T]: mean over the sequences with a
                           target of || d L_n / d h^l_{n,t} ||_2, L_n the
                           sequence's mean cross-entropy over its targets,
                           h^l the residual stream entering block l
  <case>/gate_weight_norm  float64 [L, G] (gated cases): the Frobenius norm
                           of layer l's gate.w rows serving head g
Computed in float64 by gatelab.ref.Model's autograd, one sequence at a time.
"""
import argparse
import os
import sys

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from gatelab import ref  # noqa: E402
import make_fixtures as mf  # noqa: E402

CASES = ["var-baseline", "var-g1-elem", "var-g2-head", "var-g1-const", "var-g5-elem",
         "var-head-gate-linear", "opt-learned-sink", "var-registers"]
N = 5
SEED = 20250603


def probe_batch(cfg, gen):
    V, T = cfg["vocab_size"], mf.T
    tok = torch.randint(0, V, (N, T), generator=gen)
    tgt = torch.randint(0, V, (N, T), generator=gen)
    tok[:, 0] = 0
    tgt[1, ::3] = -1   # some positions without a target
    tgt[N - 1, :] = -1  # a sequence without any
    return tok, tgt


def grad_norms(cfg, params, tok, tgt):
    """[L, T]: the mean over sequences with a target of the per-position
    input-gradient norms of each block."""
    L, T = cfg["n_layers"], tok.shape[1]
    extra = cfg["sink_token"]
    total, used = torch.zeros(L, T, dtype=torch.float64), 0
    for n in range(N):
        if (tgt[n] != -1).sum() == 0:
            continue
        p = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
        model = ref.Model(cfg, params=p)
        ins = []
        logits = model.forward(tok[n:n + 1], block_inputs=ins)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 tgt[n].reshape(-1), ignore_index=-1)
        loss.backward()
        for l, x in enumerate(ins):
            total[l] += x.grad[0, extra:].norm(dim=-1)
        used += 1
    return total / used


def gate_norms(cfg, params):
    """[L, G] or None: per-head Frobenius norms of gate.w's G equal blocks."""
    key = "layers.0.attn.gate.w"
    if key not in params:
        return None
    G = ref.gate_geometry(cfg)[0]  # the heads the gate serves
    out = []
    for l in range(cfg["n_layers"]):
        w = params["layers.%d.attn.gate.w" % l].detach().reshape(G, -1)
        out.append(w.norm(dim=1))
    return torch.stack(out)


def make_case(f, name, vid, cfg, seed):
    gen = torch.Generator().manual_seed(seed)
    params = mf.f32_exact(ref.init_params(cfg, gen))
    tok, tgt = probe_batch(cfg, gen)
    g = f.create_group(name)
    mf.put(g, "config", np.frombuffer(mf.config_text(vid, cfg).encode(), dtype=np.uint8))
    mf.put(g, "tokens", tok.numpy().astype(np.int32))
    mf.put(g, "targets", tgt.numpy().astype(np.int32))
    for n, p in params.items():
        mf.put(g, "params/" + n, p.detach().numpy().astype(np.float32))
    gn = grad_norms(cfg, params, tok, tgt)
    mf.put(g, "grad_in_norm", gn.numpy())
    wn = gate_norms(cfg, params)
    if wn is not None:
        mf.put(g, "gate_weight_norm", wn.numpy())
    print("%-22s grad_in_norm[0, 0] %.6g%s" % (name, float(gn[0, 0]),
          "" if wn is None else ", gate heads %d" % wn.shape[1]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "fixtures", "probe_grad"))
    a = ap.parse_args()
    torch.set_num_threads(1)
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "probe_grad.h5")
    mf.write_cases(path, ("tests/reference/make_probe_grad_fixture.py, torch %s, seed %d"
                   % (torch.__version__, SEED)),
                   CASES, make_case, SEED)


if __name__ == "__main__":
    main()
