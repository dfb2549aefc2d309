#!/usr/bin/python3
"""step3p5_reference.py: tiny random Step3p5ForCausalLM checkpoints (StepFun's
Step-3.5-Flash: dense layers, then MoE layers with a shared expert) and
their float64 plain-PyTorch forward (no `transformers`), into
tests/reference/hf/step3p5-* (expected.h5 as make_hf_fixtures.py writes it,
with `gates`: each layer's applied gate scores [T, H], one a head; H the
most query heads a layer has, the heads a layer lacks NaN in its maps and
gates). Written from StepFun's modeling as transformers' generated
modeling_step3p7.py at commit a7b81df expands it (Step3p7TextConfig,
model_type "step3p5"; docs/pretrained.md):

  * Step3p7RMSNorm (Gemma3RMSNorm): (1 + w) * x / sqrt(mean(x^2) + eps);
  * each layer: input_layernorm, attention, residual add;
    post_attention_layernorm, the MLP, residual add; the MLP is the dense
    SwiGLU (mlp.) on the layers mlp_layer_types (else moe_layers_enum)
    leaves dense, on the others the routed experts (moe.) plus the shared
    expert (share_expert.); the dense MLP and the shared expert
    (Step3p7MLP) clamp at layer l's swiglu_limits_shared[l] c (null or 0:
    none) after SiLU: min(silu(gate), c) * clamp(up, -c, c);
  * the router (Step3p7MoEMLP): z = x @ moe.gate.weight^T; with
    use_moe_router_bias s = sigmoid(z), the moe_top_k largest s +
    moe.router_bias chosen, weighed by s over their sum (+ 1e-20); else
    the softmax of z over every expert, its top k weighed unnormalised;
    both times moe_router_scaling_factor;
  * a routed expert (Step3p7MoEMLP.get_expert_output): gate, up =
    (x @ gate_up_proj[e]^T).chunk(2), min(silu(gate), c) * clamp(up, -c, c)
    @ down_proj[e]^T for c layer l's swiglu_limits[l] (null or 0: none);
    the legacy checkpoints' moe.{gate,up,down}_proj.weight [E, out, in]
    the same slabs;
  * attention: q/k/v/o_proj bias-free, the sliding layers' head counts
    from attention_other_setting (g_proj one output a head of the layer); q_norm and k_norm per head ((1 + w));
    RoPE (rotate_half over the first int(head_dim * partial_rotary_factors
    [l]) dims) on base rope_theta[l] (a list) or rope_theta; sliding layers
    mask keys j <= t - sliding_window; GQA; logits q k^T head_dim^-1/2;
    each head's output times sigmoid(g_proj(h)) [T, H], then o_proj;
  * the final norm and the untied lm_head.

Run in float64 on the checkpoint's rounded weights; CLAMPS counts, by
MLP kind, the activations each limit cut (each fixture must cut some
where its NEEDS says).
Regenerate:  /usr/bin/python3 tests/reference/step3p5_reference.py
"""
import os
import sys

import torch

from hf_forwards import causal_attention, exp_softmax, moe_sum, repeat_heads, rms_norm, swiglu, turn
from laguna_reference import pad_heads
from make_hf_fixtures import build_family, mat, vec, weights_swiglu

HERE = os.path.dirname(os.path.abspath(__file__))
MARGINS = []  # each routed token's gap between its k-th and (k+1)-th choice
CLAMPS = {"routed": 0, "shared": 0, "dense": 0}  # silu(gate) or up values past their limit


def per_layer(v, L):
    """v normalised as the config does: extended with its last entry, cut at L."""
    return None if v is None else (list(v) + [v[-1]] * L)[:L]


def layer_types(cfg):
    return per_layer(cfg.get("layer_types"), cfg["num_hidden_layers"])


def sparse(cfg):
    L = cfg["num_hidden_layers"]
    if cfg.get("mlp_layer_types"):
        return [t == "sparse" for t in per_layer(cfg["mlp_layer_types"], L)]
    me = cfg.get("moe_layers_enum")
    idx = [int(i) for i in me.split(",") if i.strip()] if isinstance(me, str) else me or range(3, L)
    return [l in set(idx) for l in range(L)]


def limit(cfg, key, l):
    v = per_layer(cfg.get(key), cfg["num_hidden_layers"])
    return v[l] if v and v[l] else None


def heads_of(cfg, l):
    """Layer l's query heads: attention_other_setting's on a sliding layer."""
    o = cfg["attention_other_setting"] if layer_types(cfg)[l] == "sliding_attention" else cfg
    return o["num_attention_heads"]


def clamped(c, kind):
    """The GLU min(silu(gate), c) * clamp(up, -c, c) (c None: silu(gate) *
    up), counting the values it cuts in CLAMPS[kind]."""
    def glu(gate, up):
        sg = gate / (1.0 + torch.exp(-gate))
        if c is None:
            return sg * up
        CLAMPS[kind] += int((sg > c).sum() + (up.abs() > c).sum())
        return sg.clamp(max=c) * up.clamp(-c, c)
    return glu


def attention(cfg, W, p, h, l, kind):
    T, dh, eps = h.shape[0], cfg["head_dim"], cfg["rms_norm_eps"]
    o = cfg["attention_other_setting"] if kind == "sliding_attention" else cfg
    H, Hkv = o["num_attention_heads"], o["num_attention_groups"]
    q = (h @ W[p + "self_attn.q_proj.weight"].T).view(T, H, dh)
    k = (h @ W[p + "self_attn.k_proj.weight"].T).view(T, Hkv, dh)
    q = rms_norm(q, W[p + "self_attn.q_norm.weight"], eps, one=True, divide=True)
    k = rms_norm(k, W[p + "self_attn.k_norm.weight"], eps, one=True, divide=True)
    v = (h @ W[p + "self_attn.v_proj.weight"].T).view(T, Hkv, dh).transpose(0, 1)
    th = cfg["rope_theta"]
    theta = th[min(l, len(th) - 1)] if isinstance(th, list) else th
    frac = per_layer(cfg.get("partial_rotary_factors"), cfg["num_hidden_layers"])
    rd = int(dh * (frac[l] if frac else 1.0))
    q, k = turn(q.transpose(0, 1), theta, rd), turn(k.transpose(0, 1), theta, rd)
    window = cfg["sliding_window"] if kind == "sliding_attention" else None
    out, a = causal_attention(q, repeat_heads(k, H), repeat_heads(v, H), window, softmax=exp_softmax)
    gate = torch.sigmoid(h @ W[p + "self_attn.g_proj.weight"].T)  # [T, H]
    y = (out * gate[:, :, None]).reshape(T, H * dh) @ W[p + "self_attn.o_proj.weight"].T
    return y, a, gate


def expert(W, p, e, h, c):
    """Routed expert e of the block at prefix p (moe.) on h, clamped at c."""
    if p + "experts.gate_up_proj" in W:
        gate, up = (h @ W[p + "experts.gate_up_proj"][e].T).chunk(2, dim=-1)
        down = W[p + "experts.down_proj"][e]
    else:
        gate, up = h @ W[p + "gate_proj.weight"][e].T, h @ W[p + "up_proj.weight"][e].T
        down = W[p + "down_proj.weight"][e]
    return clamped(c, "routed")(gate, up) @ down.T


def moe(cfg, W, p, h, c):
    z = h @ W[p + "gate.weight"].T
    bias = cfg.get("use_moe_router_bias")
    s = torch.sigmoid(z) if bias else torch.softmax(z, dim=-1)
    key = s + W[p + "router_bias"] if bias else s
    routed = moe_sum(h, s, key, cfg["moe_top_k"], lambda e, x: expert(W, p, e, x, c), bias, margins=MARGINS)
    return routed * cfg.get("moe_router_scaling_factor", 1.0)


def forward_step3p5(cfg, W, ids):
    """logits [T, V], maps [L][H, T, T], gates [L][T, H] (H the most heads a
    layer has, a layer's absent heads NaN), block outputs [L][T, d]."""
    eps, L = cfg["rms_norm_eps"], cfg["num_hidden_layers"]
    Hm = max(heads_of(cfg, l) for l in range(L))
    x = W["model.embed_tokens.weight"][ids]
    maps, gates, hidden = [], [], []
    for l, (kind, sp) in enumerate(zip(layer_types(cfg), sparse(cfg))):
        p = "model.layers.%d." % l
        o, a, g = attention(cfg, W, p, rms_norm(x, W[p + "input_layernorm.weight"], eps, True, True), l, kind)
        x = x + o
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps, one=True, divide=True)
        cs = limit(cfg, "swiglu_limits_shared", l)
        if sp:
            x = x + moe(cfg, W, p + "moe.", h, limit(cfg, "swiglu_limits", l))
            x = x + swiglu(W, p + "share_expert.", h, clamped(cs, "shared"))
        else:
            x = x + swiglu(W, p + "mlp.", h, clamped(cs, "dense"))
        maps.append(pad_heads(a, Hm, 0)), gates.append(pad_heads(g, Hm, 1)), hidden.append(x)
    logits = rms_norm(x, W["model.norm.weight"], eps, one=True, divide=True) @ W["lm_head.weight"].T
    return logits, maps, gates, hidden


def weights_step3p5(cfg, g, legacy=False):
    d, V, ff, dh = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"], cfg["head_dim"]
    E, mf, sf = cfg["moe_num_experts"], cfg["moe_intermediate_size"], cfg["share_expert_dim"]
    W = {"model.embed_tokens.weight": torch.randn(V, d, generator=g),
         "model.norm.weight": vec(g, d, 0.0, 0.2), "lm_head.weight": mat(g, V, d)}
    for l, (kind, sp) in enumerate(zip(layer_types(cfg), sparse(cfg))):
        p = "model.layers.%d." % l
        o = cfg["attention_other_setting"] if kind == "sliding_attention" else cfg
        H, Hkv = o["num_attention_heads"], o["num_attention_groups"]
        for n in ("input_layernorm", "post_attention_layernorm"):
            W[p + n + ".weight"] = vec(g, d, 0.0, 0.2)
        for n, rows, sc in (("q", H * dh, 1.5), ("k", Hkv * dh, 1.5), ("v", Hkv * dh, 1.0), ("g", H, 2.0)):
            W[p + "self_attn.%s_proj.weight" % n] = mat(g, rows, d, sc)
        W[p + "self_attn.o_proj.weight"] = mat(g, d, H * dh)
        W[p + "self_attn.q_norm.weight"] = vec(g, dh, 0.0, 0.3)
        W[p + "self_attn.k_norm.weight"] = vec(g, dh, 0.0, 0.3)
        if not sp:
            weights_swiglu(W, g, p + "mlp.", ff, d)
            continue
        W[p + "moe.gate.weight"] = mat(g, E, d, 2.0)
        if cfg.get("use_moe_router_bias"):
            W[p + "moe.router_bias"] = vec(g, E, 0.0, 0.3)
        weights_swiglu(W, g, p + "share_expert.", sf, d)
        gate, up, down = (torch.stack([mat(g, *sh, 2.0) for _ in range(E)])
                          for sh in ((mf, d), (mf, d), (d, mf)))
        if legacy:
            W[p + "moe.gate_proj.weight"], W[p + "moe.up_proj.weight"] = gate, up
            W[p + "moe.down_proj.weight"] = down
        else:
            W[p + "moe.experts.gate_up_proj"] = torch.cat((gate, up), dim=1)
            W[p + "moe.experts.down_proj"] = down
    return W


def step3p5_cfg(**kw):
    c = {"architectures": ["Step3p5ForCausalLM"], "model_type": "step3p5", "hidden_size": 32,
         "num_hidden_layers": 3, "num_attention_heads": 4, "num_attention_groups": 2, "head_dim": 8,
         "attention_other_setting": {"attention_type": "sliding_attention", "num_attention_heads": 4,
                                     "num_attention_groups": 2, "head_dim": 8},
         "intermediate_size": 48, "moe_intermediate_size": 16, "share_expert_dim": 24,
         "moe_num_experts": 4, "moe_top_k": 2, "moe_router_scaling_factor": 2.5,
         "use_moe_router_bias": True, "use_head_wise_attn_gate": True, "moe_layers_enum": "1,2",
         "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
         "rope_theta": [10000.0, 500000.0, 10000.0], "partial_rotary_factors": [1.0, 0.5, 1.0],
         "swiglu_limits": [0.0, 1.5, None], "swiglu_limits_shared": [0.0, 0.5],
         "vocab_size": 128, "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "sliding_window": 4,
         "tie_word_embeddings": False, "bos_token_id": 2, "torch_dtype": "float32"}
    c.update(kw)
    return c


# name: (config, dtype, legacy expert names, the MLP kinds whose limits
# must cut). step3p5-f32: layers 0 and 2 slide over 4 keys (RoPE on all 8
# dims, base 10000), layer 1 full (RoPE on 4 dims, base 500000), per-layer
# rope_theta and partial_rotary_factors lists; layer 0 dense, 1 and 2 MoE
# (moe_layers_enum "1,2"; 4 experts, 2 a token, sigmoid router with
# router_bias, routed sum times 2.5, a shared expert of 24 units), the
# routed SwiGLU of layer 1 clamped at 1.5, none on layer 2 (null); the
# shared experts clamped at 0.5 ([0, 0.5] extended), the dense MLP not.
# step3p5-legacy-bf16: 4 layers alternating sliding (window 64) and full,
# one rope_theta and no rotary fraction lists, layer 0 dense
# (mlp_layer_types), 6 experts, 2 a token, the softmax router, the experts
# under the legacy 3-D moe.{gate,up,down}_proj names, routed limits 1.0
# then 2.0 (the list extended). step3p5-heads-f32: step3p5-f32 with 6
# query heads on the sliding layers (0 and 2) and 4 on the full one over
# 2 key/value heads, and the dense MLP of layer 0 clamped at 0.8.
FIXTURES = {
    "step3p5-f32": (step3p5_cfg(), "F32", False, ("routed", "shared")),
    "step3p5-legacy-bf16": (step3p5_cfg(num_hidden_layers=4, moe_layers_enum=None,
                                        mlp_layer_types=["dense", "sparse", "sparse", "sparse"],
                                        layer_types=["sliding_attention", "full_attention"] * 2,
                                        sliding_window=64, rope_theta=10000.0, partial_rotary_factors=None,
                                        moe_num_experts=6, moe_top_k=2, use_moe_router_bias=False,
                                        moe_router_scaling_factor=None, swiglu_limits=[0, 1.0, 2.0]),
                            "BF16", True, ("routed", "shared")),
    "step3p5-heads-f32": (step3p5_cfg(attention_other_setting={
        "attention_type": "sliding_attention", "num_attention_heads": 6, "num_attention_groups": 2,
        "head_dim": 8}, swiglu_limits_shared=[0.8, 0.5]), "F32", False, ("routed", "shared", "dense")),
}


def main():
    torch.set_num_threads(1)
    for name, (cfg, dtype, legacy, needs) in FIXTURES.items():
        build_family(name, cfg, dtype, 1, os.path.join(HERE, "hf"),
                     lambda c, g, lg=legacy: weights_step3p5(c, g, lg), forward_step3p5, "gates", MARGINS)
        print("  values clamped: %s" % ", ".join("%s %d" % kv for kv in CLAMPS.items()))
        for kind in needs:
            assert CLAMPS[kind] > 0, "%s: no %s SwiGLU value reaches its limit" % (name, kind)
        for kind in CLAMPS:
            CLAMPS[kind] = 0


if __name__ == "__main__":
    sys.exit(main())
