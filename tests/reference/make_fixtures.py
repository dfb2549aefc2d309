#!/usr/bin/python3
"""make_fixtures.py: write the PyTorch reference fixtures the C model is
checked against (tests/test_reference.c).

    /usr/bin/python3 tests/reference/make_fixtures.py [--out DIR] [--only NAME]

One HDF5 file per case in tests/reference/fixtures/<name>.h5:
  attr config      INI text, `variant = <id>` first, then every field
                   explicitly (so it overrides whatever the id sets)
  attr atol, rtol  per-tensor tolerance |c - ref| <= atol + rtol |ref|
  attr loss_atol, loss_rtol   the same for loss and losses10
  attr tolerances  the same four numbers as text
  tokens, targets  [B, T] int32
  params/<name>    float32 weights (names and shapes of src/model/model.h)
  logits           [B, T, V] float32
  loss             scalar float64 (mean cross-entropy)
  grads/<name>     float32 gradient of the mean loss
  losses10         [10] float64: loss before each of 10 AdamW steps on the
                   same batch (schedule, clipping, AdamW as docs/MODEL.md)

Everything is computed in float64 from float32-representable weights. The
script checks itself before writing: autograd against central finite
differences on a few entries per case, and the 10-step trajectory rerun in
float32 must stay inside the tolerance the C side is held to.
"""
import argparse
import ctypes
import os
import sys
from collections import OrderedDict

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from gatelab import ref  # noqa: E402

B, T = 2, 7
ATOL, RTOL = 1e-4, 1e-3
LOSS_ATOL, LOSS_RTOL = 1e-4, 1e-3
SEED = 20250601

# The tiny base every variant sits on.
TINY = OrderedDict(
    n_layers=2, d_model=16, n_heads=4, n_kv_heads=2, head_dim=4, d_ff=16,
    vocab_size=11, seq_len=T, max_pos=16, norm="rms", pos="rope", mlp="swiglu",
    rope_base=10000.0, yarn_scale=1.0, qk_norm=0, tied_embed=0, norm_eps=1e-5,
)

OPTIM = OrderedDict(
    batch_size=B, steps=10, lr=1e-2, min_lr_frac=0.1, warmup=2,
    weight_decay=0.1, beta1=0.9, beta2=0.95, adam_eps=1e-8, grad_clip=1.0,
)

# Option configs: together they cover every non-variant option.
OPTIONS = OrderedDict([
    # GPT-2 style: LayerNorm, learned positions, GELU, tied, MHA
    ("opt-gpt2", dict(norm="layer", pos="learned", mlp="gelu", tied_embed=1,
                      n_kv_heads=4, d_ff=24, max_pos=16)),
    # RoPE + YaRN x2 (seq_len 64 > T puts the ramp inside (0, 1)), QK-norm,
    # GQA with H*dh != d_model, untied
    ("opt-yarn-qknorm", dict(pos="rope", yarn_scale=2.0, seq_len=64,
                             rope_base=500.0, qk_norm=1, n_kv_heads=2,
                             head_dim=8, tied_embed=0)),
    # no positions, RMSNorm, SwiGLU, tied, sink token, MQA
    ("opt-nopos-sink", dict(pos="none", norm="rms", mlp="swiglu", tied_embed=1,
                            sink_token=1, n_kv_heads=1)),
    # sink token with learned positions (the sink takes pos_embed[0]),
    # LayerNorm + SwiGLU, with a G1 gate
    ("opt-learned-sink", dict(pos="learned", norm="layer", sink_token=1,
                              max_pos=9, gate_pos="g1")),
    # sink token with RoPE (token t at position t+1), GELU, QK-norm, G5 gate
    ("opt-rope-sink", dict(pos="rope", mlp="gelu", sink_token=1,
                           gate_pos="g5", gate_gran="elem", qk_norm=1)),
    # FoX as its paper runs it (no positions) with SSMax on top, MQA
    ("opt-fox-ssmax-nopos", dict(pos="none", fox=1, ssmax=1, n_kv_heads=1)),
    # three registers with learned positions, differential attention
    # without its RMSNorm, QK-norm
    ("opt-registers-diff", dict(pos="learned", max_pos=16, sink_token=3,
                                diff_attn=1, qk_norm=1)),
    # stick-breaking under YaRN x2 with SSMax and a G1 gate
    ("opt-stickbreak-ssmax-yarn", dict(normaliser="stickbreak", ssmax=1,
                                       yarn_scale=2.0, seq_len=64,
                                       gate_pos="g1")),
    # gpt-oss's attention: sliding-window layers alternating with full
    # ones, learned per-head sink logits, GQA
    ("opt-window-alt-sinklogit", dict(window=3, window_layers="alternate",
                                      normaliser="sink-logit")),
    # a window on every layer with two registers (they stay visible),
    # clipped softmax
    ("opt-window-registers", dict(window=2, sink_token=2, normaliser="clipped")),
    # ALiBi with a window and softmax1, G1 gate
    ("opt-alibi-window", dict(pos="alibi", window=4, normaliser="softmax1",
                              gate_pos="g1")),
    # ALiBi under differential attention; NoPE-style, no other positions
    ("opt-alibi-diff", dict(pos="alibi", diff_attn=1, y_mod="rmsnorm")),
    # post-LN (LayerNorm) with learned positions and a G1 gate
    ("opt-post-layer", dict(norm_place="post", norm="layer", pos="learned",
                            gate_pos="g1")),
    # sandwich norms (RMSNorm), NoPE, registers, a sliding window
    ("opt-sandwich-nope", dict(norm_place="sandwich", pos="none", sink_token=2,
                               window=3)),
    # the kinked normalisers under the two placements
    ("opt-post-softpick", dict(norm_place="post", normaliser="softpick")),
    ("opt-sandwich-clipped", dict(norm_place="sandwich", norm="layer",
                                  normaliser="clipped", gate_pos="g5")),
    # XSA under the per-head RMSNorm of Y, a sink token and MQA
    ("opt-xsa-ynorm-sink", dict(xsa=1, y_mod="rmsnorm", sink_token=1, n_kv_heads=1)),
    # a narrow-input 2 sigma gate on V, elementwise, under XSA
    ("opt-narrow-g2-xsa", dict(gate_pos="g2", gate_in_dim=5, gate_act="2sigmoid", xsa=1)),
    # GatedNorm of rank 3 after LayerNorms, learned positions, a sink token, tied
    ("opt-gatednorm-ln", dict(gated_norm=3, norm="layer", pos="learned", max_pos=16,
                              sink_token=1, tied_embed=1)),
    # weight decay by the schedule alone (wd_scale = fixed), strong enough
    # (5% a step at the peak) that lr-scaled decay would leave the losses'
    # tolerance within the ten steps
    ("opt-wd-fixed", dict(wd_scale="fixed", weight_decay=0.05)),
])

# Optimizer keys written only where a case sets them away from the default,
# so the fixtures that predate them keep their config text.
OPTIM_EXTRA = ["wd_scale"]

def config_keys():
    """Keys written to every config text, in this order after `variant`:
    the base, the architecture keys, the variant fields of the C catalog,
    the normalisers' constants, the optimizer."""
    return (list(TINY) + ["window", "window_layers", "norm_place"]
            + ref.catalog().variant_keys + ["clip_alpha", "softpick_eps"] + list(OPTIM))


def fmt(v):
    if isinstance(v, float):
        return repr(v)
    return str(v)


# The data source only has to validate: bigram allows a tiny vocabulary.
DATA = OrderedDict(data="bigram", bos=1, bigram_vocab=8, bigram_triggers=2)


def config_text(name_id, cfg):
    """INI text: the tiny base shape (what the catalog id applies to: the C
    catalog refuses more-kv-heads on its MHA defaults), then `variant = id`,
    then every field explicitly, overriding whatever the id set. Option
    configs (name_id "custom", not a catalog id) apply `baseline` and record
    their name with `variant_name`."""
    vid = name_id if name_id in ref.catalog().rows else "baseline"
    lines = ["; base shape the variant id is applied to"]
    lines += ["%s = %s" % (k, fmt(v)) for k, v in TINY.items()]
    lines += ["; the variant id, then every resolved field explicitly",
              "variant = %s" % vid]
    lines += ["%s = %s" % (k, fmt(cfg[k])) for k in config_keys()]
    lines += ["%s = %s" % (k, fmt(cfg[k])) for k in OPTIM_EXTRA
              if cfg[k] != ref.catalog().defaults[k]]
    lines += ["%s = %s" % (k, fmt(v)) for k, v in DATA.items()]
    if vid != name_id:
        lines.append("variant_name = %s" % name_id)  # recorded, applies nothing
    return "\n".join(lines) + "\n"


def cases():
    """(name, variant id, full config dict) for every fixture."""
    out = []
    for vid in ref.catalog().ids:
        cfg = OrderedDict(TINY)
        cfg.update(ref.variant_fields(vid, ref.resolve(TINY)))
        cfg.update(OPTIM)
        out.append(("var-" + vid, vid, ref.resolve(cfg)))
    for name, over in OPTIONS.items():
        cfg = OrderedDict(TINY)
        cfg.update(ref.catalog().variant_base)
        cfg.update(OPTIM)
        cfg.update(over)
        out.append((name, "custom", ref.resolve(cfg)))
    return out


def f32_exact(params):
    """Round every weight to float32 so the C side holds exactly the same."""
    return OrderedDict((n, p.detach().float().double().requires_grad_(True))
                       for n, p in params.items())


def batch(cfg, gen):
    V = cfg["vocab_size"]
    tok = torch.randint(0, V, (B, T), generator=gen)
    tgt = torch.randint(0, V, (B, T), generator=gen)
    tok[0, 0] = 0  # a BOS-like first token
    return tok, tgt


def fd_check(model, tok, tgt, gen, name, n=3):
    """Central differences against autograd on n random entries of a few
    tensors; raises when they disagree."""
    loss, _ = model.loss(tok, tgt)
    grads = torch.autograd.grad(loss, list(model.p.values()))
    gmap = dict(zip(model.p.keys(), grads))
    names = list(model.p.keys())
    picks = [names[0], names[-1]] + [
        names[int(torch.randint(0, len(names), (1,), generator=gen))] for _ in range(n)]
    h = 1e-6
    worst = 0.0
    for pn in picks:
        p = model.p[pn]
        flat = p.detach().view(-1)
        i = int(torch.randint(0, flat.numel(), (1,), generator=gen))
        old = float(flat[i])
        with torch.no_grad():
            flat[i] = old + h
            lp = float(model.loss(tok, tgt)[0])
            flat[i] = old - h
            lm = float(model.loss(tok, tgt)[0])
            flat[i] = old
        fd = (lp - lm) / (2 * h)
        ag = float(gmap[pn].reshape(-1)[i])
        err = abs(fd - ag)
        worst = max(worst, err)
        if err > 1e-6 + 1e-5 * abs(fd):
            raise RuntimeError("%s: grad check failed on %s[%d]: autograd %.9g fd %.9g"
                               % (name, pn, i, ag, fd))
    return worst


def trajectory(cfg, params, tok, tgt, dtype):
    """Loss before each of 10 AdamW steps, from a copy of params."""
    p = OrderedDict((n, t.detach().to(dtype).clone().requires_grad_(True))
                    for n, t in params.items())
    model = ref.Model(cfg, params=p, dtype=dtype)
    opt = ref.make_optimizer(model)
    return [ref.train_step(model, opt, tok, tgt, s) for s in range(10)]


def within(got, want, atol, rtol):
    return all(abs(g - w) <= atol + rtol * abs(w) for g, w in zip(got, want))


def _no_attrs_hint():
    """HDF5's H5Pset_dset_no_attrs_hint (1.10.5+) trims each dataset's object
    header, about 150 bytes of 450, which h5py does not expose. Reached through
    the very library h5py runs on; without it files are just a little larger."""
    try:
        lib = ctypes.CDLL("libhdf5_serial.so.%d" % 103)
        fn = lib.H5Pset_dset_no_attrs_hint
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int64, ctypes.c_uint]
    return fn


NO_ATTRS_HINT = _no_attrs_hint()


def put(f, name, data):
    """Dataset `name` (intermediate groups created) holding data."""
    data = np.ascontiguousarray(data)
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    if NO_ATTRS_HINT is not None:
        NO_ATTRS_HINT(dcpl.id, 1)
    space = (h5py.h5s.create_simple(data.shape) if data.shape
             else h5py.h5s.create(h5py.h5s.SCALAR))
    lcpl = h5py.h5p.create(h5py.h5p.LINK_CREATE)
    lcpl.set_create_intermediate_group(True)
    ds = h5py.h5d.create(f.id, name.encode(), h5py.h5t.py_create(data.dtype),
                         space, dcpl=dcpl, lcpl=lcpl)
    ds.write(h5py.h5s.ALL, h5py.h5s.ALL, data)


def put_model(g, vid, cfg, params):
    """The model of a fixture group g as tests/testutil.c's tu_fx_model reads
    it: the config text (variant vid) as the uint8 dataset "config" and each
    parameter as float32 "params/NAME"."""
    put(g, "config", np.frombuffer(config_text(vid, cfg).encode(), dtype=np.uint8))
    for n, p in params.items():
        put(g, "params/" + n, p.detach().numpy().astype(np.float32))

def model_case(f, name, vid, cfg, seed):
    """A new case group `name` of f holding a model initialised from seed
    (put_model) and one batch of its tokens ("tokens", int32); returns the
    group, the parameters and the tokens."""
    gen = torch.Generator().manual_seed(seed)
    params = f32_exact(ref.init_params(cfg, gen))
    tok, _ = batch(cfg, gen)
    g = f.create_group(name)
    put_model(g, vid, cfg, params)
    put(g, "tokens", tok.numpy().astype(np.int32))
    return g, params, tok

def write_cases(path, generator, names, make_case, seed):
    """Writes the fixture file path (through path.tmp, so a failed run leaves
    no half file): its generator attribute, then make_case(f, name, vid, cfg,
    seed + k) for the k-th of names, taken from cases()."""
    known = {name: (vid, cfg) for name, vid, cfg in cases()}
    with h5py.File(path + ".tmp", "w", libver="latest") as f:
        f.attrs["generator"] = generator
        for k, name in enumerate(names):
            vid, cfg = known[name]
            make_case(f, name, vid, cfg, seed + k)
    os.replace(path + ".tmp", path)
    print("%s: %.1f KB" % (path, os.path.getsize(path) / 1024))


def make_one(name, vid, cfg, outdir, seed):
    gen = torch.Generator().manual_seed(seed)
    params = f32_exact(ref.init_params(cfg, gen))
    tok, tgt = batch(cfg, gen)
    model = ref.Model(cfg, params=params)
    loss, logits = model.loss(tok, tgt)
    loss.backward()
    fd = fd_check(ref.Model(cfg, params=f32_exact(params)), tok, tgt, gen, name)
    l64 = trajectory(cfg, params, tok, tgt, torch.float64)
    l32 = trajectory(cfg, params, tok, tgt, torch.float32)
    if abs(l64[0] - float(loss)) > 1e-12:
        raise RuntimeError("%s: trajectory start differs from the loss" % name)
    if not within(l32, l64, LOSS_ATOL / 4, LOSS_RTOL / 4):
        raise RuntimeError("%s: float32 trajectory leaves the tolerance: %s vs %s"
                           % (name, l32, l64))
    path = os.path.join(outdir, name + ".h5")
    tmp = path + ".tmp"
    with h5py.File(tmp, "w", libver="latest") as f:
        f.attrs["config"] = config_text(vid, cfg)
        f.attrs["variant"] = vid
        f.attrs["atol"] = ATOL
        f.attrs["rtol"] = RTOL
        f.attrs["loss_atol"] = LOSS_ATOL
        f.attrs["loss_rtol"] = LOSS_RTOL
        f.attrs["tolerances"] = ("atol=%g rtol=%g loss_atol=%g loss_rtol=%g"
                                 % (ATOL, RTOL, LOSS_ATOL, LOSS_RTOL))
        f.attrs["generator"] = ("tests/reference/make_fixtures.py, torch %s, seed %d"
                                % (torch.__version__, seed))
        put(f, "tokens", tok.numpy().astype(np.int32))
        put(f, "targets", tgt.numpy().astype(np.int32))
        put(f, "logits", logits.detach().numpy().astype(np.float32))
        put(f, "loss", np.float64(float(loss)))
        put(f, "losses10", np.array(l64, dtype=np.float64))
        for n, p in params.items():
            put(f, "params/" + n, p.detach().numpy().astype(np.float32))
        for n, p in params.items():
            put(f, "grads/" + n, p.grad.numpy().astype(np.float32))
    os.replace(tmp, path)
    size = os.path.getsize(path)
    print("%-26s loss %.6f -> %.6f  fd-err %.1e  f32-dev %.1e  %5.1f KB"
          % (name, l64[0], l64[-1], fd,
             max(abs(a - b) for a, b in zip(l32, l64)), size / 1024))
    return size


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "fixtures"))
    ap.add_argument("--only", help="write just this case (e.g. var-g1-elem)")
    a = ap.parse_args()
    torch.set_num_threads(1)
    os.makedirs(a.out, exist_ok=True)
    total = 0
    for k, (name, vid, cfg) in enumerate(cases()):
        if a.only and name != a.only:
            continue
        total += make_one(name, vid, cfg, a.out, SEED + k)
    print("total %.1f KB" % (total / 1024))


if __name__ == "__main__":
    main()
