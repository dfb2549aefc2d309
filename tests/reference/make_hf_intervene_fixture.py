#!/usr/bin/python3
"""make_hf_intervene_fixture.py: references for `gatelab intervene` on an
inspected checkpoint (tests/test_hf_inspect_cli.c), from the plain PyTorch
forward of hf_forwards.py on the same tiny gated Qwen3 snapshots.

For each gated fixture it rebuilds the fixture's weights and tokens (same
seed, so they equal the committed snapshot) and writes
tests/reference/hf/<name>/intervene.h5:
  attention_gates_open [L,H,T,T]   maps with every gate score set to 1
  attention_no_bos     [L,H,T-1,T-1] maps of the window without its first token
  loss_none, loss_gates_open, loss_no_bos (attrs): mean cross-entropy of
    predicting tokens 2..T-1 (no-bos: the same tokens, one position earlier)
  loss_head_zero (heads HEADS zeroed before o_proj), loss_gates_open_layer0
    (gates open in layer 0 only), loss_gate_const (every score GATE_C),
    loss_mact_zero_layer0, loss_mact_mean_layer0 (after layer 0, the entries
    above max(MACT_ABS, MACT_RATIO * median |h|) set to 0 or their feature's
    mean over the window)

    /usr/bin/python3 tests/reference/make_hf_intervene_fixture.py
"""
import os
import sys

import h5py
import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_forwards as hff  # noqa: E402
import make_hf_fixtures as mk  # noqa: E402

NAMES = ["qwen3-elementwise-f32-sharded", "qwen3-headwise-f32"]
HEADS = [(0, 1), (1, 0)]  # head-zero's heads (layer, head): "0.1,1.0"
GATE_C = 0.5
MACT_ABS, MACT_RATIO = 0.0, 3.0  # low enough for a tiny random checkpoint


def mact(mode):
    """resid_fn of mact-zero/-mean in layer 0."""
    def fn(l, x):
        if l != 0:
            return x
        thr = max(MACT_ABS, MACT_RATIO * torch.quantile(x.abs().double().reshape(-1), 0.5).item())
        big = x.abs() > thr
        fill = x.double().mean(0, keepdim=True).expand_as(x).to(x.dtype) if mode == "mean" \
            else torch.zeros_like(x)
        return torch.where(big, fill, x)
    return fn


def heads_zeroed(W, cfg):
    """W with the o_proj columns of HEADS zeroed: their output removed
    before the projection."""
    W = dict(W)
    H = cfg["num_attention_heads"]
    dh = cfg.get("head_dim", cfg["hidden_size"] // H)
    for l, h in HEADS:
        key = "model.layers.%d.self_attn.o_proj.weight" % l
        w = W[key].clone()
        w[:, h * dh:(h + 1) * dh] = 0
        W[key] = w
    return W


def loss_from(logits, ids, first):
    """Mean CE of logits[t] predicting ids[t+1], for t + 1 >= first."""
    t = torch.arange(len(ids) - 1)
    keep = t + 1 >= first
    return F.cross_entropy(logits[:-1][keep].double(), ids[1:][keep]).item()


def build(name):
    family, cfg, dtype, shards = mk.FIXTURES[name]
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    W = mk.weights_llama(cfg, family, g)
    cfg = dict(cfg, torch_dtype="bfloat16" if dtype == "BF16" else "float32")
    ids = torch.randint(0, cfg["vocab_size"], (mk.T_TOK,), generator=g)
    Wr = mk.rounded(W, dtype)
    d = os.path.join(mk.HERE, "hf", name)
    with h5py.File(os.path.join(d, "expected.h5"), "r") as f:  # the same weights and tokens
        assert np.array_equal(f["tokens"][()], ids.numpy()), name
    with torch.no_grad():
        lg0, _, _, _ = hff.forward_llama(cfg, Wr, ids, family)
        lg1, att1, _, _ = hff.forward_llama(cfg, Wr, ids, family, gates_open=True)
        lg2, att2, _, _ = hff.forward_llama(cfg, Wr, ids[1:], family)
        lg3, _, _, _ = hff.forward_llama(cfg, heads_zeroed(Wr, cfg), ids, family)
        lg4, _, _, _ = hff.forward_llama(cfg, Wr, ids, family,
                                         gate_fn=lambda l, s: torch.ones_like(s) if l == 0 else s)
        lg5, _, _, _ = hff.forward_llama(cfg, Wr, ids, family,
                                         gate_fn=lambda l, s: torch.full_like(s, GATE_C))
        lg6, _, _, _ = hff.forward_llama(cfg, Wr, ids, family, resid_fn=mact("zero"))
        lg7, _, _, _ = hff.forward_llama(cfg, Wr, ids, family, resid_fn=mact("mean"))
    with h5py.File(os.path.join(d, "intervene.h5"), "w") as f:
        kw = dict(compression="gzip", shuffle=True)
        f.create_dataset("tokens", data=ids.numpy().astype(np.int32))
        f.create_dataset("attention_gates_open", data=torch.stack(att1).numpy().astype(np.float32), **kw)
        f.create_dataset("attention_no_bos", data=torch.stack(att2).numpy().astype(np.float32), **kw)
        f.attrs["loss_none"] = loss_from(lg0, ids, 2)
        f.attrs["loss_gates_open"] = loss_from(lg1, ids, 2)
        f.attrs["loss_no_bos"] = loss_from(lg2, ids[1:], 1)
        f.attrs["loss_head_zero"] = loss_from(lg3, ids, 2)
        f.attrs["loss_gates_open_layer0"] = loss_from(lg4, ids, 2)
        f.attrs["loss_gate_const"] = loss_from(lg5, ids, 2)
        f.attrs["loss_mact_zero_layer0"] = loss_from(lg6, ids, 2)
        f.attrs["loss_mact_mean_layer0"] = loss_from(lg7, ids, 2)
        print(name, dict(f.attrs))


def main():
    torch.set_num_threads(1)
    for name in NAMES:
        build(name)


if __name__ == "__main__":
    sys.exit(main())
