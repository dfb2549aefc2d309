#!/usr/bin/python3
"""make_hf_vocab_gate_fixture.py: the reference of `gatelab gates RUN --vocab`
on an inspected gated Qwen3 checkpoint (tests/test_gates_vocab.c).

For every token id v of each gated Qwen3 fixture (tests/reference/hf/<name>/),
layer 0's gate scores when v is the first token of the sequence, read from
the snapshot's safetensors (parsed here by hand: 8-byte little-endian header
length, JSON header, raw little-endian F32 or BF16 data) and computed in
float64: h = RMSNorm(embed[v]) * input_layernorm.weight, q = q_proj(h)
(+ bias), each KV group's row split into [queries | gates] (the paper's
modeling_qwen3.py), s = sigmoid(gates), and token v's mean over the gate's
channels (elementwise: heads x head_dim; headwise: one per head). Writes
tests/reference/hf/<name>/vocab_gates.h5: token_mean [V] float64.

    /usr/bin/python3 tests/reference/make_hf_vocab_gate_fixture.py
"""
import json
import os
import struct

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ["qwen3-elementwise-f32-sharded", "qwen3-elementwise-bf16",
         "qwen3-headwise-f32", "qwen3-headwise-bf16-sharded"]


def read_safetensors(path):
    """Every tensor of one safetensors file as float64 arrays."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in head.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        raw = data[a:b]
        if t["dtype"] == "F32":
            x = np.frombuffer(raw, dtype="<f4").astype(np.float64)
        elif t["dtype"] == "BF16":
            u = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            x = u.view(np.float32).astype(np.float64)
        else:
            raise SystemExit("%s: dtype %s" % (path, t["dtype"]))
        out[name] = x.reshape(t["shape"])
    return out


def snapshot(d):
    W = {}
    for f in sorted(os.listdir(d)):
        if f.endswith(".safetensors"):
            W.update(read_safetensors(os.path.join(d, f)))
    return W


def token_means(cfg, W):
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads", H)
    dh, eps, grp = cfg["head_dim"], cfg["rms_norm_eps"], H // Hkv
    g = dh if cfg.get("elementwise_attn_output_gate") else 1
    x = W["model.embed_tokens.weight"]                       # [V, d]: every token at position 0
    h = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * W["model.layers.0.input_layernorm.weight"]
    q = h @ W["model.layers.0.self_attn.q_proj.weight"].T
    if cfg.get("attention_bias", False):
        q = q + W["model.layers.0.self_attn.q_proj.bias"]
    q = q.reshape(len(x), Hkv, grp * dh + grp * g)
    z = q[:, :, grp * dh:].reshape(len(x), H * g)
    s = 1.0 / (1.0 + np.exp(-z))
    return s.mean(-1)


def main():
    for name in NAMES:
        d = os.path.join(HERE, "hf", name)
        with open(os.path.join(d, "config.json")) as f:
            cfg = json.load(f)
        m = token_means(cfg, snapshot(d))
        with h5py.File(os.path.join(d, "vocab_gates.h5"), "w") as f:
            f.create_dataset("token_mean", data=m.astype(np.float64))
        print("%-32s V %d, shut %.4f, mean %.5f" % (name, len(m), (m < 0.1).mean(), m.mean()))


if __name__ == "__main__":
    main()
