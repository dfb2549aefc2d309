"""gatelab.ref_config: the configs of the PyTorch twin (gatelab.ref).

Every key the reference reads with its default, the enums as the INI files
spell them, each catalog id's fields (src/config/variants*.c, docs/MODEL.md),
and the INI reader: what turns a gatelab config into the dict gatelab.ref.Model
is built from.

Run with Debian's /usr/bin/python3 (python3-torch 1.13).
"""
import math
from collections import OrderedDict

# Every key the reference reads, with the value it takes when a config leaves
# it out. The tiny fixture base; torch_bench.py overrides the shape.
DEFAULTS = OrderedDict(
    n_layers=2, d_model=16, n_heads=4, n_kv_heads=2, head_dim=4, d_ff=24,
    vocab_size=13, seq_len=7, max_pos=16,
    norm="rms", pos="rope", mlp="swiglu", rope_base=10000.0, yarn_scale=1.0,
    qk_norm=0, tied_embed=0, norm_eps=1e-5,
    window=0, window_layers="all", norm_place="pre",
    gate_pos="none", gate_gran="elem", gate_shared=0, gate_form="mult",
    gate_act="sigmoid", gate_input="full", gate_in_dim=0, gate_init="normal",
    normaliser="softmax",
    clip_alpha=4.0, softpick_eps=1e-6, kv_bias=0, sink_token=0, y_mod="none",
    diff_attn=0, ssmax=0, fox=0, xsa=0, gated_norm=0,
    batch_size=2, steps=10, lr=1e-2, min_lr_frac=0.1, warmup=2,
    weight_decay=0.1, beta1=0.9, beta2=0.95, adam_eps=1e-8, grad_clip=1.0,
    wd_scale="lr",
)

ENUMS = {
    "norm": ("rms", "layer"),
    "pos": ("rope", "learned", "none", "alibi"),
    "window_layers": ("all", "alternate"),
    "norm_place": ("pre", "post", "sandwich"),
    "mlp": ("swiglu", "gelu"),
    "gate_pos": ("none", "g1", "g2", "g3", "g4", "g5"),
    "gate_gran": ("elem", "head"),
    "gate_form": ("mult", "add"),
    "gate_act": ("sigmoid", "silu", "identity", "ns-sigmoid", "2sigmoid", "softplus"),
    "gate_input": ("full", "headslice", "const"),
    "gate_init": ("normal", "zero"),
    "normaliser": ("softmax", "softmax1", "sink-logit", "clipped", "sigmoid",
                   "softpick", "stickbreak"),
    "y_mod": ("none", "rmsnorm", "silu"),
    "wd_scale": ("lr", "fixed"),
}

# The field values every variant id starts from (the baseline's).
VARIANT_BASE = OrderedDict(
    gate_pos="none", gate_gran="elem", gate_shared=0, gate_form="mult",
    gate_act="sigmoid", gate_input="full", gate_in_dim=0, gate_init="normal",
    normaliser="softmax",
    kv_bias=0, sink_token=0, y_mod="none", diff_attn=0, ssmax=0, fox=0, xsa=0, gated_norm=0,
)


def _g(pos, **kw):
    d = dict(gate_pos=pos)
    d.update(kw)
    return d


# The 41 ids of docs/variants.md as explicit field changes
# over VARIANT_BASE. Shape changes of the parameter-matched ids (section B)
# depend on the base shape, so they are functions of it (see variant_fields).
VARIANTS = OrderedDict([
    # A. gated attention (Qiu et al. 2025)
    ("baseline", {}),
    ("g1-elem", _g("g1")),
    ("g2-elem", _g("g2")),
    ("g3-elem", _g("g3")),
    ("g4-elem", _g("g4")),
    ("g5-elem", _g("g5")),
    ("g1-head", _g("g1", gate_gran="head")),
    ("g2-head", _g("g2", gate_gran="head")),
    ("g1-shared", _g("g1", gate_shared=1)),
    ("g2-shared", _g("g2", gate_shared=1)),
    ("g1-add-silu", _g("g1", gate_form="add", gate_act="silu")),
    ("g1-mult-silu", _g("g1", gate_act="silu")),
    ("g1-add-id", _g("g1", gate_form="add", gate_act="identity")),
    ("sdpa-rmsnorm", dict(y_mod="rmsnorm")),
    ("sdpa-silu", dict(y_mod="silu")),
    ("g1-const", _g("g1", gate_input="const")),
    ("g1-ns", _g("g1", gate_act="ns-sigmoid")),
    # B. parameter-matched baselines (shape set in variant_fields)
    ("more-kv-heads", {}),
    ("more-q-heads", {}),
    ("wider-ffn", {}),
    ("g1-elem-matched", _g("g1")),
    # C. other sink remedies
    ("softmax1", dict(normaliser="softmax1")),
    ("sink-logit", dict(normaliser="sink-logit")),
    ("kv-bias", dict(kv_bias=1)),
    ("sink-token", dict(sink_token=1)),
    ("clipped-softmax", dict(normaliser="clipped", clip_alpha=4.0)),
    ("head-gate-linear", _g("g1", gate_gran="head", gate_input="headslice")),
    ("sigmoid-attn", dict(normaliser="sigmoid")),
    ("softpick", dict(normaliser="softpick")),
    # D. remedies from the literature
    ("diff-attn", dict(diff_attn=1, y_mod="rmsnorm")),
    ("ssmax", dict(ssmax=1)),
    ("stickbreak", dict(normaliser="stickbreak")),
    ("fox", dict(fox=1)),
    ("registers", dict(sink_token=4)),
    # E. stability controls
    ("qk-norm", dict(qk_norm=1)),
    # F. the gates and sink remedies of current models
    ("g1-head-narrow", _g("g1", gate_gran="head", gate_in_dim=12)),
    ("g1-head-2sig", _g("g1", gate_gran="head", gate_act="2sigmoid", gate_init="zero")),
    ("g1-head-softplus", _g("g1", gate_gran="head", gate_act="softplus")),
    ("g1-softplus", _g("g1", gate_act="softplus")),
    ("gated-norm", dict(gated_norm=16)),
    ("xsa", dict(xsa=1)),
])


def _mlp_mats(cfg):
    return 3 if cfg["mlp"] == "swiglu" else 2


def variant_fields(vid, base):
    """Explicit field values of variant vid over the config dict base.

    Returns a dict of every variant field plus any shape field the id changes.
    The parameter-matched ids follow the rule of src/config/variants.c, each worth
    about g1-elem's d*H*dh gate params per layer: more-kv-heads doubles
    n_kv_heads; more-q-heads adds query heads with head_dim fixed (with GQA
    H/(2 Hkv) rounded, times Hkv; with MHA H/4 and the kv heads follow);
    wider-ffn / g1-elem-matched widen / narrow d_ff by gate/(mats*d) rounded
    to a multiple of 8, at least 8."""
    if vid not in VARIANTS:
        raise KeyError("unknown variant id '%s'" % vid)
    out = OrderedDict(VARIANT_BASE)
    out.update(VARIANTS[vid])
    d, H, Hkv = base["d_model"], base["n_heads"], base["n_kv_heads"]
    dh = base["head_dim"] or d // H
    ffn_delta = max(8, 8 * int(math.floor(d * H * dh / (_mlp_mats(base) * d) / 8.0 + 0.5)))
    if vid == "more-kv-heads":
        out["n_kv_heads"] = 2 * Hkv
    elif vid == "more-q-heads":
        out["head_dim"] = dh
        if Hkv == H:
            out["n_heads"] = out["n_kv_heads"] = H + max(1, int(math.floor(H / 4.0 + 0.5)))
        else:
            out["n_heads"] = H + max(1, int(math.floor(H / (2.0 * Hkv) + 0.5))) * Hkv
    elif vid == "wider-ffn":
        out["d_ff"] = base["d_ff"] + ffn_delta
    elif vid == "g1-elem-matched":
        out["d_ff"] = base["d_ff"] - ffn_delta
    return out


def resolve(cfg):
    """A complete config dict: defaults, then cfg; checks enum spellings."""
    out = OrderedDict(DEFAULTS)
    for k, v in cfg.items():
        out[k] = v
    for k, allowed in ENUMS.items():
        if out[k] not in allowed:
            raise ValueError("%s = %r: expected one of %s" % (k, out[k], allowed))
    if not out["head_dim"]:
        out["head_dim"] = out["d_model"] // out["n_heads"]
    return out


def parse_ini(text):
    """key = value lines (sections and comments ignored) -> dict of typed values."""
    cfg = OrderedDict()
    for line in text.splitlines():
        line = line.split("#")[0].split(";")[0].strip()
        if not line or line.startswith("["):
            continue
        k, v = (s.strip() for s in line.split("=", 1))
        if k in DEFAULTS and isinstance(DEFAULTS[k], int):
            cfg[k] = int(v)
        elif k in DEFAULTS and isinstance(DEFAULTS[k], float):
            cfg[k] = float(v)
        else:
            cfg[k] = v
    if "variant" in cfg and cfg["variant"] in VARIANTS:
        # the id first, explicit fields after it override (as the C loader)
        merged = OrderedDict(variant_fields(cfg["variant"], resolve(cfg)))
        merged.update(cfg)
        cfg = merged
    return cfg
