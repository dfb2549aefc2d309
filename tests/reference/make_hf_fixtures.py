#!/usr/bin/python3
"""make_hf_fixtures.py: tiny random Hugging Face checkpoints + PyTorch outputs
for `gatelab inspect` (tests/test_hf_inspect.c).

No `transformers` here: each architecture's forward is written out in plain
PyTorch in hf_forwards.py, following the Hugging Face modeling files' semantics
(LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM plus the gated
variants of the paper's released code, GPT2LMHeadModel, GPTNeoXForCausalLM,
Olmo2ForCausalLM, MistralForCausalLM, Phi3ForCausalLM; Gemma 2 and 3 in gemma_reference.py).
This script holds their random weights, configs and fixture list, and the
writers that laguna_reference.py, afmoe_reference.py, step3p5_reference.py and
gptoss_reference.py also build their fixtures with. The safetensors files are
written by hand (8-byte little-endian header length, JSON header padded to 8
bytes, raw little-endian data).

For a BF16 checkpoint the reference runs in float32 on the BF16-rounded
weights, which is exactly what gatelab computes (it upcasts each tensor), so
the same 1e-4 tolerance holds.

Each fixture is a directory tests/reference/hf/<name>/ holding a snapshot
(config.json, model.safetensors or shards + model.safetensors.index.json)
and expected.h5: tokens [T] int32, logits [T,V], attention [L,H,T,T],
hidden [L,T,d] (block outputs), gates [L,T,C] (sigmoid scores, gated only).
OLMo 2, Mistral, Phi-3 and Gemma run in float64 (on the rounded weights) and add losses
[T-1] float64, each position's cross-entropy against the next token.

    /usr/bin/python3 tests/reference/make_hf_fixtures.py [--out DIR] [--only NAME]
    /usr/bin/python3 tests/reference/make_hf_fixtures.py --big DIR   # 124M GPT-2 (bench)
"""
import argparse
import json
import math
import os
import struct
import sys

import h5py
import numpy as np
import torch
import torch.nn.functional as F
from gemma_reference import GEMMA_FIXTURES, forward_gemma, gemma3mm_cfg, gemma3mm_weights, weights_gemma
from hf_forwards import forward_gpt2, forward_llama, forward_mistral, forward_neox, forward_olmo2, forward_phi3

HERE = os.path.dirname(os.path.abspath(__file__))
T_TOK = 10

# ---------------------------------------------------------------- safetensors


def st_bytes(t, dtype):
    t = t.detach().contiguous()
    if dtype == "F32":
        return t.float().numpy().astype("<f4").tobytes()
    if dtype == "BF16":
        return t.to(torch.bfloat16).view(torch.int16).numpy().astype("<i2").tobytes()
    if dtype == "F16":
        return t.half().numpy().astype("<f2").tobytes()
    raise ValueError(dtype)


def write_safetensors(path, tensors, dtype):
    """tensors: dict name -> tensor (written in sorted order)."""
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        b = st_bytes(tensors[name], dtype)
        header[name] = {"dtype": dtype, "shape": list(tensors[name].shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def write_snapshot(d, cfg, tensors, dtype, shards):
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if f.endswith(".safetensors") or f.endswith(".json"):
            os.remove(os.path.join(d, f))
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    if shards == 1:
        write_safetensors(os.path.join(d, "model.safetensors"), tensors, dtype)
        return
    names = sorted(tensors)
    wm, total = {}, 0
    for i in range(shards):
        part = names[i::shards]
        fn = "model-%05d-of-%05d.safetensors" % (i + 1, shards)
        write_safetensors(os.path.join(d, fn), {n: tensors[n] for n in part}, dtype)
        for n in part:
            wm[n] = fn
            total += tensors[n].numel() * (4 if dtype == "F32" else 2)
    with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": wm}, f, indent=2)


def rounded(tensors, dtype):
    """The weights as gatelab sees them: rounded to dtype, back in float32."""
    if dtype == "F32":
        return {k: v.float() for k, v in tensors.items()}
    tt = torch.bfloat16 if dtype == "BF16" else torch.float16
    return {k: v.to(tt).float() for k, v in tensors.items()}

# ---------------------------------------------------------------- random weights


def mat(g, out, inp, scale=1.0):
    return torch.randn(out, inp, generator=g) * (scale / math.sqrt(inp))


def vec(g, n, mean=0.0, sd=0.1):
    return mean + sd * torch.randn(n, generator=g)


def weights_swiglu(W, g, p, f, d):
    """A SwiGLU MLP of f units at prefix p: {gate,up,down}_proj.weight."""
    W[p + "gate_proj.weight"] = mat(g, f, d)
    W[p + "up_proj.weight"] = mat(g, f, d)
    W[p + "down_proj.weight"] = mat(g, d, f)


def weights_moe(W, g, p, d, E, f, router, bias, shared=0):
    """An MoE layer at prefix p: its router p + router (logits of sd about
    2, so that sigmoid scores spread), the bias that chooses p + bias
    (large enough to change choices), a shared_experts. SwiGLU of `shared`
    units (0: none) and E routed experts.<e>. of f units."""
    W[p + router] = mat(g, E, d, 2.0)
    W[p + bias] = vec(g, E, 0.0, 0.3)
    if shared:
        weights_swiglu(W, g, p + "shared_experts.", shared, d)
    for e in range(E):
        weights_swiglu(W, g, p + "experts.%d." % e, f, d)


def weights_llama(cfg, family, g):
    d, H, V, ff = cfg["hidden_size"], cfg["num_attention_heads"], cfg["vocab_size"], cfg["intermediate_size"]
    Hkv = cfg.get("num_key_value_heads", H)
    dh = cfg.get("head_dim", 128 if family == "qwen3" else d // H)
    gph = dh if cfg.get("elementwise_attn_output_gate") else 1 if cfg.get("headwise_attn_output_gate") else 0
    qr = H * (dh + gph)
    W = {"model.embed_tokens.weight": torch.randn(V, d, generator=g), "model.norm.weight": vec(g, d, 1.0)}
    if not cfg.get("tie_word_embeddings"):
        W["lm_head.weight"] = mat(g, V, d)
    bias = family == "qwen2" or cfg.get("attention_bias", False)
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        W[p + "input_layernorm.weight"] = vec(g, d, 1.0)
        W[p + "post_attention_layernorm.weight"] = vec(g, d, 1.0)
        W[p + "self_attn.q_proj.weight"] = mat(g, qr, d, 2.0)
        W[p + "self_attn.k_proj.weight"] = mat(g, Hkv * dh, d, 2.0)
        W[p + "self_attn.v_proj.weight"] = mat(g, Hkv * dh, d)
        W[p + "self_attn.o_proj.weight"] = mat(g, d, H * dh)
        if bias:
            for n, r in (("q", qr), ("k", Hkv * dh), ("v", Hkv * dh)):
                W[p + "self_attn.%s_proj.bias" % n] = vec(g, r, 0.0, 0.3)
        if family != "qwen2" and cfg.get("attention_bias", False):
            W[p + "self_attn.o_proj.bias"] = vec(g, d, 0.0, 0.3)
        if family == "qwen3" and cfg.get("use_qk_norm", True):
            W[p + "self_attn.q_norm.weight"] = vec(g, dh, 1.0, 0.2)
            W[p + "self_attn.k_norm.weight"] = vec(g, dh, 1.0, 0.2)
        weights_swiglu(W, g, p + "mlp.", ff, d)
    return W


def weights_olmo2(cfg, g):
    d, H, V, ff = cfg["hidden_size"], cfg["num_attention_heads"], cfg["vocab_size"], cfg["intermediate_size"]
    Hkv, dh = cfg.get("num_key_value_heads", H), d // H
    W = {"model.embed_tokens.weight": torch.randn(V, d, generator=g), "model.norm.weight": vec(g, d, 1.0)}
    if not cfg.get("tie_word_embeddings"):
        W["lm_head.weight"] = mat(g, V, d)
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        W[p + "post_attention_layernorm.weight"] = vec(g, d, 1.0, 0.2)
        W[p + "post_feedforward_layernorm.weight"] = vec(g, d, 1.0, 0.2)
        W[p + "self_attn.q_proj.weight"] = mat(g, H * dh, d, 2.0)
        W[p + "self_attn.k_proj.weight"] = mat(g, Hkv * dh, d, 2.0)
        W[p + "self_attn.v_proj.weight"] = mat(g, Hkv * dh, d)
        W[p + "self_attn.o_proj.weight"] = mat(g, d, H * dh)
        if cfg.get("attention_bias", False):
            for n, r in (("q", H * dh), ("k", Hkv * dh), ("v", Hkv * dh), ("o", d)):
                W[p + "self_attn.%s_proj.bias" % n] = vec(g, r, 0.0, 0.3)
        W[p + "self_attn.q_norm.weight"] = vec(g, H * dh, 1.0, 0.2)
        W[p + "self_attn.k_norm.weight"] = vec(g, Hkv * dh, 1.0, 0.2)
        weights_swiglu(W, g, p + "mlp.", ff, d)
    return W


def weights_phi3(cfg, g):
    d, H, V, ff = cfg["hidden_size"], cfg["num_attention_heads"], cfg["vocab_size"], cfg["intermediate_size"]
    Hkv = cfg.get("num_key_value_heads") or H
    dh = cfg.get("head_dim") or d // H
    W = {"model.embed_tokens.weight": torch.randn(V, d, generator=g), "model.norm.weight": vec(g, d, 1.0)}
    if not cfg.get("tie_word_embeddings"):
        W["lm_head.weight"] = mat(g, V, d)
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        W[p + "input_layernorm.weight"] = vec(g, d, 1.0)
        W[p + "post_attention_layernorm.weight"] = vec(g, d, 1.0)
        W[p + "self_attn.qkv_proj.weight"] = torch.cat((mat(g, H * dh, d, 2.0), mat(g, Hkv * dh, d, 2.0),
                                                        mat(g, Hkv * dh, d)))
        W[p + "self_attn.o_proj.weight"] = mat(g, d, H * dh)
        W[p + "mlp.gate_up_proj.weight"] = mat(g, 2 * ff, d)
        W[p + "mlp.down_proj.weight"] = mat(g, d, ff)
    return W


def weights_gpt2(cfg, pre, g):
    d, V, ff, P = cfg["n_embd"], cfg["vocab_size"], cfg.get("n_inner") or 4 * cfg["n_embd"], cfg["n_positions"]
    W = {pre + "wte.weight": torch.randn(V, d, generator=g), pre + "wpe.weight": 0.5 * torch.randn(P, d, generator=g),
         pre + "ln_f.weight": vec(g, d, 1.0), pre + "ln_f.bias": vec(g, d)}
    for l in range(cfg["n_layer"]):
        p = pre + "h.%d." % l
        for n in ("ln_1", "ln_2"):
            W[p + n + ".weight"], W[p + n + ".bias"] = vec(g, d, 1.0), vec(g, d)
        W[p + "attn.c_attn.weight"] = mat(g, 3 * d, d, 2.0).T.contiguous()  # Conv1D [in, out]
        W[p + "attn.c_attn.bias"] = vec(g, 3 * d, 0.0, 0.3)
        W[p + "attn.c_proj.weight"] = mat(g, d, d).T.contiguous()
        W[p + "attn.c_proj.bias"] = vec(g, d)
        W[p + "mlp.c_fc.weight"] = mat(g, ff, d).T.contiguous()
        W[p + "mlp.c_fc.bias"] = vec(g, ff)
        W[p + "mlp.c_proj.weight"] = mat(g, d, ff).T.contiguous()
        W[p + "mlp.c_proj.bias"] = vec(g, d)
    return W


def weights_neox(cfg, g):
    d, V, ff = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
    W = {"gpt_neox.embed_in.weight": torch.randn(V, d, generator=g), "embed_out.weight": mat(g, V, d),
         "gpt_neox.final_layer_norm.weight": vec(g, d, 1.0), "gpt_neox.final_layer_norm.bias": vec(g, d)}
    for l in range(cfg["num_hidden_layers"]):
        p = "gpt_neox.layers.%d." % l
        for n in ("input_layernorm", "post_attention_layernorm"):
            W[p + n + ".weight"], W[p + n + ".bias"] = vec(g, d, 1.0), vec(g, d)
        W[p + "attention.query_key_value.weight"] = mat(g, 3 * d, d, 2.0)
        W[p + "attention.query_key_value.bias"] = vec(g, 3 * d, 0.0, 0.3)
        W[p + "attention.dense.weight"] = mat(g, d, d)
        W[p + "attention.dense.bias"] = vec(g, d)
        W[p + "mlp.dense_h_to_4h.weight"] = mat(g, ff, d)
        W[p + "mlp.dense_h_to_4h.bias"] = vec(g, ff)
        W[p + "mlp.dense_4h_to_h.weight"] = mat(g, d, ff)
        W[p + "mlp.dense_4h_to_h.bias"] = vec(g, d)
        # buffers old checkpoints carry; gatelab must ignore them
        W[p + "attention.rotary_emb.inv_freq"] = torch.ones(2)
    return W

# ---------------------------------------------------------------- fixtures

V, D, FF = 128, 32, 64


def llama_cfg(arch, model_type, **kw):
    c = {"architectures": [arch], "model_type": model_type, "hidden_size": D, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": FF, "vocab_size": V,
         "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "hidden_act": "silu",
         "tie_word_embeddings": False, "bos_token_id": 1, "torch_dtype": "float32"}
    c.update(kw)
    return c


def gpt2_cfg(**kw):
    c = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": D, "n_layer": 2, "n_head": 4,
         "n_positions": 16, "n_inner": None, "vocab_size": V, "layer_norm_epsilon": 1e-5,
         "activation_function": "gelu_new", "bos_token_id": 0, "torch_dtype": "float32"}
    c.update(kw)
    return c


def neox_cfg(**kw):
    c = {"architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox", "hidden_size": D,
         "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": FF, "vocab_size": V,
         "max_position_embeddings": 64, "rotary_pct": 0.5, "rotary_emb_base": 10000,
         "layer_norm_eps": 1e-5, "use_parallel_residual": True, "hidden_act": "gelu",
         "tie_word_embeddings": False, "bos_token_id": 0, "torch_dtype": "float16"}
    c.update(kw)
    return c


def olmo2_cfg(**kw):
    """An OLMo 2 config as Olmo2Config saves one: rms_norm_eps left at its
    default (1e-5), so the reader's default is what is tested."""
    c = llama_cfg("Olmo2ForCausalLM", "olmo2", **kw)
    del c["rms_norm_eps"]
    return c


def phi3_cfg(**kw):
    """A Phi-3 config as Phi3Config saves one, with the keys the 4k models'
    config.json carries (sliding_window, no rope_scaling); rms_norm_eps,
    unless given, left out so that its default (1e-5) is what is read."""
    c = llama_cfg("Phi3ForCausalLM", "phi3", rope_scaling=None, **kw)
    if "rms_norm_eps" not in kw:
        del c["rms_norm_eps"]
    return c


LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 64}

# name: (family, config, dtype, shards)
FIXTURES = {
    "llama-f32": ("llama", llama_cfg("LlamaForCausalLM", "llama"), "F32", 1),
    "llama-bf16-sharded": ("llama", llama_cfg("LlamaForCausalLM", "llama", tie_word_embeddings=True,
                                              rope_scaling=LLAMA3, rope_theta=500000.0), "BF16", 2),
    "qwen2-f32-sharded": ("qwen2", llama_cfg("Qwen2ForCausalLM", "qwen2", rope_theta=1000000.0), "F32", 2),
    "qwen2-bf16": ("qwen2", llama_cfg("Qwen2ForCausalLM", "qwen2", tie_word_embeddings=True), "BF16", 1),
    "qwen3-f32": ("qwen3", llama_cfg("Qwen3ForCausalLM", "qwen3", head_dim=16), "F32", 1),
    "qwen3-bf16-sharded": ("qwen3", llama_cfg("Qwen3ForCausalLM", "qwen3", head_dim=16), "BF16", 3),
    "qwen3-headwise-f32": ("qwen3", llama_cfg("Qwen3ForCausalLM", "qwen3", headwise_attn_output_gate=True,
                                              use_qk_norm=True, head_dim=8), "F32", 1),
    "qwen3-headwise-bf16-sharded": ("qwen3", llama_cfg("Qwen3ForCausalLM", "qwen3", num_key_value_heads=1,
                                                       headwise_attn_output_gate=True, use_qk_norm=True,
                                                       head_dim=8),
                                    "BF16", 2),
    "qwen3-elementwise-f32-sharded": ("qwen3", llama_cfg("Qwen3ForCausalLM", "qwen3",
                                                         elementwise_attn_output_gate=True, use_qk_norm=True,
                                                         head_dim=8), "F32", 2),
    "qwen3-elementwise-bf16": ("qwen3", llama_cfg("Qwen3ForCausalLM", "qwen3", elementwise_attn_output_gate=True,
                                                  use_qk_norm=True, attention_bias=True, head_dim=8), "BF16", 1),
    "gpt2-f32": ("gpt2", gpt2_cfg(), "F32", 1),
    "gpt2-bf16-sharded-noprefix": ("gpt2-noprefix", gpt2_cfg(), "BF16", 2),
    "neox-f32": ("neox", neox_cfg(), "F32", 1),
    "neox-bf16-sharded-seq": ("neox", neox_cfg(use_parallel_residual=False, rotary_pct=0.25), "BF16", 2),
    "olmo2-f32": ("olmo2", llama_cfg("Olmo2ForCausalLM", "olmo2", rms_norm_eps=1e-6), "F32", 1),
    "olmo2-bf16-sharded": ("olmo2", olmo2_cfg(num_key_value_heads=1, tie_word_embeddings=True,
                                              attention_bias=True), "BF16", 2),
    "mistral-f32": ("mistral", llama_cfg("MistralForCausalLM", "mistral", sliding_window=4), "F32", 1),
    "mistral-bf16-sharded": ("mistral", llama_cfg("MistralForCausalLM", "mistral", sliding_window=None,
                                                  tie_word_embeddings=True), "BF16", 2),
    "phi3-f32": ("phi3", phi3_cfg(partial_rotary_factor=0.5, sliding_window=4, rms_norm_eps=1e-6), "F32", 1),
    "phi3-bf16-sharded": ("phi3", phi3_cfg(num_key_value_heads=1, sliding_window=None, tie_word_embeddings=True),
                          "BF16", 2),
}
FIXTURES.update(GEMMA_FIXTURES)


def write_expected(d, ids, logits, maps, hidden, dtype, **extra):
    """d/expected.h5 of a float64 reference forward: tokens [T], logits [T,V],
    attention [L,H,T,T], each of `extra` (name -> per-layer tensors: gates,
    slot), hidden [L,T,d] and each next token's loss [T-1]."""
    with h5py.File(os.path.join(d, "expected.h5"), "w") as f:
        kw = dict(compression="gzip", shuffle=True)
        f.create_dataset("tokens", data=ids.numpy().astype(np.int32))
        f.create_dataset("logits", data=logits.numpy().astype(np.float32), **kw)
        f.create_dataset("attention", data=torch.stack(maps).numpy().astype(np.float32), **kw)
        for name, per_layer in extra.items():
            f.create_dataset(name, data=torch.stack(per_layer).numpy().astype(np.float32), **kw)
        f.create_dataset("hidden", data=torch.stack(hidden).numpy().astype(np.float32), **kw)
        f.create_dataset("losses", data=F.cross_entropy(logits[:-1], ids[1:], reduction="none").numpy())
        f.attrs["dtype"] = dtype


def write_reference(d, cfg, Wr, ids, dtype, forward, extra, margins=None):
    """d/expected.h5 from forward(cfg, the float64 weights as gatelab reads
    them (Wr), ids) -> (logits, maps, per-layer `extra` (gates or slot),
    hidden). margins: the routing margins the forward appended (cleared
    after); each must exceed 1e-3, since a choice that close could flip
    between float32 and float64."""
    with torch.no_grad():
        logits, maps, per_layer, hidden = forward(cfg, {k: v.double() for k, v in Wr.items()}, ids)
    write_expected(d, ids, logits, maps, hidden, dtype, **{extra: per_layer})
    name = os.path.basename(d)
    s = torch.stack(per_layer).flatten()
    margin = " routing margin %.4f" % min(margins) if margins else ""
    print("%-24s %-5s %s %.3f..%.3f%s" % (name, dtype, extra, float(s[s == s].min()), float(s[s == s].max()), margin))
    assert not margins or min(margins) > 1e-3, "reseed: a routing choice is within 1e-3"
    if margins is not None:
        margins.clear()


def build_family(name, cfg, dtype, shards, out_root, weights, forward, extra, margins=None):
    """A fixture of a family with a reference script of its own: random
    weights(cfg, g), the snapshot (config.json without its null keys), and
    its expected.h5 (write_reference)."""
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    cfg = {k: v for k, v in dict(cfg, torch_dtype="bfloat16" if dtype == "BF16" else "float32").items()
           if v is not None}
    W = weights(cfg, g)
    ids = torch.randint(0, cfg["vocab_size"], (T_TOK,), generator=g)
    d = os.path.join(out_root, name)
    write_snapshot(d, cfg, W, dtype, shards)
    write_reference(d, cfg, rounded(W, dtype), ids, dtype, forward, extra, margins)


def build(name, spec, out_root):
    family, cfg, dtype, shards = spec
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    if family in ("llama", "qwen2", "qwen3", "mistral"):
        W = weights_llama(cfg, family, g)
    elif family == "olmo2":
        W = weights_olmo2(cfg, g)
    elif family == "phi3":
        W = weights_phi3(cfg, g)
    elif family == "gemma" or family.startswith("gemma3mm"):
        W = weights_gemma(cfg, g, mat, vec)
    elif family.startswith("gpt2"):
        pre = "" if family == "gpt2-noprefix" else "transformer."
        W = weights_gpt2(cfg, pre, g)
    else:
        W = weights_neox(cfg, g)
    cfg = dict(cfg, torch_dtype="bfloat16" if dtype == "BF16" else "float32")
    ids = torch.randint(0, cfg["vocab_size"], (T_TOK,), generator=g)
    Wr = rounded(W, dtype)
    with torch.no_grad():
        if family in ("llama", "qwen2", "qwen3"):
            logits, att, gates, hidden = forward_llama(cfg, Wr, ids, family)
        elif family in ("olmo2", "mistral", "phi3", "gemma") or family.startswith("gemma3mm"):
            fwd = dict(olmo2=forward_olmo2, mistral=forward_mistral, phi3=forward_phi3,
                       gemma=forward_gemma).get(family, forward_gemma)
            logits, att, gates, hidden = fwd(cfg, {k: v.double() for k, v in Wr.items()}, ids)
        elif family.startswith("gpt2"):
            logits, att, gates, hidden = forward_gpt2(cfg, Wr, ids, pre)
        else:
            logits, att, gates, hidden = forward_neox(cfg, Wr, ids)
    d = os.path.join(out_root, name)
    if family.startswith("gemma3mm"):  # the text tower of Gemma3ForConditionalGeneration
        cfg, W = gemma3mm_cfg(cfg, cfg["torch_dtype"]), gemma3mm_weights(W, family.endswith("v5"), g)
    write_snapshot(d, cfg, W, dtype, shards)
    with h5py.File(os.path.join(d, "expected.h5"), "w") as f:
        kw = dict(compression="gzip", shuffle=True)
        f.create_dataset("tokens", data=ids.numpy().astype(np.int32))
        f.create_dataset("logits", data=logits.numpy().astype(np.float32), **kw)
        f.create_dataset("attention", data=torch.stack(att).numpy().astype(np.float32), **kw)
        f.create_dataset("hidden", data=torch.stack(hidden).numpy().astype(np.float32), **kw)
        if gates:
            f.create_dataset("gates", data=torch.stack(gates).numpy().astype(np.float32), **kw)
        if logits.dtype == torch.float64:  # each next token's loss, from the float64 logits
            f.create_dataset("losses", data=F.cross_entropy(logits[:-1], ids[1:], reduction="none").numpy())
        f.attrs["dtype"] = dtype
    size = sum(os.path.getsize(os.path.join(d, x)) for x in os.listdir(d))
    print("%-32s %-5s %d shard(s) %7d bytes" % (name, dtype, shards, size))


def build_big(d, dtype="F32", seed=0):
    """A random GPT-2-small-sized checkpoint (124M parameters)."""
    cfg = gpt2_cfg(n_embd=768, n_layer=12, n_head=12, n_positions=1024, vocab_size=50257)
    g = torch.Generator().manual_seed(seed)
    W = weights_gpt2(cfg, "transformer.", g)
    write_snapshot(d, cfg, W, dtype, 1)
    print("%s: %.1fM parameters" % (d, sum(v.numel() for v in W.values()) / 1e6))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "hf"))
    ap.add_argument("--only")
    ap.add_argument("--big", metavar="DIR", help="write the 124M GPT-2 checkpoint there and stop")
    ap.add_argument("--big-dtype", default="F32", choices=["F32", "BF16", "F16"])
    a = ap.parse_args()
    torch.set_num_threads(1)
    if a.big:
        build_big(a.big, a.big_dtype)
        return
    for name, spec in FIXTURES.items():
        if a.only and a.only != name:
            continue
        build(name, spec, a.out)


if __name__ == "__main__":
    sys.exit(main())
