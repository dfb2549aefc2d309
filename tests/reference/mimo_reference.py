#!/usr/bin/python3
"""mimo_reference.py: tiny random MiMoV2FlashForCausalLM checkpoints
(Xiaomi's MiMo-V2-Flash: full and sliding-window layers of their own head
counts, learned per-head sink biases, dense then MoE layers) and their
float64 plain-PyTorch forward (no `transformers`, no vLLM), into
tests/reference/hf/mimo-* (expected.h5 as make_hf_fixtures.py writes it,
with `slot`: each query's share to its layer's sink, 0 on the layers
without one). Written from vLLM's mimo_v2_flash.py (commit in
docs/pretrained.md):

  * RMSNorm w * x / sqrt(mean(x^2) + layernorm_epsilon);
  * each layer: input_layernorm, attention, residual add;
    post_attention_layernorm, the MLP, residual add; the MLP is the
    dense SwiGLU (mlp.) where moe_layer_freq[l] is 0, else MiMoV2MoE;
  * attention: layer l slides when hybrid_layer_pattern[l] is 1, with
    swa_num_attention_heads / swa_num_key_value_heads and base
    swa_rope_theta, keys j > t - sliding_window_size; the full layers
    num_attention_heads / num_key_value_heads, base rope_theta; q and k
    of head_dim, v of v_head_dim, v times attention_value_scale; RoPE
    (rotate_half) on the first int(head_dim * partial_rotary_factor)
    dims; logits q k^T head_dim^-1/2; on the sliding layers under
    add_swa_attention_sink_bias the head's self_attn.attention_sink_bias
    joins each row's softmax as one more logit with no value; GQA;
    o_proj from num_heads * v_head_dim, bias-free;
  * the router (vLLM's FusedMoE, scoring "sigmoid", grouped top-k with
    n_group = topk_group = 1): s = sigmoid(h @ mlp.gate.weight^T), the
    num_experts_per_tok largest s + mlp.gate.e_score_correction_bias
    chosen, weighed by s over their sum (norm_topk_prob); each expert
    mlp.experts.<e>.{gate,up,down}_proj a SwiGLU; no shared expert;
  * the final norm and the untied lm_head.

Run in float64 on the checkpoint's rounded weights.
Regenerate:  /usr/bin/python3 tests/reference/mimo_reference.py
"""
import os
import sys

import torch

from laguna_reference import pad_heads, swiglu, turn
from make_hf_fixtures import build_family, mat, vec

HERE = os.path.dirname(os.path.abspath(__file__))
MARGINS = []  # each routed token's gap between its k-th and (k+1)-th choice
SINK_SHARE = []  # the largest sink share of each sliding layer


def rms(x, w, eps):
    return w * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)


def heads(cfg, slides):
    if slides:
        return cfg["swa_num_attention_heads"], cfg["swa_num_key_value_heads"]
    return cfg["num_attention_heads"], cfg["num_key_value_heads"]


def attention(cfg, W, p, h, slides):
    T, dh, dv = h.shape[0], cfg["head_dim"], cfg["v_head_dim"]
    H, Hkv = heads(cfg, slides)
    q = (h @ W[p + "self_attn.q_proj.weight"].T).view(T, H, dh).transpose(0, 1)
    k = (h @ W[p + "self_attn.k_proj.weight"].T).view(T, Hkv, dh).transpose(0, 1)
    v = (h @ W[p + "self_attn.v_proj.weight"].T).view(T, Hkv, dv).transpose(0, 1)
    v = v * cfg["attention_value_scale"]
    theta = cfg["swa_rope_theta"] if slides else cfg["rope_theta"]
    rd = int(dh * cfg["partial_rotary_factor"])
    q, k = turn(q, theta, rd), turn(k, theta, rd)
    k, v = k.repeat_interleave(H // Hkv, dim=0), v.repeat_interleave(H // Hkv, dim=0)
    s = (q @ k.transpose(1, 2)) * dh ** -0.5
    t, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    keep = j <= t
    if slides:
        keep = keep & (j > t - cfg["sliding_window_size"])
    s = s.masked_fill(~keep, float("-inf"))
    if slides and cfg["add_swa_attention_sink_bias"]:
        sink = W[p + "self_attn.attention_sink_bias"].view(H, 1, 1).expand(H, T, 1)
        probs = torch.softmax(torch.cat((s, sink), dim=-1), dim=-1)
        a, slot = probs[..., :-1], probs[..., -1]
        SINK_SHARE.append(float(slot.max()))
    else:
        a, slot = torch.softmax(s, dim=-1), torch.zeros(H, T, dtype=s.dtype)
    o = (a @ v).transpose(0, 1).reshape(T, H * dv)
    return o @ W[p + "self_attn.o_proj.weight"].T, a, slot


def moe(cfg, W, p, h):
    k = cfg["num_experts_per_tok"]
    s = torch.sigmoid(h @ W[p + "gate.weight"].T)
    key = s + W[p + "gate.e_score_correction_bias"]
    order = torch.argsort(key, dim=-1, descending=True)
    out = torch.zeros_like(h)
    for t in range(h.shape[0]):
        chosen = order[t, :k]
        MARGINS.append(float(key[t, order[t, k - 1]] - key[t, order[t, k]]))
        w = s[t, chosen] / (s[t, chosen].sum() + 1e-20)
        for i, e in enumerate(chosen.tolist()):
            out[t] = out[t] + w[i] * swiglu(W, p + "experts.%d." % e, h[t:t + 1])[0]
    return out


def forward_mimo(cfg, W, ids):
    """logits [T, V], maps [L][H, T, T], slot [L][H, T], block outputs [L][T, d]."""
    eps = cfg["layernorm_epsilon"]
    Hm = max(cfg["num_attention_heads"], cfg["swa_num_attention_heads"])
    x = W["model.embed_tokens.weight"][ids]
    maps, slots, hidden = [], [], []
    for l, (slides, sparse) in enumerate(zip(cfg["hybrid_layer_pattern"], cfg["moe_layer_freq"])):
        p = "model.layers.%d." % l
        o, a, slot = attention(cfg, W, p, rms(x, W[p + "input_layernorm.weight"], eps), slides)
        x = x + o
        h = rms(x, W[p + "post_attention_layernorm.weight"], eps)
        x = x + (moe(cfg, W, p + "mlp.", h) if sparse else swiglu(W, p + "mlp.", h))
        maps.append(pad_heads(a, Hm, 0)), slots.append(pad_heads(slot, Hm, 0)), hidden.append(x)
    logits = rms(x, W["model.norm.weight"], eps) @ W["lm_head.weight"].T
    return logits, maps, slots, hidden


def weights_mimo(cfg, g):
    d, V, ff, dh, dv = (cfg[k] for k in ("hidden_size", "vocab_size", "intermediate_size", "head_dim",
                                          "v_head_dim"))
    E, mf = cfg["n_routed_experts"], cfg["moe_intermediate_size"]
    W = {"model.embed_tokens.weight": torch.randn(V, d, generator=g),
         "model.norm.weight": vec(g, d, 1.0, 0.2), "lm_head.weight": mat(g, V, d)}
    for l, (slides, sparse) in enumerate(zip(cfg["hybrid_layer_pattern"], cfg["moe_layer_freq"])):
        p = "model.layers.%d." % l
        H, Hkv = heads(cfg, slides)
        for n in ("input_layernorm", "post_attention_layernorm"):
            W[p + n + ".weight"] = vec(g, d, 1.0, 0.2)
        for n, rows, sc in (("q", H * dh, 2.0), ("k", Hkv * dh, 2.0), ("v", Hkv * dv, 1.0)):
            W[p + "self_attn.%s_proj.weight" % n] = mat(g, rows, d, sc)
        W[p + "self_attn.o_proj.weight"] = mat(g, d, H * dv)
        if slides and cfg["add_swa_attention_sink_bias"]:  # large enough to take visible mass
            W[p + "self_attn.attention_sink_bias"] = vec(g, H, 1.0, 1.0)
        if not sparse:
            for n, sh in (("gate", (ff, d)), ("up", (ff, d)), ("down", (d, ff))):
                W[p + "mlp.%s_proj.weight" % n] = mat(g, *sh)
            continue
        W[p + "mlp.gate.weight"] = mat(g, E, d, 3.0)
        W[p + "mlp.gate.e_score_correction_bias"] = vec(g, E, 0.0, 0.3)
        for e in range(E):
            for n, sh in (("gate", (mf, d)), ("up", (mf, d)), ("down", (d, mf))):
                W[p + "mlp.experts.%d.%s_proj.weight" % (e, n)] = mat(g, *sh, 2.0)
    return W


def mimo_cfg(**kw):
    c = {"architectures": ["MiMoV2FlashForCausalLM"], "model_type": "mimo_v2_flash", "hidden_size": 32,
         "num_hidden_layers": 3, "hybrid_layer_pattern": [0, 1, 1], "moe_layer_freq": [0, 1, 1],
         "num_attention_heads": 4, "num_key_value_heads": 1, "swa_num_attention_heads": 6,
         "swa_num_key_value_heads": 2, "head_dim": 12, "v_head_dim": 8, "swa_head_dim": 12,
         "swa_v_head_dim": 8, "partial_rotary_factor": 0.334, "rope_theta": 5000000.0,
         "swa_rope_theta": 10000.0, "sliding_window": 4, "sliding_window_size": 4,
         "add_swa_attention_sink_bias": True, "add_full_attention_sink_bias": False,
         "attention_value_scale": 0.707, "attention_bias": False, "intermediate_size": 48,
         "moe_intermediate_size": 16, "n_routed_experts": 4, "num_experts_per_tok": 2,
         "n_shared_experts": None, "n_group": 1, "topk_group": 1, "topk_method": "noaux_tc",
         "scoring_func": "sigmoid", "norm_topk_prob": True, "routed_scaling_factor": None,
         "hidden_act": "silu", "vocab_size": 128, "max_position_embeddings": 64,
         "layernorm_epsilon": 1e-5, "tie_word_embeddings": False, "bos_token_id": 2}
    c.update(kw)
    return c


# mimo-f32: layer 0 full (4 query heads on 1 KV head, RoPE base 5e6, no
# sink, dense MLP), layers 1 and 2 sliding over 4 keys (6 query heads on
# 2 KV heads, base 1e4, sink biases around 1), both MoE (4 experts, 2 a
# token); q/k head dim 12 (RoPE on int(12 * 0.334) = 4 dims), values 8.
# mimo-bf16: the same in BF16 with the full layer last but one, the
# pattern no sliding period or last-layers form describes.
FIXTURES = {
    "mimo-f32": (mimo_cfg(), "F32"),
    "mimo-bf16": (mimo_cfg(num_hidden_layers=4, hybrid_layer_pattern=[1, 1, 0, 1],
                           moe_layer_freq=[0, 0, 1, 1]), "BF16"),
}


def main():
    torch.set_num_threads(1)
    for name, (cfg, dtype) in FIXTURES.items():
        build_family(name, cfg, dtype, 1, os.path.join(HERE, "hf"), weights_mimo, forward_mimo, "slot",
                     MARGINS)
        print("  largest sink share: %.3f" % max(SINK_SHARE))
        assert max(SINK_SHARE) > 0.2, "the sinks take too little mass to test"
        SINK_SHARE.clear()


if __name__ == "__main__":
    sys.exit(main())
