#!/usr/bin/python3
"""afmoe_reference.py: tiny random AfmoeForCausalLM checkpoints (Arcee's
Trinity layout: dense layers, then MoE layers where num_dense_layers is
below num_hidden_layers) and their float64 plain-PyTorch forward
(no `transformers`), into tests/reference/hf/afmoe-* (expected.h5 as
make_hf_fixtures.py writes it, with `gates`: each layer's applied gate
scores [T, H*head_dim]). Written from modeling_afmoe.py (transformers
commit d4037deb) and configuration_afmoe.py (commit 4e4671e3):

  * AfmoeRMSNorm: w * x / sqrt(mean(x^2) + eps), plain w;
  * embeddings times sqrt(hidden_size) when mup_enabled;
  * each layer: input_layernorm, attention, post_attention_layernorm of
    its output, residual add; pre_mlp_layernorm, the dense SwiGLU MLP
    (down(silu(gate(x)) * up(x))) on the first num_dense_layers layers,
    on the others the MoE block (moe below), post_mlp_layernorm of its
    output, residual add;
  * MoE (AfmoeMoE): scores s = sigmoid(x @ router.gate.weight^T) per
    expert, or under score_func "softmax" the softmax of those logits over
    all experts (the Trinity checkpoints' modeling_afmoe.py reads
    score_func and route_norm); each token's num_experts_per_tok experts
    are the largest s + expert_bias (the bias only chooses); their weights
    the chosen s, over their sum (+1e-20) under sigmoid with route_norm
    (true), times route_scale; the output is the shared
    experts' SwiGLU (num_shared_experts * moe_intermediate_size units, one
    module) plus each chosen expert's SwiGLU
    (mlp.experts.<e>.{gate,up,down}_proj) times its weight;
  * attention: bias-free q/k/v/o_proj; q_norm and k_norm per head; RoPE
    (rotate_half, rope_theta) only on the layers layer_types names
    sliding_attention (default: all but every global_attn_every_n_layers-th),
    which also mask keys j <= t - sliding_window; none on the
    full_attention layers; GQA; logits q k^T head_dim^-1/2; the heads'
    outputs [T, H*dh] times sigmoid(gate_proj(h)) elementwise, then o_proj;
  * the final norm and the untied lm_head.

Run in float64 on the checkpoint's rounded weights.
Regenerate:  /usr/bin/python3 tests/reference/afmoe_reference.py
"""
import os
import sys

import torch

from hf_forwards import causal_attention, exp_softmax, moe_sum, repeat_heads, rms_norm, slides, swiglu, turn
from make_hf_fixtures import build_family, mat, vec, weights_moe, weights_swiglu

HERE = os.path.dirname(os.path.abspath(__file__))


def layer_kinds(cfg):
    """True for each layer that slides (and turns by RoPE)."""
    n = cfg.get("global_attn_every_n_layers", 4)
    return [slides(cfg, l, n) for l in range(cfg["num_hidden_layers"])]


def attention(cfg, W, p, h, slide):
    T = h.shape[0]
    H, Hkv, dh, eps = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"], cfg["rms_norm_eps"]
    q = (h @ W[p + "self_attn.q_proj.weight"].T).view(T, H, dh)
    k = (h @ W[p + "self_attn.k_proj.weight"].T).view(T, Hkv, dh)
    q = rms_norm(q, W[p + "self_attn.q_norm.weight"], eps, divide=True)
    k = rms_norm(k, W[p + "self_attn.k_norm.weight"], eps, divide=True)
    v = (h @ W[p + "self_attn.v_proj.weight"].T).view(T, Hkv, dh)
    q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
    if slide:
        theta = cfg.get("rope_theta", 10000.0)
        q, k = turn(q, theta, dh), turn(k, theta, dh)
    window = cfg["sliding_window"] if slide else None
    o, a = causal_attention(q, repeat_heads(k, H), repeat_heads(v, H), window, softmax=exp_softmax)
    o = o.reshape(T, H * dh)
    gate = 1.0 / (1.0 + torch.exp(-(h @ W[p + "self_attn.gate_proj.weight"].T)))
    return (o * gate) @ W[p + "self_attn.o_proj.weight"].T, a, gate


MARGINS = []  # each routed token's gap between its k-th and (k+1)-th choice


def moe(cfg, W, p, h):
    """AfmoeMoE of h [T, d]: shared experts plus the chosen experts, weighted."""
    z = h @ W[p + "router.gate.weight"].T
    softmax = cfg.get("score_func", "sigmoid") == "softmax"
    s = torch.softmax(z, dim=-1) if softmax else 1.0 / (1.0 + torch.exp(-z))
    renorm = not softmax and cfg.get("route_norm", True)
    key = s + W[p + "expert_bias"]
    y = swiglu(W, p + "shared_experts.", h) if cfg["num_shared_experts"] else None
    return moe_sum(h, s, key, cfg["num_experts_per_tok"], lambda e, x: swiglu(W, p + "experts.%d." % e, x),
                   renorm, cfg["route_scale"], y, MARGINS)


def forward_afmoe(cfg, W, ids):
    """logits [T, V], maps [L][H, T, T], gates [L][T, H*dh], block outputs [L][T, d]."""
    eps = cfg["rms_norm_eps"]
    x = W["model.embed_tokens.weight"][ids]
    if cfg.get("mup_enabled"):
        x = x * cfg["hidden_size"] ** 0.5
    maps, gates, hidden = [], [], []
    for l, slide in enumerate(layer_kinds(cfg)):
        p = "model.layers.%d." % l
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps, divide=True)
        o, a, g = attention(cfg, W, p, h, slide)
        x = x + rms_norm(o, W[p + "post_attention_layernorm.weight"], eps, divide=True)
        h = rms_norm(x, W[p + "pre_mlp_layernorm.weight"], eps, divide=True)
        y = moe(cfg, W, p + "mlp.", h) if l >= cfg["num_dense_layers"] else swiglu(W, p + "mlp.", h)
        x = x + rms_norm(y, W[p + "post_mlp_layernorm.weight"], eps, divide=True)
        maps.append(a), gates.append(g), hidden.append(x)
    logits = rms_norm(x, W["model.norm.weight"], eps, divide=True) @ W["lm_head.weight"].T
    return logits, maps, gates, hidden


def weights_afmoe(cfg, g):
    d, H, V, ff = cfg["hidden_size"], cfg["num_attention_heads"], cfg["vocab_size"], cfg["intermediate_size"]
    Hkv, dh = cfg["num_key_value_heads"], cfg["head_dim"]
    W = {"model.embed_tokens.weight": torch.randn(V, d, generator=g) * (0.3 if cfg.get("mup_enabled") else 1.0),
         "model.norm.weight": vec(g, d, 1.0), "lm_head.weight": mat(g, V, d)}
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        for n in ("input_layernorm", "post_attention_layernorm", "pre_mlp_layernorm", "post_mlp_layernorm"):
            W[p + n + ".weight"] = vec(g, d, 1.0, 0.2)
        for n, rows, sc in (("q", H * dh, 1.5), ("k", Hkv * dh, 1.5), ("v", Hkv * dh, 1.0), ("gate", H * dh, 2.0)):
            W[p + "self_attn.%s_proj.weight" % n] = mat(g, rows, d, sc)
        W[p + "self_attn.o_proj.weight"] = mat(g, d, H * dh)
        W[p + "self_attn.q_norm.weight"] = vec(g, dh, 1.0, 0.3)
        W[p + "self_attn.k_norm.weight"] = vec(g, dh, 1.0, 0.3)
        if l >= cfg["num_dense_layers"]:
            mf = cfg["moe_intermediate_size"]
            weights_moe(W, g, p + "mlp.", d, cfg["num_experts"], mf, "router.gate.weight", "expert_bias",
                        mf * cfg["num_shared_experts"])
        else:
            weights_swiglu(W, g, p + "mlp.", ff, d)
    return W


def afmoe_cfg(**kw):
    c = {"architectures": ["AfmoeForCausalLM"], "model_type": "afmoe", "hidden_size": 32,
         "num_hidden_layers": 3, "num_dense_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
         "head_dim": 8, "intermediate_size": 48, "moe_intermediate_size": 16, "num_experts": 4,
         "num_experts_per_tok": 2, "num_shared_experts": 1, "route_scale": 1.0, "vocab_size": 128,
         "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
         "sliding_window": 4, "global_attn_every_n_layers": 3, "mup_enabled": True, "hidden_act": "silu",
         "tie_word_embeddings": False, "bos_token_id": 2, "torch_dtype": "float32"}
    c.update(kw)
    return c


# name: (config, dtype, shards). afmoe-f32 slides over 4 keys on layers 0
# and 1 (RoPE there), layer 2 full without RoPE, embeddings scaled (mup);
# afmoe-bf16-sharded names its layer_types (sliding, full, sliding) over 64
# keys, no mup; both every layer dense. afmoe-moe-f32: layer 0 dense,
# layers 1 and 2 MoE (4 experts, 2 a token, one shared expert, route_scale
# 2.5); afmoe-moe-bf16-sharded: layer 0 dense, layers 1 to 3 MoE (6
# experts, 3 a token, two shared experts), mup, over 64 keys.
# afmoe-moe-softmax-f32: layer 0 dense, layers 1 and 2 MoE (6 experts, 3
# a token, one shared expert, route_scale 2.5) under score_func "softmax";
# afmoe-moe-nonorm-bf16: the sigmoid scores without route_norm, 6
# experts, 3 a token, route_scale 2.5.
FIXTURES = {
    "afmoe-f32": (afmoe_cfg(), "F32", 1),
    "afmoe-bf16-sharded": (afmoe_cfg(sliding_window=64, mup_enabled=False, global_attn_every_n_layers=None,
                                     layer_types=["sliding_attention", "full_attention", "sliding_attention"]),
                           "BF16", 2),
    "afmoe-moe-f32": (afmoe_cfg(num_dense_layers=1, route_scale=2.5), "F32", 1),
    "afmoe-moe-bf16-sharded": (afmoe_cfg(num_hidden_layers=4, num_dense_layers=1, num_experts=6,
                                         num_experts_per_tok=3, num_shared_experts=2, sliding_window=64,
                                         global_attn_every_n_layers=2), "BF16", 3),
    "afmoe-moe-softmax-f32": (afmoe_cfg(num_dense_layers=1, num_experts=6, num_experts_per_tok=3, route_scale=2.5,
                                        score_func="softmax"), "F32", 1),
    "afmoe-moe-nonorm-bf16": (afmoe_cfg(num_dense_layers=1, num_experts=6, num_experts_per_tok=3,
                                        route_scale=2.5, score_func="sigmoid", route_norm=False), "BF16", 1),
}


def build(name, cfg, dtype, shards, out_root):
    build_family(name, cfg, dtype, shards, out_root, weights_afmoe, forward_afmoe, "gates", MARGINS)


def main():
    torch.set_num_threads(1)
    for name, (cfg, dtype, shards) in FIXTURES.items():
        build(name, cfg, dtype, shards, os.path.join(HERE, "hf"))


if __name__ == "__main__":
    sys.exit(main())
