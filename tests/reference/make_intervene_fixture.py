#!/usr/bin/python3
"""make_intervene_fixture.py: the PyTorch reference of the inference-time
interventions (src/model/intervention.h, docs/metrics.md "Interventions"), for
tests/test_intervene.c.

    /usr/bin/python3 tests/reference/make_intervene_fixture.py [--out DIR]

Writes fixtures/intervene/intervene.h5 (its own directory: test_reference.c
takes every fixtures/*.h5 as one of its cases), one group per case (a tiny model of
make_fixtures.py: same configs, weights drawn the same way, float32-exact):
  <case>/config           uint8 [n]: INI text
  <case>/tokens           int32 [B, T]
  <case>/params/<name>    float32 weights
  <case>/block_out       float32 [K, L, B, Ti, d]: residual after each block
                          (after the intervention; Ti = T + sink token)
  <case>/logits          float32 [K, B, T, V]
    for the K = 5 kinds none, gates-open, gates-mean, bos-clip (k = 3),
    bos-mean, in that order (intervention.h's)
  <case>/no-bos/block_out, <case>/no-bos/logits: the same for no-bos, whose
    tokens are tokens[:, 1:] (T - 1 of them)
  <case>/more/<name>/block_out, logits: the kinds after no-bos, one group
    per result (attrs kind, layer, gate_const; names as the run file's):
    head-zero of the heads <case>/more_heads (int32 [k, 2]: layer, head),
    gates-open-layer-L0, gate-const-c0.25, gate-const-c1, mact-mean-L0 and
    mact-zero-L<last> at the case's attrs mact_abs and mact_ratio.
Computed in float64
by gatelab.ref.Model with the interventions written here from the
definitions, independently of the C code.
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

CASES = ["var-g1-elem", "var-g1-shared", "var-g1-add-id", "var-g1-const", "opt-learned-sink"]
KINDS = ["none", "gates-open", "gates-mean", "bos-clip", "bos-mean", "no-bos"]
CLIP_K = 3
SEED = 20250602
MACT_ABS, MACT_RATIO = 0.0, 2.0  # low enough that a tiny random model has massive entries


def more_kinds(L):
    """The more/ results: (name, kind, layer, c)."""
    nan = float("nan")
    return [("head-zero", "head-zero", -1, nan),
            ("gates-open-layer-L0", "gates-open-layer", 0, nan),
            ("gate-const-c0.25", "gate-const", -1, 0.25),
            ("gate-const-c1", "gate-const", -1, 1.0),
            ("mact-mean-L0", "mact-mean", 0, nan),
            ("mact-zero-L%d" % (L - 1), "mact-zero", L - 1, nan)]


def more_heads(L):
    """head-zero's heads (layer, head) of a case."""
    return [(0, 0), (L - 1, 1)]


class IvModel(ref.Model):
    """gatelab.ref.Model with one intervention and the block outputs kept."""

    def __init__(self, cfg, params, kind, layer=-1, c=None, heads=()):
        super().__init__(cfg, params=params)
        self.kind, self.layer, self.c, self.heads = kind, layer, c, heads
        self.extra = 1 if self.cfg["sink_token"] else 0
        self.blocks = []

    def attention(self, l, x, rope):
        """head-zero: the listed heads' columns of W_o set to 0, which is
        their output zeroed before the projection."""
        key = "layers.%d.attn.w_o" % l
        if self.kind != "head-zero" or not any(hl == l for hl, _ in self.heads):
            return super().attention(l, x, rope)
        w = self.p[key]
        dh = self.cfg["head_dim"]
        wz = w.clone()
        for hl, h in self.heads:
            if hl == l:
                wz[:, h * dh:(h + 1) * dh] = 0
        self.p[key] = wz
        try:
            return super().attention(l, x, rope)
        finally:
            self.p[key] = w

    def gate(self, l, xn, t):
        """gatelab.ref's gate, with the scores replaced for gates-open/-mean.
        The scores come from the reference itself: the gate applied to the
        identity of its form (ones for mult, zeros for add) is the scores,
        broadcast to [B, Ti, G*Cg]."""
        kind, c = self.kind, self.cfg
        if kind == "gates-open-layer":
            kind = "gates-open" if l == self.layer else "none"
        if kind not in ("gates-open", "gates-mean", "gate-const"):
            return super().gate(l, xn, t)
        mult = c["gate_form"] == "mult"
        gg = super().gate(l, xn, torch.ones_like(t) if mult else torch.zeros_like(t))
        if kind == "gates-open":
            gg = torch.full_like(gg, 1.0 if mult else 0.0)
        elif kind == "gate-const":  # the applied score is c, whatever the form
            gg = torch.full_like(gg, self.c)
        elif c["gate_input"] != "const":  # gates-mean: mean over the real rows, every row
            gg = gg[:, self.extra:].mean(1, keepdim=True).expand_as(gg)
        return t * gg if mult else t + gg

    def residual(self, x, l):
        e = self.extra
        x = x.clone()
        for b in range(x.shape[0]):
            h = x[b, e:]
            if self.kind in ("mact-mean", "mact-zero") and l == self.layer:
                med = torch.quantile(h.abs().reshape(-1), 0.5)
                thr = max(MACT_ABS, MACT_RATIO * med.item())
                big = h.abs() > thr
                fill = h.mean(0, keepdim=True).expand_as(h) if self.kind == "mact-mean" \
                    else torch.zeros_like(h)
                h[big] = fill[big]
            elif self.kind == "bos-mean":
                h[0] = h[1:].mean(0)
            elif self.kind == "bos-clip":
                med = torch.quantile(h.abs().reshape(-1), 0.5)  # mean of the two middles
                top = torch.topk(h[0].abs(), CLIP_K).indices
                for i in top.tolist():
                    if h[0, i].abs() > med:
                        h[0, i] = torch.sign(h[0, i]) * med
        return x

    def forward(self, tokens):
        c, P = self.cfg, self.p
        B, T = tokens.shape
        x = P["tok_embed"][tokens]
        if self.extra:
            x = torch.cat([P["sink_embed"].reshape(1, 1, -1).expand(B, 1, -1), x], 1)
        Ti = T + self.extra
        if c["pos"] == "learned":
            x = x + P["pos_embed"][:Ti][None]
        rope = ref.rope_tables(c, Ti, x.dtype) if c["pos"] == "rope" else None
        self.blocks = []
        for l in range(c["n_layers"]):
            x = x + self.attention(l, x, rope)
            x = x + self.mlp(l, x)
            x = self.residual(x, l)
            self.blocks.append(x)
        xf = self.norm(x, "final_norm")
        head = P["tok_embed"] if c["tied_embed"] else P["lm_head"]
        return (xf @ head.t())[:, self.extra:]


def make_case(f, name, vid, cfg, seed):
    g, params, tok = mf.model_case(f, name, vid, cfg, seed)
    blocks, logits = [], []
    with torch.no_grad():
        for kind in KINDS:
            m = IvModel(cfg, params, kind)
            lg = m.forward(tok[:, 1:] if kind == "no-bos" else tok)
            blocks.append(torch.stack(m.blocks).numpy().astype(np.float32))
            logits.append(lg.numpy().astype(np.float32))
    mf.put(g, "block_out", np.stack(blocks[:-1]))  # every kind but no-bos
    mf.put(g, "logits", np.stack(logits[:-1]))
    mf.put(g, "no-bos/block_out", blocks[-1])
    mf.put(g, "no-bos/logits", logits[-1])
    L = cfg["n_layers"]
    heads = more_heads(L)
    mf.put(g, "more_heads", np.array(heads, dtype=np.int32))
    g.attrs["mact_abs"], g.attrs["mact_ratio"] = MACT_ABS, MACT_RATIO
    with torch.no_grad():
        for nm, kind, layer, c in more_kinds(L):
            m = IvModel(cfg, params, kind, layer, c, heads)
            lg = m.forward(tok)
            r = g.create_group("more/" + nm)
            mf.put(r, "block_out", torch.stack(m.blocks).numpy().astype(np.float32))
            mf.put(r, "logits", lg.numpy().astype(np.float32))
            r.attrs["kind"], r.attrs["layer"], r.attrs["gate_const"] = kind, layer, c
    print("%-18s done" % name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "fixtures", "intervene"))
    a = ap.parse_args()
    torch.set_num_threads(1)
    path = os.path.join(a.out, "intervene.h5")
    mf.write_cases(path, ("tests/reference/make_intervene_fixture.py, torch %s, seed %d, "
                   "clip_k %d" % (torch.__version__, SEED, CLIP_K)),
                   CASES, make_case, SEED)


if __name__ == "__main__":
    main()
