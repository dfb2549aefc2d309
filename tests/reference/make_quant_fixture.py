#!/usr/bin/python3
"""make_quant_fixture.py: an independent PyTorch fake quantization of the
linear layers (docs/metrics.md "Quantized evaluation"), for tests/test_quant.c.

    /usr/bin/python3 tests/reference/make_quant_fixture.py [--out DIR]

Writes fixtures/quant/quant.h5 with two cases, each quantized in the modes
w8a8, w8a8-pct and w4a4 after calibrating the input ranges on CALIB batches,
in w8a8-tok (each token's input row on its own min-max, no calibration),
and in kv8 and kv4 (every linear layer in float; the keys after RoPE and
the values, as a KV cache holds them, each position's each KV head on its
own min-max, asymmetric, no calibration; the keep1 losses leave the first
position's keys and values in float):
  trained/  the tiny model of make_fixtures.py's var-baseline (its config
            and float32-exact weights; gatelab.ref.Model's forward):
            config, params/<name>, calib int32 [CALIB, B, T], tokens,
            targets int32 [B, T], loss_<mode> float64 (loss_float too),
            keep1_loss_<mode> float64 (the first position of every window
            held out: its input rows left in float and left out of the
            per-tensor ranges, in calibration too; the 48 x 6 x 16 values
            left are too few for the percentiles to differ from the
            extremes, so keep1 w8a8-pct equals keep1 w8a8 here)
  hf/       the committed checkpoint tests/reference/hf/llama-f32, HB windows
            a forward as the trained case's batches (forward_llama_batch
            below: every linear layer's input holds the rows of all HB
            windows, so each site's range moves once a batch; in float each
            window's logits are hf_forwards.forward_llama's):
            calib int32 [CALIB, HB, T], tokens int32 [HB, T] (targets: the
            next token in the window), loss_<mode> and keep1_loss_<mode> float64
Both cases also hold hold_loss_w8a8 float64 [4 L]: the w8a8 loss with one
input tensor's sites alone in float (weights and inputs, calibration
rerun), the tensors in their order in a layer: q/k/v's input, o's, the
MLP's (gate and up), down's (--quant-source's passes).
The quantizers are written here from the definitions (weights symmetric per
tensor, inputs asymmetric per tensor on a running min-max or percentile
range, momentum 0.9, round half to even; per token: each row its own
range), not from the C code.
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
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from gatelab import ref  # noqa: E402
import make_fixtures as mf  # noqa: E402
import hf_forwards as hff  # noqa: E402

MODES = {"float": (0, None), "w8a8": (8, None), "w8a8-pct": (8, 99.99), "w4a4": (4, None),
         "w8a8-tok": (8, "token"), "kv8": (8, "kv"), "kv4": (4, "kv")}
KEEP = 1  # the held-out case: the first KEEP positions of every window
MOMENTUM = 0.9
CALIB = 2
QB = 48
HB = 12  # the checkpoint's windows a batch: 12 * 16 * 32 > 5000 values, as QB's
SEED = 20250603
LINEAR = ("w_q", "w_k", "w_v", "w_o", "w_gate", "w_up", "w_down")


def q_sym(w, bits):
    """Symmetric per-tensor fake quantization of w (max |w| range)."""
    signed = bool((w < 0).any())
    qmax = 2.0 ** (bits - signed) - 1
    qmin = -(2.0 ** (bits - 1)) if signed else 0.0
    step = max(w.abs().max().item() / qmax, 1e-8)
    return step * torch.clamp(torch.round(w.double() / step), qmin, qmax)


def q_asym(x, lo, hi, bits):
    """Asymmetric fake quantization of x on [lo, hi] widened to hold 0."""
    lo, hi = min(lo, 0.0), max(hi, 1e-8)
    qmax = 2.0 ** bits - 1
    step = max((hi - lo) / qmax, 1e-8)
    z = min(max(round_even(-lo / step), 0.0), qmax)
    return (step * (torch.clamp(torch.round(x.double() / step) + z, 0, qmax) - z)).to(x.dtype)


def q_asym_rows(x, bits):
    """Asymmetric fake quantization of each row (last axis) of x on its own
    [min, max], widened to hold 0: q_asym with a range per row."""
    xd = x.double()
    lo = torch.clamp(xd.amin(-1, keepdim=True), max=0.0)
    hi = torch.clamp(xd.amax(-1, keepdim=True), min=1e-8)
    qmax = 2.0 ** bits - 1
    step = torch.clamp((hi - lo) / qmax, min=1e-8)
    z = torch.clamp(torch.round(-lo / step), 0, qmax)
    return (step * (torch.clamp(torch.round(xd / step) + z, 0, qmax) - z)).to(x.dtype)


def round_even(v):
    return float(torch.round(torch.tensor(v, dtype=torch.float64)))


def batch_range(x, pct):
    v = np.sort(x.detach().double().numpy().ravel())
    if pct is None:
        return v[0], v[-1]
    n = len(v)
    return (v[int(np.floor((n - 1) * (100 - pct) / 100 + 0.5))],
            v[int(np.floor((n - 1) * pct / 100 + 0.5))])


class FQ:
    """The input ranges of one mode, keyed by site, running over passes."""

    def __init__(self, mode, keep=0, hold=None):
        self.bits, self.pct = MODES[mode]
        self.keep = keep  # x [B, T, cols]: positions t < keep are held out
        self.hold = hold  # the input tensor left in float (weight and input), or None
        self.ranges, self.calibrating, self.pass_id = {}, False, 0

    def input(self, key, x):
        if not self.bits or self.pct == "kv":
            return x
        rest = x[:, self.keep:]
        if self.pct == "token":
            y = q_asym_rows(rest, self.bits)
        else:
            r = self.ranges.get(key)
            if self.calibrating and (r is None or r[2] != self.pass_id):
                lo, hi = batch_range(rest, self.pct)
                if r is not None:
                    lo = MOMENTUM * r[0] + (1 - MOMENTUM) * lo
                    hi = MOMENTUM * r[1] + (1 - MOMENTUM) * hi
                r = self.ranges[key] = (lo, hi, self.pass_id)
            y = q_asym(rest, r[0], r[1], self.bits)
        return torch.cat([x[:, :self.keep], y], 1)


    def kv(self, x, axis):
        """A KV cache's keys or values x (positions on axis `axis`, a head's
        dh values on the last): in a KV mode each head's values at each
        position keep.. on their own min-max (q_asym_rows), else x."""
        if self.pct != "kv":
            return x
        head, rest = x.split([self.keep, x.shape[axis] - self.keep], dim=axis)
        return torch.cat([head, q_asym_rows(rest, self.bits)], axis)


class QW:
    """A weight whose product x @ w.t() fake-quantizes x on site key's range."""

    def __init__(self, fq, key, w):
        self.fq, self.key, self.w = fq, key, w

    def t(self):
        return self

    def __rmatmul__(self, x):
        return self.fq.input(self.key, x) @ self.w.t().to(x.dtype)


TENSORS = ("qkv", "o", "ffn", "down")  # a trained layer's input tensors, in order


def trained_params(fq, params, cfg):
    """params with every linear weight quantized and wrapped; q, k, v are
    one tensor (the fused product's) and one input site; the sites of input
    tensor fq.hold ((l, name), name in TENSORS; gate and up share "ffn")
    left in float."""
    if not fq.bits or fq.pct == "kv":
        return params
    P = dict(params)
    for l in range(cfg["n_layers"]):
        pre = "layers.%d." % l
        qkv = [pre + "attn." + n for n in ("w_q", "w_k", "w_v")]
        cat = q_sym(torch.cat([params[n].detach() for n in qkv]), fq.bits)
        rows = np.cumsum([0] + [params[n].shape[0] for n in qkv])
        for i, n in enumerate(qkv):
            P[n] = QW(fq, (l, "qkv"), cat[rows[i]:rows[i + 1]])
        P[pre + "attn.w_o"] = QW(fq, (l, "o"), q_sym(params[pre + "attn.w_o"].detach(), fq.bits))
        for n in ("w_gate", "w_up"):
            if pre + "mlp." + n in params:
                P[pre + "mlp." + n] = QW(fq, (l, "ffn"), q_sym(params[pre + "mlp." + n].detach(), fq.bits))
        P[pre + "mlp.w_down"] = QW(fq, (l, "down"), q_sym(params[pre + "mlp.w_down"].detach(), fq.bits))
    for n in list(P):
        if isinstance(P[n], QW) and P[n].key == fq.hold:
            P[n] = params[n]
    return P


def trained_case(f):
    cases = {name: (vid, cfg) for name, vid, cfg in mf.cases()}
    vid, cfg = cases["var-baseline"]
    gen = torch.Generator().manual_seed(SEED)
    params = mf.f32_exact(ref.init_params(cfg, gen))
    # QB sequences a batch: enough values (QB * T * d > 5000) that the
    # percentiles are not the extremes, so w8a8-pct differs from w8a8
    shape = (QB, cfg["seq_len"])
    calib = [torch.randint(0, cfg["vocab_size"], shape, generator=gen) for _ in range(CALIB)]
    tok = torch.randint(0, cfg["vocab_size"], shape, generator=gen)
    tgt = torch.randint(0, cfg["vocab_size"], shape, generator=gen)
    g = f.create_group("trained")
    mf.put_model(g, vid, cfg, params)
    mf.put(g, "calib", torch.stack(calib).numpy().astype(np.int32))
    mf.put(g, "tokens", tok.numpy().astype(np.int32))
    mf.put(g, "targets", tgt.numpy().astype(np.int32))
    with torch.no_grad():
        for keep, prefix in ((0, "loss_"), (KEEP, "keep%d_loss_" % KEEP)):
            for mode in MODES:
                fq = FQ(mode, keep)
                m = ref.Model(cfg, params=params)
                m.p = trained_params(fq, params, cfg)
                m.kv_hook = lambda l, k, v, fq=fq: (fq.kv(k, 1), fq.kv(v, 1))
                fq.calibrating = True
                for c in calib:
                    fq.pass_id += 1
                    m.forward(c)
                fq.calibrating = False
                fq.pass_id += 1
                loss, _ = m.loss(tok, tgt)
                g.attrs[prefix + mode] = float(loss)
                print("trained %-9s keep %d loss %.6f" % (mode, keep, float(loss)))
        # w8a8 with each input tensor alone in float: --quant-source's passes
        held = []
        for l in range(cfg["n_layers"]):
            for name in TENSORS:
                fq = FQ("w8a8", 0, (l, name))
                m = ref.Model(cfg, params=params)
                m.p = trained_params(fq, params, cfg)
                fq.calibrating = True
                for c in calib:
                    fq.pass_id += 1
                    m.forward(c)
                fq.calibrating = False
                fq.pass_id += 1
                held.append(float(m.loss(tok, tgt)[0]))
        mf.put(g, "hold_loss_w8a8", np.array(held))
        print("trained w8a8 one tensor in float:", " ".join("%.6f" % v for v in held))


def read_safetensors(path):
    with open(path, "rb") as fh:
        n = struct.unpack("<Q", fh.read(8))[0]
        head = json.loads(fh.read(n))
        data = fh.read()
    out = {}
    for k, v in head.items():
        if k == "__metadata__":
            continue
        a, b = v["data_offsets"]
        assert v["dtype"] == "F32"
        out[k] = torch.from_numpy(np.frombuffer(data[a:b], dtype="<f4").copy()).reshape(v["shape"])
    return out


def hf_linear(fq, counter):
    """F.linear with its weight quantized and its input on the next site;
    the calls reading one tensor one after another (q, k, v; gate, up) are
    one input tensor, counted in counter[1] (counter[2]: the last input),
    and the sites of input tensor fq.hold stay in float. counter = [0, -1,
    None] before a pass."""

    def linear(x, w, b=None):
        if w is None:  # the KV cache: x is (k, v) [B, Hkv, T, dh]
            return fq.kv(x[0], 2), fq.kv(x[1], 2)
        counter[0] += 1
        if x is not counter[2]:
            counter[1], counter[2] = counter[1] + 1, x
        if not fq.bits or fq.pct == "kv" or counter[1] == fq.hold:  # float
            return F.linear(x, w, b)
        return F.linear(fq.input(counter[0], x), q_sym(w, fq.bits).to(x.dtype), b)
    return linear


def forward_llama_batch(cfg, W, ids, linear):
    """The logits [B, T, V] of the windows ids [B, T] of a plain Llama (no
    bias, q/k norm or gate): hf_forwards.forward_llama's recipe with
    the B windows' rows through each linear layer at once (linear(x, w)),
    the norms on them row by row, RoPE and attention in each window."""
    assert cfg["model_type"] == "llama" and not cfg.get("attention_bias", False)
    B, T = ids.shape
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads", H)
    dh, eps, grp = d // H, cfg["rms_norm_eps"], H // Hkv
    cos, sin = hff.rope_cos_sin(T, dh, cfg.get("rope_theta", 10000.0), cfg.get("rope_scaling"))
    x = W["model.embed_tokens.weight"][ids]
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        h = hff.rms_norm(x, W[p + "input_layernorm.weight"], eps)
        q = linear(h, W[p + "self_attn.q_proj.weight"]).view(B, T, H, dh).transpose(1, 2)
        k = linear(h, W[p + "self_attn.k_proj.weight"]).view(B, T, Hkv, dh).transpose(1, 2)
        v = linear(h, W[p + "self_attn.v_proj.weight"]).view(B, T, Hkv, dh).transpose(1, 2)
        q = q * cos + hff.rotate_half(q) * sin
        k = k * cos + hff.rotate_half(k) * sin
        if linear is not F.linear:
            k, v = linear((k, v), None)  # the KV cache, as attention reads it
        k, v = k.repeat_interleave(grp, dim=1), v.repeat_interleave(grp, dim=1)
        o = torch.stack([hff.causal_attention(q[b], k[b], v[b])[0] for b in range(B)])
        x = x + linear(o.reshape(B, T, H * dh), W[p + "self_attn.o_proj.weight"])
        h = hff.rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        m = F.silu(linear(h, W[p + "mlp.gate_proj.weight"])) * linear(h, W[p + "mlp.up_proj.weight"])
        x = x + linear(m, W[p + "mlp.down_proj.weight"])
    head = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else W["lm_head.weight"]
    return hff.rms_norm(x, W["model.norm.weight"], eps) @ head.T


def hf_loss(cfg, W, ids, linear):
    """The mean loss of the windows ids [B, T] over their next tokens."""
    logits = forward_llama_batch(cfg, W, ids, linear)
    V = logits.shape[-1]
    return F.cross_entropy(logits[:, :-1].reshape(-1, V).double(), ids[:, 1:].reshape(-1)).item()


def hf_case(f, here):
    d = os.path.join(here, "hf", "llama-f32")
    cfg = json.load(open(os.path.join(d, "config.json")))
    W = read_safetensors(os.path.join(d, "model.safetensors"))
    gen = torch.Generator().manual_seed(SEED + 1)
    T = 16
    shape = (HB, T)
    calib = [torch.randint(0, cfg["vocab_size"], shape, generator=gen) for _ in range(CALIB)]
    ids = torch.randint(0, cfg["vocab_size"], shape, generator=gen)
    g = f.create_group("hf")
    mf.put(g, "calib", torch.stack(calib).numpy().astype(np.int32))
    mf.put(g, "tokens", ids.numpy().astype(np.int32))
    with torch.no_grad():
        # the batched forward in float is the one-window reference's, window by window
        lg = forward_llama_batch(cfg, W, ids, F.linear)
        for b in range(HB):
            one = hff.forward_llama(cfg, W, ids[b], "llama")[0]
            assert torch.allclose(lg[b], one, atol=1e-5, rtol=1e-5), "batched forward differs"
        for keep, prefix in ((0, "loss_"), (KEEP, "keep%d_loss_" % KEEP)):
            for mode in MODES:
                fq, counter = FQ(mode, keep), [0, -1, None]
                linear = hf_linear(fq, counter)
                fq.calibrating = True
                for c in calib:
                    fq.pass_id += 1
                    counter[:] = [0, -1, None]
                    hf_loss(cfg, W, c, linear)
                fq.calibrating = False
                fq.pass_id += 1
                counter[:] = [0, -1, None]
                loss = hf_loss(cfg, W, ids, linear)
                g.attrs[prefix + mode] = loss
                print("hf      %-9s keep %d loss %.6f" % (mode, keep, loss))
        # w8a8 with each input tensor alone in float (4 a layer: q/k/v's, o's,
        # gate/up's, down's)
        held = []
        for j in range(4 * cfg["num_hidden_layers"]):
            fq, counter = FQ("w8a8", 0, j), [0, -1, None]
            linear = hf_linear(fq, counter)
            fq.calibrating = True
            for c in calib:
                fq.pass_id += 1
                counter[:] = [0, -1, None]
                hf_loss(cfg, W, c, linear)
            fq.calibrating = False
            fq.pass_id += 1
            counter[:] = [0, -1, None]
            held.append(hf_loss(cfg, W, ids, linear))
        mf.put(g, "hold_loss_w8a8", np.array(held))
        print("hf      w8a8 one tensor in float:", " ".join("%.6f" % v for v in held))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "fixtures", "quant"))
    a = ap.parse_args()
    torch.set_num_threads(1)
    path = os.path.join(a.out, "quant.h5")
    with h5py.File(path + ".tmp", "w", libver="latest") as f:
        f.attrs["generator"] = "tests/reference/make_quant_fixture.py, torch %s, seed %d" % (
            torch.__version__, SEED)
        trained_case(f)
        hf_case(f, here)
    os.replace(path + ".tmp", path)
    print("%s: %.1f KB" % (path, os.path.getsize(path) / 1024))


if __name__ == "__main__":
    main()
