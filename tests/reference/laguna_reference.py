#!/usr/bin/python3
"""laguna_reference.py: tiny random LagunaForCausalLM checkpoints (Poolside's
Laguna: dense layers, then MoE layers as mlp_layer_types says) and their
float64 plain-PyTorch forward (no `transformers`), into
tests/reference/hf/laguna-* (expected.h5 as make_hf_fixtures.py writes it,
with `gates`: each layer's applied gate scores [T, H], one a head).
Written from modeling_laguna.py (transformers commit ca5ff0b0) and
configuration_laguna.py:

  * LagunaRMSNorm: w * x / sqrt(mean(x^2) + eps), plain w;
  * each layer: input_layernorm, attention, residual add;
    post_attention_layernorm, the MLP, residual add; the MLP is the dense
    SwiGLU (down(silu(gate(x)) * up(x))) on the layers mlp_layer_types
    names "dense", the MoE block (moe below) on the "sparse" ones;
  * MoE (LagunaSparseMoeBlock): router logits z = x @ gate.weight^T,
    capped to c tanh(z / c) when moe_router_logit_softcapping c > 0;
    scores s = sigmoid(z); each token's num_experts_per_tok experts are
    the largest s + gate.e_score_correction_bias (the bias only chooses);
    their weights the chosen s over their sum; the output is the chosen
    experts' SwiGLU (mlp.experts.<e>.{gate,up,down}_proj) times their
    weights, summed, times moe_routed_scaling_factor, plus the shared
    expert's SwiGLU (shared_expert_intermediate_size units); the experts
    either a tensor per expert, or stacked as LagunaExperts holds them
    (experts.gate_up_proj [E, 2 * moe_intermediate_size, d]: gate, up =
    (x @ gate_up_proj[e]^T).chunk(2); experts.down_proj [E, d,
    moe_intermediate_size]), the correction bias then under
    experts.e_score_correction_bias and the shared expert under
    shared_expert. (the names of Poolside's published checkpoints);
  * attention: q/k/v/o_proj (biases under attention_bias); q_norm and
    k_norm per head; RoPE (rotate_half over the first
    int(head_dim * partial_rotary_factor) dims) with each layer type's
    own rope_parameters entry (full_attention: rope_theta 500000 on half
    the dims; sliding_attention: 10000 on all of them by default); the
    sliding layers mask keys j <= t - sliding_window; GQA; logits
    q k^T head_dim^-1/2; each head's output [T, H, dh] times
    softplus(g_proj(h)) [T, H], then o_proj; each layer at its own H
    (num_attention_heads_per_layer, else num_attention_heads), its
    q/o/g_proj shaped by it; a layer's maps [H, T, T] and gates [T, H]
    stored at the largest H, the heads it lacks NaN;
  * the final norm and the untied lm_head.

Run in float64 on the checkpoint's rounded weights.
Regenerate:  /usr/bin/python3 tests/reference/laguna_reference.py [--out DIR] [NAME...]
"""
import os
import sys

import torch
import torch.nn.functional as F

from hf_forwards import causal_attention, exp_softmax, moe_sum, repeat_heads, rms_norm, silu_mul, swiglu, turn
from make_hf_fixtures import build_family, mat, vec, weights_moe, weights_swiglu

HERE = os.path.dirname(os.path.abspath(__file__))
ROPE_DEFAULTS = {"full_attention": (500000.0, 0.5), "sliding_attention": (10000.0, 1.0)}


def layer_types(cfg):
    return cfg.get("layer_types") or ["full_attention"] * cfg["num_hidden_layers"]


def heads_of(cfg, l):
    """Layer l's query heads."""
    per = cfg.get("num_attention_heads_per_layer")
    return per[l] if per else cfg["num_attention_heads"]


def most_heads(cfg):
    return max(heads_of(cfg, l) for l in range(cfg["num_hidden_layers"]))


def pad_heads(x, H, dim):
    """x with NaN heads appended along dim up to H."""
    if x.shape[dim] == H:
        return x
    shape = list(x.shape)
    shape[dim] = H - x.shape[dim]
    return torch.cat((x, torch.full(shape, float("nan"), dtype=x.dtype)), dim=dim)


def mlp_types(cfg):
    return cfg.get("mlp_layer_types") or ["dense"] + ["sparse"] * (cfg["num_hidden_layers"] - 1)


def rope_of(cfg, kind):
    """(base, rotary dims) of the layers of type kind."""
    base, frac = ROPE_DEFAULTS[kind]
    e = (cfg.get("rope_parameters") or {}).get(kind) or {}
    return e.get("rope_theta", base), int(cfg["head_dim"] * e.get("partial_rotary_factor", frac))


def attention(cfg, W, p, h, kind, H):
    T = h.shape[0]
    Hkv, dh, eps = cfg["num_key_value_heads"], cfg["head_dim"], cfg["rms_norm_eps"]

    def proj(n, rows):
        y = h @ W[p + "self_attn.%s_proj.weight" % n].T
        return y + W[p + "self_attn.%s_proj.bias" % n] if cfg.get("attention_bias") else y

    q = rms_norm(proj("q", H).view(T, H, dh), W[p + "self_attn.q_norm.weight"], eps, divide=True)
    k = rms_norm(proj("k", Hkv).view(T, Hkv, dh), W[p + "self_attn.k_norm.weight"], eps, divide=True)
    q, k = q.transpose(0, 1), k.transpose(0, 1)
    v = proj("v", Hkv).view(T, Hkv, dh).transpose(0, 1)
    theta, rd = rope_of(cfg, kind)
    q, k = turn(q, theta, rd), turn(k, theta, rd)
    window = cfg["sliding_window"] if kind == "sliding_attention" else None
    o, a = causal_attention(q, repeat_heads(k, H), repeat_heads(v, H), window, softmax=exp_softmax)
    gate = F.softplus(h @ W[p + "self_attn.g_proj.weight"].T)  # [T, H]
    o = (o * gate[:, :, None]).reshape(T, H * dh)
    y = o @ W[p + "self_attn.o_proj.weight"].T
    if cfg.get("attention_bias"):
        y = y + W[p + "self_attn.o_proj.bias"]
    return y, a, gate


def expert(W, p, e, h):
    """Routed expert e of the MoE block at prefix p on h: its own tensors,
    or its slabs of the stacked experts.gate_up_proj / experts.down_proj."""
    if p + "experts.gate_up_proj" not in W:
        return swiglu(W, p + "experts.%d." % e, h)
    gate, up = (h @ W[p + "experts.gate_up_proj"][e].T).chunk(2, dim=-1)
    return silu_mul(gate, up) @ W[p + "experts.down_proj"][e].T


MARGINS = []  # each routed token's gap between its k-th and (k+1)-th choice


def moe(cfg, W, p, h):
    """LagunaSparseMoeBlock of h [T, d]."""
    cap = cfg.get("moe_router_logit_softcapping", 0.0)
    z = h @ W[p + "gate.weight"].T
    if cap > 0:
        z = cap * torch.tanh(z / cap)
    s = torch.sigmoid(z)
    key = s + W.get(p + "gate.e_score_correction_bias", W.get(p + "experts.e_score_correction_bias"))
    routed = moe_sum(h, s, key, cfg["num_experts_per_tok"], lambda e, x: expert(W, p, e, x), margins=MARGINS)
    shared = p + ("shared_experts." if p + "shared_experts.gate_proj.weight" in W else "shared_expert.")
    return routed * cfg.get("moe_routed_scaling_factor", 1.0) + swiglu(W, shared, h)


def forward_laguna(cfg, W, ids):
    """logits [T, V], maps [L][H, T, T], gates [L][T, H] (H the most heads a
    layer has, a layer's absent heads NaN), block outputs [L][T, d]."""
    eps, Hm = cfg["rms_norm_eps"], most_heads(cfg)
    x = W["model.embed_tokens.weight"][ids]
    maps, gates, hidden = [], [], []
    for l, (kind, mt) in enumerate(zip(layer_types(cfg), mlp_types(cfg))):
        p = "model.layers.%d." % l
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps, divide=True)
        o, a, g = attention(cfg, W, p, h, kind, heads_of(cfg, l))
        x = x + o
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps, divide=True)
        x = x + (moe(cfg, W, p + "mlp.", h) if mt == "sparse" else swiglu(W, p + "mlp.", h))
        maps.append(pad_heads(a, Hm, 0)), gates.append(pad_heads(g, Hm, 1)), hidden.append(x)
    logits = rms_norm(x, W["model.norm.weight"], eps, divide=True) @ W["lm_head.weight"].T
    return logits, maps, gates, hidden


def weights_laguna(cfg, g):
    d, V, ff = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
    Hkv, dh = cfg["num_key_value_heads"], cfg["head_dim"]
    W = {"model.embed_tokens.weight": torch.randn(V, d, generator=g),
         "model.norm.weight": vec(g, d, 1.0), "lm_head.weight": mat(g, V, d)}
    for l, mt in enumerate(mlp_types(cfg)):
        p, H = "model.layers.%d." % l, heads_of(cfg, l)
        for n in ("input_layernorm", "post_attention_layernorm"):
            W[p + n + ".weight"] = vec(g, d, 1.0, 0.2)
        for n, rows, sc in (("q", H * dh, 1.5), ("k", Hkv * dh, 1.5), ("v", Hkv * dh, 1.0), ("g", H, 2.0)):
            W[p + "self_attn.%s_proj.weight" % n] = mat(g, rows, d, sc)
            if cfg.get("attention_bias") and n != "g":
                W[p + "self_attn.%s_proj.bias" % n] = vec(g, rows, 0.0, 0.2)
        W[p + "self_attn.o_proj.weight"] = mat(g, d, H * dh)
        if cfg.get("attention_bias"):
            W[p + "self_attn.o_proj.bias"] = vec(g, d, 0.0, 0.2)
        W[p + "self_attn.q_norm.weight"] = vec(g, dh, 1.0, 0.3)
        W[p + "self_attn.k_norm.weight"] = vec(g, dh, 1.0, 0.3)
        if mt == "sparse":
            weights_moe(W, g, p + "mlp.", d, cfg["num_experts"], cfg["moe_intermediate_size"], "gate.weight",
                        "gate.e_score_correction_bias", cfg["shared_expert_intermediate_size"])
        else:
            weights_swiglu(W, g, p + "mlp.", ff, d)
    return W


def stacked(W, cfg):
    """W with each MoE layer's routed experts stacked (gate_up_proj: each
    expert's gate rows, then its up rows; down_proj), its correction bias
    under experts. and its shared expert under shared_expert."""
    out = {}
    for name, t in W.items():
        if ".mlp.experts." in name and name.split(".mlp.experts.")[1][0].isdigit():
            continue
        out[name.replace("mlp.gate.e_score_correction_bias", "mlp.experts.e_score_correction_bias")
            .replace("mlp.shared_experts.", "mlp.shared_expert.")] = t
    for l, mt in enumerate(mlp_types(cfg)):
        if mt != "sparse":
            continue
        p = "model.layers.%d.mlp.experts." % l
        E = range(cfg["num_experts"])
        out[p + "gate_up_proj"] = torch.stack([torch.cat((W[p + "%d.gate_proj.weight" % e],
                                                          W[p + "%d.up_proj.weight" % e])) for e in E])
        out[p + "down_proj"] = torch.stack([W[p + "%d.down_proj.weight" % e] for e in E])
    return out


def laguna_cfg(**kw):
    c = {"architectures": ["LagunaForCausalLM"], "model_type": "laguna", "hidden_size": 32,
         "num_hidden_layers": 3, "num_attention_heads": 4, "num_attention_heads_per_layer": [4, 4, 4],
         "num_key_value_heads": 2, "head_dim": 8, "intermediate_size": 48, "moe_intermediate_size": 16,
         "shared_expert_intermediate_size": 24, "num_experts": 4, "num_experts_per_tok": 2,
         "moe_routed_scaling_factor": 2.5, "moe_router_logit_softcapping": 3.0,
         "mlp_layer_types": ["dense", "sparse", "sparse"],
         "layer_types": ["sliding_attention", "sliding_attention", "full_attention"],
         "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 500000.0,
                                                "partial_rotary_factor": 0.5},
                             "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0,
                                                   "partial_rotary_factor": 1.0}},
         "vocab_size": 128, "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "sliding_window": 4,
         "attention_bias": False, "gating": True, "hidden_act": "silu", "tie_word_embeddings": False,
         "bos_token_id": 2, "torch_dtype": "float32"}
    c.update(kw)
    return c


# name: (config, dtype, shards). laguna-f32: layers 0 and 1 slide over 4
# keys (RoPE on all 8 dims, base 10000), layer 2 full (RoPE on 4 dims,
# base 500000); layer 0 dense, layers 1 and 2 MoE (4 experts, 2 a token,
# router logits capped at 3, routed sum times 2.5, a shared expert of 24
# units). laguna-bf16-sharded: LagunaConfig's RoPE defaults (no
# rope_parameters), sliding and full layers alternating over 64 keys,
# q/k/v/o biases, layers 0 and 1 dense, 2 and 3 MoE (6 experts, 3 a
# token, no cap, scaling 1). laguna-stacked-f32: laguna-f32's shape with
# the experts stacked, the correction bias under mlp.experts. and the
# shared expert under mlp.shared_expert.; laguna-stacked-bf16: the same
# in BF16 with 6 experts, 3 a token. laguna-heads-f32: laguna-f32 with each
# layer's own query heads (num_attention_heads_per_layer 4, 6, 2 over 2 KV
# heads: the sliding layers more than the full one, layer 0 fewer than
# the most).
FIXTURES = {
    "laguna-f32": (laguna_cfg(), "F32", 1),
    "laguna-bf16-sharded": (laguna_cfg(num_hidden_layers=4, num_attention_heads_per_layer=None,
                                       rope_parameters=None, sliding_window=64, attention_bias=True,
                                       layer_types=["sliding_attention", "full_attention"] * 2,
                                       mlp_layer_types=["dense", "dense", "sparse", "sparse"],
                                       num_experts=6, num_experts_per_tok=3, moe_routed_scaling_factor=None,
                                       moe_router_logit_softcapping=None, gating="per-head"), "BF16", 3),
    "laguna-stacked-f32": (laguna_cfg(), "F32", 1),
    "laguna-stacked-bf16": (laguna_cfg(num_experts=6, num_experts_per_tok=3), "BF16", 1),
    "laguna-heads-f32": (laguna_cfg(num_attention_heads=6, num_attention_heads_per_layer=[4, 6, 2]), "F32", 1),
}


def build(name, cfg, dtype, shards, out_root):
    weights = (lambda c, g: stacked(weights_laguna(c, g), c)) if "stacked" in name else weights_laguna
    build_family(name, cfg, dtype, shards, out_root, weights, forward_laguna, "gates", MARGINS)


def main():
    """Every fixture into tests/reference/hf, or those named on the command
    line into the directory given by --out (default the same)."""
    torch.set_num_threads(1)
    args, out = sys.argv[1:], os.path.join(HERE, "hf")
    if len(args) >= 2 and args[0] == "--out":
        out, args = args[1], args[2:]
    for name, (cfg, dtype, shards) in FIXTURES.items():
        if not args or name in args:
            build(name, cfg, dtype, shards, out)


if __name__ == "__main__":
    sys.exit(main())
