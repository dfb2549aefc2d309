"""gatelab.ref: the PyTorch twin of the gatelab model.

It implements docs/MODEL.md exactly, option by option, so the C model can be
checked against it (tests/reference/make_fixtures.py) and timed against it
(tests/reference/torch_bench.py), and a run's model rebuilt (gatelab.model).

The model is built from a config dict whose keys are the INI keys of
src/config/config.h (n_layers, d_model, ..., gate_pos, normaliser, ..., lr, ...),
with enums spelled as in the INI files (norm = rms|layer, gate_pos = none|g1..g5,
...). Parameters live in an ordered dict keyed by the names of the comment at
the top of src/model/model.h, in PyTorch [out, in] order, so a gatelab run file's
/params/<name> loads straight in.

Run with Debian's /usr/bin/python3 (python3-torch 1.13).
"""
import math
from collections import OrderedDict

import torch
import torch.nn.functional as F

# The configs (the C catalog read from `gatelab variants --json`, defaults,
# the INI reader) live in ref_config.py; they are this module's names too.
from .ref_config import (  # noqa: F401
    Catalog,
    auto_d_ff,
    catalog,
    load_catalog,
    parse_ini,
    resolve,
    use_catalog,
    variant_fields,
)

# ---------------------------------------------------------------- shapes

def gate_geometry(cfg):
    """(G, Cg, channels, score shape) of the gated tensor, or None."""
    pos = cfg["gate_pos"]
    if pos == "none":
        return None
    d, H, Hkv, dh = cfg["d_model"], cfg["n_heads"], cfg["n_kv_heads"], cfg["head_dim"]
    G, Cg = {"g1": (H, dh), "g2": (Hkv, dh), "g3": (Hkv, dh),
             "g4": (H, dh), "g5": (1, d)}[pos]
    inp = cfg["gate_input"]
    if inp == "const":
        return G, Cg, G * Cg, [G * Cg]
    if inp == "headslice":
        if G != H or d % H:
            raise ValueError("gate_input headslice needs a G1/G4 gate and H | d_model")
        return G, Cg, H, [H, d // H]
    ch = G if cfg["gate_gran"] == "head" else G * Cg
    return G, Cg, ch, [ch, cfg["gate_in_dim"] or d]


def gated_norm_shapes(cfg, norm):
    """GatedNorm's W_down [r, d] and W_up [d, r] after norm (gated_norm = r)."""
    r, d = cfg["gated_norm"], cfg["d_model"]
    return [(norm + ".gn_down", [r, d], 1), (norm + ".gn_up", [d, r], 1)] if r else []


def param_shapes(cfg):
    """Ordered (name, shape, decay) triples exactly as src/model/model.h lists them."""
    d, H, Hkv, dh = cfg["d_model"], cfg["n_heads"], cfg["n_kv_heads"], cfg["head_dim"]
    V, ff = cfg["vocab_size"], cfg["d_ff"]
    layer = cfg["norm"] == "layer"
    out = [("tok_embed", [V, d], 1)]
    if cfg["pos"] == "learned":
        out.append(("pos_embed", [cfg["max_pos"], d], 1))
    k = cfg["sink_token"]
    if k == 1:
        out.append(("sink_embed", [d], 0))
    elif k > 1:
        out.append(("sink_embed", [k, d], 0))
    geo = gate_geometry(cfg)
    for l in range(cfg["n_layers"]):
        p = "layers.%d." % l
        out.append((p + "attn_norm.weight", [d], 0))
        if layer:
            out.append((p + "attn_norm.bias", [d], 0))
        out += gated_norm_shapes(cfg, p + "attn_norm")
        out += [(p + "attn.w_q", [H * dh, d], 1), (p + "attn.w_k", [Hkv * dh, d], 1),
                (p + "attn.w_v", [Hkv * dh, d], 1), (p + "attn.w_o", [d, H * dh], 1)]
        if cfg["qk_norm"]:
            out += [(p + "attn.q_norm", [dh], 0), (p + "attn.k_norm", [dh], 0)]
        if geo:
            shape = geo[3]
            out.append((p + "attn.gate.w", shape, int(len(shape) == 2)))
            if cfg["gate_input"] == "headslice":
                out.append((p + "attn.gate.b", [H], 0))
        if cfg["normaliser"] == "sink-logit":
            out.append((p + "attn.sink_logit", [H], 0))
        if cfg["kv_bias"]:
            out += [(p + "attn.kv_bias_k", [H, dh], 0), (p + "attn.kv_bias_v", [H, dh], 0)]
        if cfg["y_mod"] == "rmsnorm":
            out.append((p + "attn.y_norm", [H * dh], 0))
        if cfg["diff_attn"]:
            out.append((p + "attn.diff_lambda", [4, dh // 2], 0))
        if cfg["ssmax"]:
            out.append((p + "attn.ssmax_s", [H], 0))
        if cfg["fox"]:
            out += [(p + "attn.fox_w", [H, d], 1), (p + "attn.fox_b", [H], 0)]
        out.append((p + "mlp_norm.weight", [d], 0))
        if layer:
            out.append((p + "mlp_norm.bias", [d], 0))
        out += gated_norm_shapes(cfg, p + "mlp_norm")
        if cfg["mlp"] == "swiglu":
            out.append((p + "mlp.w_gate", [ff, d], 1))
        out += [(p + "mlp.w_up", [ff, d], 1), (p + "mlp.w_down", [d, ff], 1)]
        if cfg["norm_place"] == "sandwich":
            for site in ("attn_post_norm", "mlp_post_norm"):
                out.append((p + site + ".weight", [d], 0))
                if layer:
                    out.append((p + site + ".bias", [d], 0))
    out.append(("final_norm.weight", [d], 0))
    if layer:
        out.append(("final_norm.bias", [d], 0))
    out += gated_norm_shapes(cfg, "final_norm")
    if not cfg["tied_embed"]:
        out.append(("lm_head", [V, d], 1))
    return out


def init_params(cfg, gen, dtype=torch.float64):
    """Random weights for fixtures (large enough that every path matters):
    matrices N(0, 1.2/sqrt(fan_in)) (0.3 at fan_in 16), embeddings N(0, 0.5),
    norm weights 1 + N(0, 0.1), biases and sink logits N(0, 0.1/0.3)."""
    params = OrderedDict()
    for name, shape, _ in param_shapes(cfg):
        leaf = name.split(".")[-1]
        r = torch.randn(*shape, generator=gen, dtype=torch.float64)
        if name in ("tok_embed", "pos_embed", "sink_embed"):
            t = 0.5 * r
        elif leaf.endswith("norm") or leaf == "weight":
            t = 1.0 + 0.1 * r
        elif leaf == "bias" or name.endswith("gate.b"):
            t = 0.1 * r
        elif leaf == "sink_logit":
            t = 0.3 * r
        elif leaf in ("kv_bias_k", "kv_bias_v"):
            t = 0.5 * r
        elif leaf == "diff_lambda":
            t = 0.3 * r
        elif leaf == "ssmax_s":
            t = 0.6 + 0.2 * r
        elif leaf == "fox_b":
            t = 1.0 + 0.5 * r
        elif len(shape) == 1:  # g1-const theta
            t = 0.5 * r
        else:
            t = 1.2 / math.sqrt(shape[1]) * r
        params[name] = t.to(dtype).requires_grad_(True)
    return params


def init_params_model(cfg, gen, dtype=torch.float32):
    """The C model's own initialisation scheme (MODEL.md "Initialisation"):
    matrices N(0, init_std), w_o and w_down init_std / sqrt(2 L); norm
    weights 1, biases 0, sink_logit 0, g1-const theta 0, head-slice b 0, a
    gate_init = zero gate 0;
    kv_bias_* and sink_embed N(0, init_std). For the bench."""
    std = cfg.get("init_std", 0.02)
    params = OrderedDict()
    for name, shape, _ in param_shapes(cfg):
        leaf = name.split(".")[-1]
        if leaf.endswith("norm") or leaf == "weight":
            t = torch.ones(*shape, dtype=torch.float64)
        elif leaf == "ssmax_s":
            t = torch.full(shape, 1.0 / math.log(max(2, cfg["seq_len"])), dtype=torch.float64)
        elif leaf == "diff_lambda":
            t = 0.1 * torch.randn(*shape, generator=gen, dtype=torch.float64)
        elif leaf in ("bias", "b", "sink_logit", "fox_b") or (leaf == "w" and len(shape) == 1) \
                or (name.endswith("gate.w") and cfg["gate_init"] == "zero"):
            t = torch.zeros(*shape, dtype=torch.float64)
        else:
            sd = std / math.sqrt(2 * cfg["n_layers"]) if leaf in ("w_o", "w_down") else std
            t = sd * torch.randn(*shape, generator=gen, dtype=torch.float64)
        params[name] = t.to(dtype).requires_grad_(True)
    return params


# ---------------------------------------------------------------- pieces

def rmsnorm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def layernorm(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = (x - mu).pow(2).mean(-1, keepdim=True)
    return (x - mu) * torch.rsqrt(var + eps) * w + b


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def rope_dim(cfg):
    """The width RoPE rotates: a whole head, or each half of a diff-attn head
    (the Differential Transformer rotates each half as a head of its own)."""
    return cfg["head_dim"] // 2 if cfg["diff_attn"] else cfg["head_dim"]


def rope_inv_freq(cfg):
    """inv_freq [rope_dim/2] (float64) and the YaRN factor m."""
    dh, base, s = rope_dim(cfg), cfg["rope_base"], cfg["yarn_scale"]
    i = torch.arange(dh // 2, dtype=torch.float64)
    inv = base ** (-2.0 * i / dh)
    if s <= 1.0:
        return inv, 1.0
    lam = 2.0 * math.pi / inv
    r = cfg["seq_len"] / lam
    g = ((r - 1.0) / (32.0 - 1.0)).clamp(0.0, 1.0)
    inv = (1.0 - g) * inv / s + g * inv
    return inv, 0.1 * math.log(s) + 1.0


def rope_tables(cfg, Ti, dtype):
    inv, m = rope_inv_freq(cfg)
    ang = torch.arange(Ti, dtype=torch.float64)[:, None] * inv[None, :]
    return ang.cos().to(dtype), ang.sin().to(dtype), m


def rope_apply(x, cos, sin):
    """x [B, Ti, nh, dh], rotate-half; cos/sin [Ti, dh/2]."""
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)


def gate_act(z, act):
    if act == "sigmoid":
        return torch.sigmoid(z)
    if act == "silu":
        return F.silu(z)
    if act == "identity":
        return z
    if act == "2sigmoid":
        return 2.0 * torch.sigmoid(z)
    if act == "softplus":
        return F.softplus(z)
    return 0.5 + 0.5 * torch.sigmoid(z)  # ns-sigmoid


def stickbreak(s, mask):
    """a[t,j] = sigmoid(s_tj) prod_{j<k<=t} (1 - sigmoid(s_tk)) over the
    visible keys (mask), as logs: log sigmoid(s_tj) + sum_{k>j} log sigmoid(-s_tk)."""
    lb = F.logsigmoid(s)
    lrest = torch.where(mask, F.logsigmoid(-s), torch.zeros_like(s))
    after = lrest.flip(-1).cumsum(-1).flip(-1) - lrest  # sum over k > j
    return torch.where(mask, torch.exp(lb + after), torch.zeros_like(s))


def layer_window(cfg, l):
    """The sliding window of layer l: window, or 0 (full) on the odd layers
    under window_layers = alternate (gpt-oss's layer_types)."""
    if cfg["window"] <= 0 or (cfg["window_layers"] == "alternate" and l % 2):
        return 0
    return cfg["window"]


def visible(cfg, l, Ti):
    """mask [1, 1, Ti, Ti]: query t sees key j <= t, and under a window of W
    only the sink/register tokens j < sink_token and the keys t - j < W."""
    t = torch.arange(Ti)[:, None]
    j = torch.arange(Ti)[None, :]
    m = j <= t
    W = layer_window(cfg, l)
    if W:
        m = m & ((j < cfg["sink_token"]) | (t - j < W))
    return m[None, None]


def alibi_bias(cfg, Ti, dtype):
    """[1, H, Ti, Ti]: -m_h (t - j), m_h = 2^(-8 (h + 1) / H) (Press et al.
    2022, sec. 3), or 0 without ALiBi."""
    if cfg["pos"] != "alibi":
        return torch.zeros(1, 1, Ti, Ti, dtype=dtype)
    H = cfg["n_heads"]
    m = torch.tensor([2.0 ** (-8.0 * (h + 1) / H) for h in range(H)], dtype=dtype)
    d = (torch.arange(Ti)[:, None] - torch.arange(Ti)[None, :]).to(dtype)
    return -(m[:, None, None] * d)[None]


def diff_lambda_init(l):
    return 0.8 - 0.6 * math.exp(-0.3 * l)


# ---------------------------------------------------------------- model

class Model:
    """The gatelab decoder as a function of an ordered parameter dict."""

    def __init__(self, cfg, params=None, gen=None, dtype=torch.float64):
        self.cfg = resolve(cfg)
        self.dtype = dtype
        if params is None:
            if gen is None:
                gen = torch.Generator().manual_seed(0)
            params = init_params(self.cfg, gen, dtype)
        self.p = params
        self.geo = gate_geometry(self.cfg)
        self.kv_hook = None  # (l, k, v) -> (k, v): a KV cache's change to them, or None

    def norm(self, x, prefix):
        w = self.p[prefix + ".weight"]
        if self.cfg["norm"] == "layer":
            return layernorm(x, w, self.p[prefix + ".bias"], self.cfg["norm_eps"])
        return rmsnorm(x, w, self.cfg["norm_eps"])

    def gated(self, y, prefix):
        """GatedNorm (Qiu et al. 2026) on norm prefix's output y, when on:
        y * sigmoid(silu(y W_down^T) W_up^T)."""
        if not self.cfg["gated_norm"]:
            return y
        h = F.silu(y @ self.p[prefix + ".gn_down"].t())
        return y * torch.sigmoid(h @ self.p[prefix + ".gn_up"].t())

    def sub_input(self, x, prefix):
        """A sub-layer's input: its norm, except under post-LN (x itself)."""
        return x if self.cfg["norm_place"] == "post" else self.gated(self.norm(x, prefix), prefix)

    def residual(self, x, f, l, site):
        """x plus sub-layer `site`'s output f (attn or mlp) under the norm
        placement: pre x + f; post Norm(x + f) with the sub-layer's own norm
        (Vaswani et al. 2017); sandwich x + Norm'(f) (Ding et al. 2021,
        Gemma 2)."""
        place = self.cfg["norm_place"]
        if place == "post":
            return self.norm(x + f, "layers.%d.%s_norm" % (l, site))
        if place == "sandwich":
            return x + self.norm(f, "layers.%d.%s_post_norm" % (l, site))
        return x + f

    def gate(self, l, xn, t):
        """Apply layer l's gate to t [B, Ti, G*Cg]; scores read xn."""
        c, P = self.cfg, self.p
        G, Cg, _, _ = self.geo
        B, Ti, _ = t.shape
        w = P["layers.%d.attn.gate.w" % l]
        inp = c["gate_input"]
        if inp == "full":  # gate_in_dim K > 0: only X's first K dims
            z = xn[..., :w.shape[1]] @ w.t()
        elif inp == "headslice":
            H = c["n_heads"]
            xs = xn.reshape(B, Ti, H, c["d_model"] // H)
            z = (xs * w).sum(-1) + P["layers.%d.attn.gate.b" % l]
        else:
            z = w
        g = gate_act(z, c["gate_act"])
        tv = t.reshape(B, Ti, G, Cg)
        if inp == "const":
            gg = g.reshape(G, Cg)
        elif inp == "headslice" or c["gate_gran"] == "head":
            gg = g.reshape(B, Ti, G, 1)
        elif c["gate_shared"]:
            gg = g.reshape(B, Ti, G, Cg).mean(2, keepdim=True)
        else:
            gg = g.reshape(B, Ti, G, Cg)
        out = tv * gg if c["gate_form"] == "mult" else tv + gg
        return out.reshape(B, Ti, G * Cg)

    def normalise(self, l, s, q, mask):
        """Attention weights from scores s [B,H,Ti,Ti] (q for the kv-bias slot).
        Returns (a [B,H,Ti,Ti], a_slot [B,H,Ti,1] or None)."""
        c, P = self.cfg, self.p
        B, H, Ti, dh = q.shape
        kind = c["normaliser"]
        cols = []  # extra always-visible columns in front: (score, has value)
        if c["kv_bias"]:
            kb = P["layers.%d.attn.kv_bias_k" % l]  # [H, dh]
            cols.append((torch.einsum("bhtd,hd->bht", q, kb)[..., None] / math.sqrt(dh), True))
        if kind == "softmax1":
            cols.append((torch.zeros(B, H, Ti, 1, dtype=s.dtype), False))
        elif kind == "sink-logit":
            b = P["layers.%d.attn.sink_logit" % l]
            cols.append((b.reshape(1, H, 1, 1).expand(B, H, Ti, 1), False))
        ne = len(cols)
        full = torch.cat([x for x, _ in cols] + [s], dim=-1)
        fmask = torch.cat([torch.ones(B, H, Ti, ne, dtype=torch.bool),
                           mask.expand(B, H, Ti, Ti)], dim=-1)
        if kind in ("softmax", "softmax1", "sink-logit", "clipped"):
            a = torch.softmax(full.masked_fill(~fmask, float("-inf")), dim=-1)
            if kind == "clipped":
                gamma = -c["clip_alpha"] / Ti
                a = torch.clamp((1.0 - gamma) * a + gamma, 0.0, 1.0)
                a = torch.where(fmask, a, torch.zeros_like(a))
        elif kind == "sigmoid":
            a = torch.sigmoid(full.masked_fill(~fmask, 0.0) - math.log(Ti))
            a = torch.where(fmask, a, torch.zeros_like(a))
        elif kind == "stickbreak":
            a = stickbreak(full, fmask)
        else:  # softpick
            e = torch.expm1(full.masked_fill(~fmask, 0.0))
            e = torch.where(fmask, e, torch.zeros_like(e))
            den = e.abs().sum(-1, keepdim=True) + c["softpick_eps"]
            a = torch.relu(e) / den
        slot = None
        if c["kv_bias"]:
            slot = a[..., 0:1]
        return a[..., ne:], slot

    def fox_bias(self, l, xn, Ti):
        """D[b,h,t,j] = sum_{m in (j, t]} log f_m, f = sigmoid(xn w^T + b)."""
        pre = "layers.%d.attn." % l
        lf = F.logsigmoid(xn @ self.p[pre + "fox_w"].t() + self.p[pre + "fox_b"])
        c = lf.cumsum(1).transpose(1, 2)  # [B, H, Ti]
        return c[..., :, None] - c[..., None, :]

    def diff_maps(self, l, q, k, mask, bias):
        """softmax(q1 k1^T / sqrt(dh/2) + bias) - lambda softmax(q2 k2^T / sqrt(dh/2) + bias)."""
        h = q.shape[-1] // 2
        lam = self.p["layers.%d.attn.diff_lambda" % l]
        lmb = (torch.exp((lam[0] * lam[1]).sum()) - torch.exp((lam[2] * lam[3]).sum())
               + diff_lambda_init(l))
        maps = []
        for part in (slice(0, h), slice(h, 2 * h)):
            s = q[..., part] @ k[..., part].transpose(-1, -2) / math.sqrt(h) + bias
            maps.append(torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1))
        return maps[0] - lmb * maps[1]

    def attention(self, l, x, rope):
        c, P = self.cfg, self.p
        pre = "layers.%d.attn." % l
        B, Ti, _ = x.shape
        H, Hkv, dh = c["n_heads"], c["n_kv_heads"], c["head_dim"]
        xn = self.sub_input(x, "layers.%d.attn_norm" % l)
        q = xn @ P[pre + "w_q"].t()
        k = xn @ P[pre + "w_k"].t()
        v = xn @ P[pre + "w_v"].t()
        gp = c["gate_pos"]
        if gp == "g4":
            q = self.gate(l, xn, q)
        if gp == "g3":
            k = self.gate(l, xn, k)
        if gp == "g2":
            v = self.gate(l, xn, v)
        q = q.reshape(B, Ti, H, dh)
        k = k.reshape(B, Ti, Hkv, dh)
        v = v.reshape(B, Ti, Hkv, dh)
        if c["qk_norm"]:
            q = rmsnorm(q, P[pre + "q_norm"], c["norm_eps"])
            k = rmsnorm(k, P[pre + "k_norm"], c["norm_eps"])
        if rope is not None:
            cos, sin, m = rope
            rd = rope_dim(c)
            q = rope_apply(q.reshape(B, Ti, -1, rd), cos, sin).reshape(B, Ti, H, dh) * m
            k = rope_apply(k.reshape(B, Ti, -1, rd), cos, sin).reshape(B, Ti, Hkv, dh) * m
        if self.kv_hook is not None:  # what a KV cache holds: k after RoPE, v
            k, v = self.kv_hook(l, k, v)
        if c["ssmax"]:  # logits of query t scaled by s_h ln(n_t), n_t the keys it sees
            n = visible(c, l, Ti)[0, 0].sum(-1).to(q.dtype).log()
            q = q * n[None, :, None, None] * P[pre + "ssmax_s"][None, None, :, None]
        rep = H // Hkv  # head h reads kv head h // rep
        q = q.transpose(1, 2)
        k = k.repeat_interleave(rep, dim=2).transpose(1, 2)
        v = v.repeat_interleave(rep, dim=2).transpose(1, 2)
        mask = visible(c, l, Ti)
        bias = alibi_bias(c, Ti, q.dtype)
        if c["diff_attn"]:
            a, slot = self.diff_maps(l, q, k, mask, bias), None
        else:
            s = q @ k.transpose(-1, -2) / math.sqrt(dh) + bias
            if c["fox"]:
                s = s + self.fox_bias(l, xn, Ti)
            a, slot = self.normalise(l, s, q, mask)
        y = a @ v
        if slot is not None:
            y = y + slot * P[pre + "kv_bias_v"][None, :, None, :]
        if c["xsa"]:  # Zhai 2026: drop y's component along the token's own value
            y = y - (y * v).sum(-1, keepdim=True) * v / ((v * v).sum(-1, keepdim=True) + 1e-12)
        y = y.transpose(1, 2)  # [B, Ti, H, dh]
        if c["y_mod"] == "rmsnorm":
            y = rmsnorm(y, P[pre + "y_norm"].reshape(H, dh), c["norm_eps"])
        elif c["y_mod"] == "silu":
            y = F.silu(y)
        y = y.reshape(B, Ti, H * dh)
        if gp == "g1":
            y = self.gate(l, xn, y)
        o = y @ P[pre + "w_o"].t()
        if gp == "g5":
            o = self.gate(l, xn, o)
        return o

    def mlp(self, l, x):
        P, pre = self.p, "layers.%d.mlp." % l
        xn = self.sub_input(x, "layers.%d.mlp_norm" % l)
        if self.cfg["mlp"] == "swiglu":
            h = F.silu(xn @ P[pre + "w_gate"].t()) * (xn @ P[pre + "w_up"].t())
        else:
            h = gelu_tanh(xn @ P[pre + "w_up"].t())
        return h @ P[pre + "w_down"].t()

    def forward(self, tokens, block_inputs=None):
        """tokens [B, T] (long) -> logits [B, T, V] of the real positions.
        block_inputs: a list that gets each block's input residual stream
        [B, Ti, d] (sink rows included), to take gradients with respect to."""
        c, P = self.cfg, self.p
        B, T = tokens.shape
        x = P["tok_embed"][tokens]
        extra = c["sink_token"]
        if extra:
            sk = P["sink_embed"].reshape(1, extra, -1).expand(B, extra, -1)
            x = torch.cat([sk, x], 1)
        Ti = T + extra
        if c["pos"] == "learned":
            x = x + P["pos_embed"][:Ti][None]
        rope = rope_tables(c, Ti, x.dtype) if c["pos"] == "rope" else None
        for l in range(c["n_layers"]):
            if block_inputs is not None:
                x.retain_grad()
                block_inputs.append(x)
            x = self.residual(x, self.attention(l, x, rope), l, "attn")
            x = self.residual(x, self.mlp(l, x), l, "mlp")
        xf = self.gated(self.norm(x, "final_norm"), "final_norm")
        head = P["tok_embed"] if c["tied_embed"] else P["lm_head"]
        logits = xf @ head.t()
        return logits[:, extra:]

    def loss(self, tokens, targets):
        logits = self.forward(tokens)
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1)), logits

    def decay_flags(self):
        return {n: dec for n, _, dec in param_shapes(self.cfg)}


# ---------------------------------------------------------------- optimiser

def lr_at_step(cfg, s):
    lr, warm, steps = cfg["lr"], cfg["warmup"], cfg["steps"]
    if warm > 0 and s < warm:
        return lr * (s + 1) / warm
    p = (s - warm) / max(1, steps - warm)
    p = min(p, 1.0)
    f = cfg["min_lr_frac"]
    return lr * (f + (1.0 - f) * 0.5 * (1.0 + math.cos(math.pi * p)))


def clip_grads(params, clip):
    """Global-norm clipping as MODEL.md states; returns the pre-clip norm."""
    grads = [p.grad for p in params if p.grad is not None]
    n = math.sqrt(sum(float((g.double() ** 2).sum()) for g in grads))
    if clip > 0 and n > clip:
        for g in grads:
            g.mul_(clip / (n + 1e-6))
    return n


def make_optimizer(model):
    c = model.cfg
    flags = model.decay_flags()
    dec = [p for n, p in model.p.items() if flags[n]]
    nodec = [p for n, p in model.p.items() if not flags[n]]
    # torch decays by lr_t * weight_decay; wd_scale = fixed wants
    # weight_decay * lr_t / lr (the schedule's multiplier alone)
    wd = c["weight_decay"] / c["lr"] if c["wd_scale"] == "fixed" else c["weight_decay"]
    groups = [{"params": dec, "weight_decay": wd},
              {"params": nodec, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=c["lr"], betas=(c["beta1"], c["beta2"]),
                             eps=c["adam_eps"])


def train_step(model, opt, tokens, targets, s):
    """One step: zero grads, forward, backward, clip, AdamW at lr_at_step(s).
    Returns the loss before the update."""
    for p in model.p.values():
        p.grad = None
    loss, _ = model.loss(tokens, targets)
    loss.backward()
    clip_grads(list(model.p.values()), model.cfg["grad_clip"])
    lr = lr_at_step(model.cfg, s)
    for gr in opt.param_groups:
        gr["lr"] = lr
    opt.step()
    return float(loss)
