#!/usr/bin/python3
"""make_head_probe_fixtures.py: the PyTorch reference of the head probes
(docs/metrics.md "Head probes": key, value and head output norms, the gate
score at position 0 and after, each head's W_V W_O effective rank), for
tests/test_head_probe.c.

    /usr/bin/python3 tests/reference/make_head_probe_fixtures.py

Trained models: fixtures/headprobe/headprobe.h5 (its own directory, as
test_reference.c takes every fixtures/*.h5 for one of its cases), one group
per case of make_fixtures.py (same configs, weights drawn the same way,
float32-exact, float64 forward of gatelab.ref.Model):
  <case>/config, <case>/tokens [N, T], <case>/params/<name>
  <case>/key_norm, value_norm, head_out_norm  float64 [L, H, T]
  <case>/gate_first, gate_rest                float64 [L] (gated cases)
  <case>/ov_erank                             float64 [L, H]
Checkpoints: hf/<name>/head_probe.h5 with the same five arrays for the
window of hf/<name>/expected.h5, from the checkpoint's weights rebuilt as
make_hf_fixtures.py draws them (the logits are checked against
expected.h5 first, so the weights are the snapshot's).

Norms are Euclidean over the head dimension, per sequence, then averaged
over sequences; keys after QK-norm and RoPE with GQA's repeat_kv (query
head h reads KV head h // (H / Hkv)), values after a G2 gate, head outputs
after the Y modification and a G1 gate (what W_o reads). The effective rank
is exp of the entropy of the singular values of W_O[:, h] W_V[h] normalised
to sum 1 (Roy & Vetterli 2007), from torch.linalg.svdvals in float64.
"""
import math
import os
import sys

import h5py
import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from gatelab import ref  # noqa: E402
import make_fixtures as mf  # noqa: E402
import hf_forwards as hff  # noqa: E402
import make_hf_fixtures as mhf  # noqa: E402

CASES = ["var-baseline", "var-g1-elem", "var-g1-head", "var-g2-elem", "var-sink-token",
         "var-qk-norm", "var-sdpa-rmsnorm"]
HF_CASES = ["llama-f32", "qwen3-headwise-f32", "qwen3-elementwise-bf16", "gpt2-f32", "neox-f32"]
SEED = 20251202


def erank(m):
    s = torch.linalg.svdvals(m.double())
    p = s / s.sum()
    p = p[p > 0]
    return float(torch.exp(-(p * p.log()).sum()))


def norms(x):
    """x [..., dh] -> Euclidean norms over the last axis."""
    return x.double().pow(2).sum(-1).sqrt()


class ProbeModel(ref.Model):
    """gatelab.ref.Model's attention with its keys, values, head outputs and
    gate scores kept (self.kept[l])."""

    def attention(self, l, x, rope):
        c, P = self.cfg, self.p
        pre = "layers.%d.attn." % l
        B, Ti, _ = x.shape
        H, Hkv, dh = c["n_heads"], c["n_kv_heads"], c["head_dim"]
        xn = self.norm(x, "layers.%d.attn_norm" % l)
        q, k, v = xn @ P[pre + "w_q"].t(), xn @ P[pre + "w_k"].t(), xn @ P[pre + "w_v"].t()
        gp = c["gate_pos"]
        if gp == "g2":
            v = self.gate(l, xn, v)
        q, k, v = q.reshape(B, Ti, H, dh), k.reshape(B, Ti, Hkv, dh), v.reshape(B, Ti, Hkv, dh)
        if c["qk_norm"]:
            q = ref.rmsnorm(q, P[pre + "q_norm"], c["norm_eps"])
            k = ref.rmsnorm(k, P[pre + "k_norm"], c["norm_eps"])
        if rope is not None:
            cos, sin, m = rope
            rd = ref.rope_dim(c)
            q = ref.rope_apply(q.reshape(B, Ti, -1, rd), cos, sin).reshape(B, Ti, H, dh) * m
            k = ref.rope_apply(k.reshape(B, Ti, -1, rd), cos, sin).reshape(B, Ti, Hkv, dh) * m
        rep = H // Hkv
        q = q.transpose(1, 2)
        k = k.repeat_interleave(rep, dim=2).transpose(1, 2)  # [B, H, Ti, dh]
        v = v.repeat_interleave(rep, dim=2).transpose(1, 2)
        mask = torch.ones(Ti, Ti, dtype=torch.bool).tril()[None, None]
        s = q @ k.transpose(-1, -2) / math.sqrt(dh)
        a, slot = self.normalise(l, s, q, mask)
        y = (a @ v).transpose(1, 2)
        if c["y_mod"] == "rmsnorm":
            y = ref.rmsnorm(y, P[pre + "y_norm"].reshape(H, dh), c["norm_eps"])
        elif c["y_mod"] == "silu":
            y = F.silu(y)
        y = y.reshape(B, Ti, H * dh)
        gates = None
        if gp in ("g1", "g2"):  # the scores: the mult gate applied to ones
            gates = self.gate(l, xn, torch.ones(B, Ti, (H if gp == "g1" else Hkv) * dh,
                                                dtype=y.dtype))
        if gp == "g1":
            y = self.gate(l, xn, y)
        self.kept.append((k, v, y.reshape(B, Ti, H, dh).transpose(1, 2), gates))
        return y @ P[pre + "w_o"].t()

    def forward(self, tokens):
        self.kept = []
        return super().forward(tokens)


def trained_case(f, name, vid, cfg, seed):
    g, params, tok = mf.model_case(f, name, vid, cfg, seed)
    m = ProbeModel(cfg, params)
    e = cfg["sink_token"]
    with torch.no_grad():
        m.forward(tok)
        K = torch.stack([norms(k[:, :, e:]).mean(0) for k, _, _, _ in m.kept])
        V = torch.stack([norms(v[:, :, e:]).mean(0) for _, v, _, _ in m.kept])
        O = torch.stack([norms(y[:, :, e:]).mean(0) for _, _, y, _ in m.kept])
        mf.put(g, "key_norm", K.numpy())
        mf.put(g, "value_norm", V.numpy())
        mf.put(g, "head_out_norm", O.numpy())
        if m.kept[0][3] is not None:
            sc = [gs[:, e:].double() for _, _, _, gs in m.kept]  # [B, T, channels]
            mf.put(g, "gate_first", np.array([float(s[:, 0].mean()) for s in sc]))
            mf.put(g, "gate_rest", np.array([float(s[:, 1:].mean()) for s in sc]))
        H, Hkv, dh = cfg["n_heads"], cfg["n_kv_heads"], cfg["head_dim"]
        er = np.zeros((cfg["n_layers"], H))
        for l in range(cfg["n_layers"]):
            wv, wo = params["layers.%d.attn.w_v" % l], params["layers.%d.attn.w_o" % l]
            for h in range(H):
                gi = h // (H // Hkv)
                er[l, h] = erank(wo[:, h * dh:(h + 1) * dh] @ wv[gi * dh:(gi + 1) * dh])
        mf.put(g, "ov_erank", er)
    print("%-24s done" % name)


class Keep:
    """hff.causal_attention with its keys, values and outputs kept."""

    def __init__(self, inner):
        self.inner, self.kept = inner, []

    def __call__(self, q, k, v):
        o, p = self.inner(q, k, v)
        self.kept.append((k, v, o))
        return o, p


def hf_maps(family, cfg, W, l, h):
    """Head h's O (d x dh) and V (dh x d) of layer l, as the modeling files use them."""
    if family.startswith("gpt2"):
        d = cfg["n_embd"]
        dh = d // cfg["n_head"]
        p = "transformer.h.%d." % l
        wa, wp = W[p + "attn.c_attn.weight"], W[p + "attn.c_proj.weight"]  # Conv1D [in, out]
        return wp[h * dh:(h + 1) * dh].t(), wa[:, 2 * d + h * dh:2 * d + (h + 1) * dh].t()
    if family == "neox":
        d = cfg["hidden_size"]
        dh = d // cfg["num_attention_heads"]
        p = "gpt_neox.layers.%d.attention." % l
        qkv = W[p + "query_key_value.weight"]
        return W[p + "dense.weight"][:, h * dh:(h + 1) * dh], qkv[h * 3 * dh + 2 * dh:(h + 1) * 3 * dh]
    H = cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads", H)
    dh = cfg.get("head_dim", cfg["hidden_size"] // H)
    p = "model.layers.%d.self_attn." % l
    gi = h // (H // Hkv)
    return (W[p + "o_proj.weight"][:, h * dh:(h + 1) * dh],
            W[p + "v_proj.weight"][gi * dh:(gi + 1) * dh])


def hf_case(name):
    family, cfg, dtype, _ = mhf.FIXTURES[name]
    g = torch.Generator().manual_seed(sum(map(ord, name)))  # as make_hf_fixtures.build
    if family in ("llama", "qwen2", "qwen3"):
        W = mhf.weights_llama(cfg, family, g)
    elif family.startswith("gpt2"):
        W = mhf.weights_gpt2(cfg, "transformer.", g)
    else:
        W = mhf.weights_neox(cfg, g)
    ids = torch.randint(0, cfg["vocab_size"], (mhf.T_TOK,), generator=g)
    Wr = mhf.rounded(W, dtype)
    keep = Keep(hff.causal_attention)
    hff.causal_attention = keep
    with torch.no_grad():
        if family in ("llama", "qwen2", "qwen3"):
            logits, _, gates, _ = hff.forward_llama(cfg, Wr, ids, family)
        elif family.startswith("gpt2"):
            logits, _, gates, _ = hff.forward_gpt2(cfg, Wr, ids, "transformer.")
        else:
            logits, _, gates, _ = hff.forward_neox(cfg, Wr, ids)
    hff.causal_attention = keep.inner
    d = os.path.join(HERE, "hf", name)
    with h5py.File(os.path.join(d, "expected.h5"), "r") as f:
        assert np.array_equal(f["tokens"][()], ids.numpy()), name + ": tokens differ"
        assert np.allclose(f["logits"][()], logits.numpy(), atol=1e-4), name + ": weights differ"
    T = len(ids)
    K = torch.stack([norms(k) for k, _, _ in keep.kept])  # k [H, T, dh] after repeat_kv
    V = torch.stack([norms(v) for _, v, _ in keep.kept])
    O = []
    for l, (_, _, o) in enumerate(keep.kept):  # o [T, H, dh], gated after
        if gates:
            o = o * gates[l].reshape(T, o.shape[1], -1)
        O.append(norms(o).t())
    L, H = K.shape[0], K.shape[1]
    er = np.array([[erank(torch.mm(*hf_maps(family, cfg, Wr, l, h))) for h in range(H)]
                   for l in range(L)])
    with h5py.File(os.path.join(d, "head_probe.h5"), "w") as f:
        f.create_dataset("key_norm", data=K.numpy())
        f.create_dataset("value_norm", data=V.numpy())
        f.create_dataset("head_out_norm", data=torch.stack(O).numpy())
        f.create_dataset("ov_erank", data=er)
        if gates:
            f.create_dataset("gate_first", data=np.array([float(s[0].mean()) for s in gates]))
            f.create_dataset("gate_rest", data=np.array([float(s[1:].mean()) for s in gates]))
    print("%-32s done" % name)


def main():
    torch.set_num_threads(1)
    cases = {name: (vid, cfg) for name, vid, cfg in mf.cases()}
    path = os.path.join(HERE, "fixtures", "headprobe", "headprobe.h5")
    with h5py.File(path + ".tmp", "w", libver="latest") as f:
        f.attrs["generator"] = "tests/reference/make_head_probe_fixtures.py, torch %s, seed %d" % (
            torch.__version__, SEED)
        for k, name in enumerate(CASES):
            vid, cfg = cases[name]
            trained_case(f, name, vid, cfg, SEED + k)
    os.replace(path + ".tmp", path)
    for name in HF_CASES:
        hf_case(name)


if __name__ == "__main__":
    main()
