#!/usr/bin/python3
"""gptoss_reference.py: tiny random GptOssForCausalLM checkpoints and their
float64 plain-PyTorch forward (no `transformers`), into
tests/reference/hf/gptoss-* (expected.h5 as make_hf_fixtures.py writes it,
plus `slot`: each query's share to the sink logit), one of them with its
experts in MXFP4 as the published checkpoints store them. Written from
modeling_gpt_oss.py and configuration_gpt_oss.py of transformers v4.55.0:

  * GptOssRMSNorm: w * x / sqrt(mean(x^2) + eps);
  * each layer: input_layernorm, attention, residual add;
    post_attention_layernorm, the MoE MLP, residual add;
  * attention: q/k/v/o_proj with biases; RoPE on the two halves of each
    head (_apply_rotary_emb) with YaRN's frequencies and its attention
    factor on cos and sin (_compute_yarn_parameters of
    modeling_rope_utils.py); GQA; logits q k^T head_dim^-1/2, the causal
    mask (and on the sliding_attention layers keys t - W < j <= t), then
    the head's sink logit `sinks[h]` (unscaled) appended as one more
    column before the softmax, which is dropped after it: the weights on
    the real keys sum to 1 - the sink's share;
  * GptOssTopKRouter: logits = x router.weight^T + router.bias, the top_k
    of them, softmax over those k;
  * GptOssExperts: gate_up = x @ gate_up_proj[e] + gate_up_proj_bias[e],
    gate = gate_up[..., ::2] clamped to <= limit, up = gate_up[..., 1::2]
    clamped to [-limit, limit], out = ((up + 1) * gate * sigmoid(1.702
    gate)) @ down_proj[e] + down_proj_bias[e], summed over the chosen
    experts times their router weights;
  * the final norm and the untied lm_head.

Run in float64 on the checkpoint's rounded weights.
Regenerate:  /usr/bin/python3 tests/reference/gptoss_reference.py
"""
import json
import math
import os
import struct
import sys

import torch
import torch.nn.functional as F

from hf_forwards import causal_probs, rms_norm, slides
from make_hf_fixtures import T_TOK, build_family, mat, rounded, vec, write_reference, write_snapshot

HERE = os.path.dirname(os.path.abspath(__file__))


def yarn_inv_freq(dim, base, rs):
    """inv_freq [dim/2] and the attention factor of rope_scaling rs."""
    factor, orig = rs["factor"], rs["original_max_position_embeddings"]
    bf, bs = rs.get("beta_fast", 32.0), rs.get("beta_slow", 1.0)
    att = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0

    def corr(n):
        return dim * math.log(orig / (n * 2 * math.pi)) / (2 * math.log(base))

    lo, hi = corr(bf), corr(bs)
    if rs.get("truncate", True):
        lo, hi = math.floor(lo), math.ceil(hi)
    lo, hi = max(lo, 0), min(hi, dim - 1)
    if lo == hi:
        hi += 0.001
    ramp = ((torch.arange(dim // 2, dtype=torch.float64) - lo) / (hi - lo)).clamp(0, 1)
    pos = base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    extra = 1.0 - ramp
    return (1.0 / (factor * pos)) * (1 - extra) + (1.0 / pos) * extra, att


def rope(x, cos, sin):
    h = x.shape[-1] // 2
    a, b = x[..., :h], x[..., h:]
    return torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)


def window(cfg, l):
    """Layer l's sliding window: on the sliding_attention layers (default
    every other one, from layer 0), else None."""
    return (cfg.get("sliding_window") or None) if slides(cfg, l, 2) else None


def attention(cfg, W, p, h, l, cos, sin):
    T = h.shape[0]
    H, Hkv, dh = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    q = F.linear(h, W[p + "self_attn.q_proj.weight"], W[p + "self_attn.q_proj.bias"])
    k = F.linear(h, W[p + "self_attn.k_proj.weight"], W[p + "self_attn.k_proj.bias"])
    v = F.linear(h, W[p + "self_attn.v_proj.weight"], W[p + "self_attn.v_proj.bias"])
    q = rope(q.view(T, H, dh).transpose(0, 1), cos, sin)
    k = rope(k.view(T, Hkv, dh).transpose(0, 1), cos, sin).repeat_interleave(H // Hkv, dim=0)
    v = v.view(T, Hkv, dh).transpose(0, 1).repeat_interleave(H // Hkv, dim=0)
    probs = causal_probs(q, k, window(cfg, l), dh ** -0.5, sinks=W[p + "self_attn.sinks"])
    a, slot = probs[..., :-1], probs[..., -1]
    o = (a @ v).transpose(0, 1).reshape(T, H * dh)
    return F.linear(o, W[p + "self_attn.o_proj.weight"], W[p + "self_attn.o_proj.bias"]), a, slot


def moe(cfg, W, p, x):
    k, lim, alpha = cfg["num_experts_per_tok"], cfg.get("swiglu_limit", 7.0), 1.702
    z = F.linear(x, W[p + "mlp.router.weight"], W[p + "mlp.router.bias"])
    top, idx = torch.topk(z, k, dim=-1)
    w = torch.softmax(top, dim=-1)
    out = torch.zeros_like(x)
    for t in range(x.shape[0]):
        for j in range(k):
            e = int(idx[t, j])
            gu = x[t] @ W[p + "mlp.experts.gate_up_proj"][e] + W[p + "mlp.experts.gate_up_proj_bias"][e]
            gate, up = gu[::2].clamp(max=lim), gu[1::2].clamp(min=-lim, max=lim)
            y = ((up + 1) * gate * torch.sigmoid(gate * alpha)) @ W[p + "mlp.experts.down_proj"][e]
            out[t] += w[t, j] * (y + W[p + "mlp.experts.down_proj_bias"][e])
    return out


def forward_gptoss(cfg, W, ids):
    """logits [T, V], maps [L][H, T, T], slot [L][H, T], block outputs [L][T, d]."""
    eps, T, dh = cfg["rms_norm_eps"], len(ids), cfg["head_dim"]
    inv, att = yarn_inv_freq(dh, cfg["rope_theta"], cfg["rope_scaling"])
    f = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = f.cos() * att, f.sin() * att
    x = W["model.embed_tokens.weight"][ids]
    maps, slots, hidden = [], [], []
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        o, a, slot = attention(cfg, W, p, rms_norm(x, W[p + "input_layernorm.weight"], eps), l, cos, sin)
        x = x + o
        x = x + moe(cfg, W, p, rms_norm(x, W[p + "post_attention_layernorm.weight"], eps))
        maps.append(a), slots.append(slot), hidden.append(x)
    logits = F.linear(rms_norm(x, W["model.norm.weight"], eps), W["lm_head.weight"])
    return logits, maps, slots, hidden


def weights_gptoss(cfg, g):
    d, H, V, ff = cfg["hidden_size"], cfg["num_attention_heads"], cfg["vocab_size"], cfg["intermediate_size"]
    Hkv, dh, E = cfg["num_key_value_heads"], cfg["head_dim"], cfg["num_local_experts"]
    W = {"model.embed_tokens.weight": torch.randn(V, d, generator=g), "model.norm.weight": vec(g, d, 1.0),
         "lm_head.weight": mat(g, V, d)}
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        W[p + "input_layernorm.weight"] = vec(g, d, 1.0)
        W[p + "post_attention_layernorm.weight"] = vec(g, d, 1.0)
        for n, rows, sc in (("q", H * dh, 1.5), ("k", Hkv * dh, 1.5), ("v", Hkv * dh, 1.0)):
            W[p + "self_attn.%s_proj.weight" % n] = mat(g, rows, d, sc)
            W[p + "self_attn.%s_proj.bias" % n] = vec(g, rows, 0.0, 0.3)
        W[p + "self_attn.o_proj.weight"] = mat(g, d, H * dh)
        W[p + "self_attn.o_proj.bias"] = vec(g, d)
        W[p + "self_attn.sinks"] = vec(g, H, 0.5, 1.0)
        W[p + "mlp.router.weight"] = mat(g, E, d, 2.0)
        W[p + "mlp.router.bias"] = vec(g, E)
        # [in, out] as GptOssExperts stores them; large enough that the clamp bites
        W[p + "mlp.experts.gate_up_proj"] = torch.randn(E, d, 2 * ff, generator=g) * (6.0 / math.sqrt(d))
        W[p + "mlp.experts.gate_up_proj_bias"] = 0.5 * torch.randn(E, 2 * ff, generator=g)
        W[p + "mlp.experts.down_proj"] = torch.randn(E, ff, d, generator=g) * (0.5 / math.sqrt(ff))
        W[p + "mlp.experts.down_proj_bias"] = 0.1 * torch.randn(E, d, generator=g)
    return W


# max_position_embeddings is rope_scaling's factor times its
# original_max_position_embeddings, as in the published configs (131072 =
# 32 x 4096): transformers v4.55 takes YaRN's factor as their ratio, v5 as
# `factor`, and here the two agree.
def gptoss_cfg(**kw):
    c = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 32,
         "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
         "intermediate_size": 16, "num_local_experts": 4, "num_experts_per_tok": 2, "vocab_size": 128,
         "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "rope_theta": 150000.0,
         "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "beta_fast": 32.0, "beta_slow": 1.0,
                          "truncate": False, "original_max_position_embeddings": 16},
         "sliding_window": 4, "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
         "attention_bias": True, "swiglu_limit": 7.0, "hidden_act": "silu", "tie_word_embeddings": False,
         "bos_token_id": 2, "torch_dtype": "float32"}
    c.update(kw)
    return c


# name: (config, dtype, shards). gptoss-f32 slides over 4 keys on layers 0
# and 2 of 3; gptoss-bf16-sharded over 64 and names no layer_types (the
# default alternation).
FIXTURES = {
    "gptoss-f32": (gptoss_cfg(), "F32", 1),
    "gptoss-bf16-sharded": (gptoss_cfg(sliding_window=64, layer_types=None), "BF16", 2),
}


def build(name, cfg, dtype, shards, out_root):
    build_family(name, cfg, dtype, shards, out_root, weights_gptoss, forward_gptoss, "slot", None)


FP4 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def dequant_mxfp4(blocks, scales):
    """[E, out, G, 16] U8 blocks and [E, out, G] U8 scales -> [E, G*32, out]
    float64: byte j of a block holds values 2j (low nibble) and 2j + 1
    (high nibble), FP4 E2M1 codes, times 2^(scale - 127); then transposed
    to [E, in, out] as gate_up_proj / down_proj are stored."""
    lut = torch.tensor(FP4, dtype=torch.float64)
    vals = torch.stack((lut[(blocks & 15).long()], lut[(blocks >> 4).long()]), dim=-1)
    vals = vals.reshape(*blocks.shape[:3], 32) * torch.pow(2.0, scales.double() - 127)[..., None]
    return vals.reshape(blocks.shape[0], blocks.shape[1], -1).transpose(1, 2)


def write_mixed(path, tensors):
    """A safetensors file of F32 tensors and U8 ones (torch.uint8)."""
    blobs = {}
    for k, v in tensors.items():
        u8 = v.dtype == torch.uint8
        blobs[k] = ("U8" if u8 else "F32", v.numpy().tobytes() if u8 else v.float().numpy().astype("<f4").tobytes(),
                    list(v.shape))
    header, off = {}, 0
    for k in sorted(blobs):
        header[k] = {"dtype": blobs[k][0], "shape": blobs[k][2], "data_offsets": [off, off + len(blobs[k][1])]}
        off += len(blobs[k][1])
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs[k][1] for k in sorted(blobs)))


def build_mxfp4(out_root):
    """gptoss-mxfp4: gptoss-f32's config and F32 weights, but each layer's
    experts stored as the published checkpoints store them, in MXFP4:
    blocks of 32 FP4 values (U8 [E, out, in/32, 16], two a byte) with one
    E8M0 scale a block (U8 [E, out, in/32]); random codes, scales near the
    dense weights' size. The reference runs on their dequantized values."""
    cfg = gptoss_cfg(intermediate_size=32)  # MXFP4 blocks: sizes multiples of 32
    g = torch.Generator().manual_seed(sum(map(ord, "gptoss-mxfp4")))
    W = weights_gptoss(cfg, g)
    E, d, ff = cfg["num_local_experts"], cfg["hidden_size"], cfg["intermediate_size"]
    Wr = rounded(W, "F32")
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d.mlp.experts." % l
        for n, rows, inp, lo in (("gate_up_proj", 2 * ff, d, 124), ("down_proj", d, ff, 121)):
            blk = torch.randint(0, 256, (E, rows, inp // 32, 16), generator=g).to(torch.uint8)
            sc = torch.randint(lo, lo + 3, (E, rows, inp // 32), generator=g).to(torch.uint8)
            W[p + n + "_blocks"], W[p + n + "_scales"] = blk, sc
            Wr[p + n] = dequant_mxfp4(blk, sc)
            del W[p + n]
    ids = torch.randint(0, cfg["vocab_size"], (T_TOK,), generator=g)
    out = os.path.join(out_root, "gptoss-mxfp4")
    write_snapshot(out, cfg, {}, "F32", 1)
    write_mixed(os.path.join(out, "model.safetensors"), W)
    write_reference(out, cfg, Wr, ids, "MXFP4", forward_gptoss, "slot")


def main():
    torch.set_num_threads(1)
    for name, (cfg, dtype, shards) in FIXTURES.items():
        build(name, cfg, dtype, shards, os.path.join(HERE, "hf"))
    build_mxfp4(os.path.join(HERE, "hf"))


if __name__ == "__main__":
    sys.exit(main())
