#!/usr/bin/python3
"""make_moe_quant_fixture.py: an independent float64 fake quantization of
gpt-oss's forward with its mixture of experts quantized as a W8A8 MoE
kernel would (docs/metrics.md "Quantized evaluation"), for
tests/test_quant_reference.c.

    /usr/bin/python3 tests/reference/make_moe_quant_fixture.py [--out DIR]

Writes fixtures/quant/moe.h5 with one group for each of the committed
checkpoints tests/reference/hf/gptoss-f32 and gptoss-mxfp4 (its experts
dequantized from MXFP4 by gptoss_reference.dequant_mxfp4), HB windows of
T tokens a forward (every linear layer's input holds the rows of all HB
windows): calib int32 [CALIB, HB, T], tokens int32 [HB, T] (targets: the
next token in the window), loss_<mode> and keep1_loss_<mode> float64 in
make_quant_fixture.py's modes, hold_loss_w8a8 float64 [4 L] (one input
tensor in float: q/k/v's input, o's, the MLP input, the MLP hidden), and
loss_w8a8_experts_float, loss_w4a4_experts_float (every expert's product
in float: what a quantization of the router alone gives).

Each layer's MoE: the MLP input h is fake-quantized once (per tensor on
its running range, or per token), and both the router and every expert's
gate_up product read it; each expert's gate_up and down slabs are
quantized symmetric per tensor of that expert's slab (min-max); the
experts' clamped SwiGLU outputs, every (token, chosen expert) row of the
pass, are one input tensor with one range (or per token, each row on its
own min-max) before the down products. Rows at positions < keep of their
window stay in float and out of the ranges. The quantizers and the
running ranges are make_quant_fixture.py's, written from the definitions.
"""
import argparse
import json
import os
import struct
import sys

import h5py
import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gptoss_reference as gr  # noqa: E402
import hf_forwards as hff  # noqa: E402
import make_fixtures as mf  # noqa: E402
from make_quant_fixture import CALIB, FQ, KEEP, MODES, q_sym  # noqa: E402

HB, T = 12, 16  # 12 * 16 * 32 > 5000 values a tensor: w8a8-pct's percentiles are not the extremes
SEED = 20250611
HERE = os.path.dirname(os.path.abspath(__file__))


def read_weights(d):
    """The checkpoint's weights as gatelab reads them, float64; MXFP4
    experts (U8 _blocks and _scales) dequantized."""
    with open(os.path.join(d, "model.safetensors"), "rb") as fh:
        n = struct.unpack("<Q", fh.read(8))[0]
        head = json.loads(fh.read(n))
        data = fh.read()
    raw = {}
    for k, v in head.items():
        if k == "__metadata__":
            continue
        a, b = v["data_offsets"]
        dt = {"F32": "<f4", "U8": "u1"}[v["dtype"]]
        raw[k] = torch.from_numpy(np.frombuffer(data[a:b], dtype=dt).copy()).reshape(v["shape"])
    W = {}
    for k, v in raw.items():
        if k.endswith("_blocks"):
            base = k[:-len("_blocks")]
            W[base] = gr.dequant_mxfp4(v, raw[base + "_scales"])
        elif not k.endswith("_scales"):
            W[k] = v.double()
    return W


class Pass:
    """One mode's fake quantization of a pass: fq's ranges and the held
    input tensor (4 a layer: q/k/v's input, o's, the MLP input, hidden)."""

    def __init__(self, fq, experts=True):
        self.fq, self.experts = fq, experts

    def on(self, l, j):
        fq = self.fq
        return bool(fq.bits) and fq.pct != "kv" and fq.hold != 4 * l + j

    def linear(self, l, j, key, x, w, b):
        if not self.on(l, j):
            return F.linear(x, w, b)
        return F.linear(self.fq.input(key, x), q_sym(w, self.fq.bits), b)

    def slabs(self, l, j, w):
        """An expert tensor [E, in, out], each expert's slab quantized."""
        if not self.on(l, j) or not self.experts:
            return w
        return torch.stack([q_sym(w[e], self.fq.bits) for e in range(w.shape[0])])


def attention(cfg, W, p, h, l, cos, sin, qp):
    B = h.shape[0]
    H, Hkv, dh = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    pr = lambda n: qp.linear(l, 0, (l, "qkv"), h, W[p + "self_attn.%s_proj.weight" % n],
                             W[p + "self_attn.%s_proj.bias" % n])
    q = gr.rope(pr("q").view(B, T, H, dh).transpose(1, 2), cos, sin)
    k = gr.rope(pr("k").view(B, T, Hkv, dh).transpose(1, 2), cos, sin)
    v = pr("v").view(B, T, Hkv, dh).transpose(1, 2)
    k, v = qp.fq.kv(k, 2), qp.fq.kv(v, 2)  # the KV cache: keys after RoPE, values
    k, v = k.repeat_interleave(H // Hkv, dim=1), v.repeat_interleave(H // Hkv, dim=1)
    a = hff.causal_probs(q, k, gr.window(cfg, l), dh ** -0.5, sinks=W[p + "self_attn.sinks"])[..., :-1]
    o = (a @ v).transpose(1, 2).reshape(B, T, H * dh)
    return qp.linear(l, 1, (l, "o"), o, W[p + "self_attn.o_proj.weight"], W[p + "self_attn.o_proj.bias"])


def moe(cfg, W, p, h, l, qp):
    k, lim, alpha = cfg["num_experts_per_tok"], cfg.get("swiglu_limit", 7.0), 1.702
    fq = qp.fq
    x = fq.input((l, "mlp"), h) if qp.on(l, 2) else h  # the router's and the experts' input
    wr = W[p + "mlp.router.weight"]
    z = F.linear(x, q_sym(wr, fq.bits) if qp.on(l, 2) else wr, W[p + "mlp.router.bias"])
    top, idx = torch.topk(z, k, dim=-1)  # [B, T, k]
    w = torch.softmax(top, dim=-1)
    gu_w = qp.slabs(l, 2, W[p + "mlp.experts.gate_up_proj"])[idx]  # [B, T, k, d, 2ff]
    gu = torch.einsum("btd,btkdf->btkf", x, gu_w) + W[p + "mlp.experts.gate_up_proj_bias"][idx]
    gate, up = gu[..., ::2].clamp(max=lim), gu[..., 1::2].clamp(min=-lim, max=lim)
    act = (up + 1) * gate * torch.sigmoid(gate * alpha)  # [B, T, k, ff]: one row a chosen expert
    if qp.on(l, 3) and qp.experts:
        act = fq.input((l, "hidden"), act)
    dn_w = qp.slabs(l, 3, W[p + "mlp.experts.down_proj"])[idx]
    y = torch.einsum("btkf,btkfd->btkd", act, dn_w) + W[p + "mlp.experts.down_proj_bias"][idx]
    return (w[..., None] * y).sum(2)


def loss(cfg, W, ids, qp):
    """The mean loss of the windows ids [HB, T] over their next tokens."""
    eps, dh = cfg["rms_norm_eps"], cfg["head_dim"]
    inv, att = gr.yarn_inv_freq(dh, cfg["rope_theta"], cfg["rope_scaling"])
    f = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = f.cos() * att, f.sin() * att
    x = W["model.embed_tokens.weight"][ids]
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        x = x + attention(cfg, W, p, hff.rms_norm(x, W[p + "input_layernorm.weight"], eps), l, cos, sin, qp)
        x = x + moe(cfg, W, p, hff.rms_norm(x, W[p + "post_attention_layernorm.weight"], eps), l, qp)
    logits = F.linear(hff.rms_norm(x, W["model.norm.weight"], eps), W["lm_head.weight"])
    V = logits.shape[-1]
    return F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1)).item()


def run(cfg, W, calib, ids, mode, keep=0, hold=None, experts=True):
    fq = FQ(mode, keep, hold)
    qp = Pass(fq, experts)
    fq.calibrating = True
    for c in calib:
        fq.pass_id += 1
        loss(cfg, W, c, qp)
    fq.calibrating = False
    fq.pass_id += 1
    return loss(cfg, W, ids, qp)


def case(f, name, seed):
    d = os.path.join(HERE, "hf", name)
    cfg = json.load(open(os.path.join(d, "config.json")))
    W = read_weights(d)
    gen = torch.Generator().manual_seed(seed)
    calib = [torch.randint(0, cfg["vocab_size"], (HB, T), generator=gen) for _ in range(CALIB)]
    ids = torch.randint(0, cfg["vocab_size"], (HB, T), generator=gen)
    g = f.create_group(name)
    mf.put(g, "calib", torch.stack(calib).numpy().astype(np.int32))
    mf.put(g, "tokens", ids.numpy().astype(np.int32))
    with torch.no_grad():
        # the batched float forward is gptoss_reference's, window by window
        one = np.mean([F.cross_entropy(gr.forward_gptoss(cfg, W, ids[b])[0][:-1], ids[b, 1:]).item()
                       for b in range(HB)])
        assert abs(one - run(cfg, W, calib, ids, "float")) < 1e-9, "batched forward differs"
        for keep, prefix in ((0, "loss_"), (KEEP, "keep%d_loss_" % KEEP)):
            for mode in MODES:
                g.attrs[prefix + mode] = run(cfg, W, calib, ids, mode, keep)
                print("%-13s %-9s keep %d loss %.6f" % (name, mode, keep, g.attrs[prefix + mode]))
        for mode in ("w8a8", "w4a4"):
            key = "loss_%s_experts_float" % mode
            g.attrs[key] = run(cfg, W, calib, ids, mode, experts=False)
            print("%-13s %s experts in float %.6f" % (name, mode, g.attrs[key]))
        held = [run(cfg, W, calib, ids, "w8a8", 0, j) for j in range(4 * cfg["num_hidden_layers"])]
        mf.put(g, "hold_loss_w8a8", np.array(held))
        print("%-13s w8a8 one tensor in float:" % name, " ".join("%.6f" % v for v in held))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "fixtures", "quant"))
    a = ap.parse_args()
    torch.set_num_threads(1)
    path = os.path.join(a.out, "moe.h5")
    with h5py.File(path + ".tmp", "w", libver="latest") as f:
        f.attrs["generator"] = "tests/reference/make_moe_quant_fixture.py, torch %s, seed %d" % (
            torch.__version__, SEED)
        case(f, "gptoss-f32", SEED)
        case(f, "gptoss-mxfp4", SEED + 1)
    os.replace(path + ".tmp", path)
    print("%s: %.1f KB" % (path, os.path.getsize(path) / 1024))


if __name__ == "__main__":
    main()
