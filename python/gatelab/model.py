"""A run's model in PyTorch with its attention maps and gate scores exposed.

The model is the project's PyTorch twin, gatelab.ref (docs/MODEL.md, option
by option): this module only records what its forward computes. Needs
PyTorch, and a gatelab binary for the twin's catalog (gatelab.ref_config).
"""
from collections import OrderedDict
from contextlib import contextmanager

import numpy as np
import torch

from . import ref


class RunModel(ref.Model):
    """gatelab.ref.Model that records, per layer, during run_with_cache:
    "attn" the attention weights over the positions [B, H, Ti, Ti] (for
    sink_token variants the sink positions come first; softmax1's and the
    sink logit's extra column and the kv-bias slot are not positions and
    are left out, as in the C model), "gate" the gate scores act(z) as the
    gate computed them (shape by gate_input and gate_gran), and "resid"
    the residual stream after each block [B, Ti, d]."""

    def __init__(self, cfg, params, dtype=torch.float64):
        super().__init__(cfg, params, dtype=dtype)
        self._rec = None
        self._layer = None

    def normalise(self, l, s, q, mask):
        a, slot = super().normalise(l, s, q, mask)
        if self._rec is not None:
            self._rec["attn"][l] = a.detach()
        return a, slot

    def diff_maps(self, l, q, k, mask):
        a = super().diff_maps(l, q, k, mask)
        if self._rec is not None:
            self._rec["attn"][l] = a.detach()
        return a

    def gate(self, l, xn, t):
        self._layer = l
        return super().gate(l, xn, t)

    def mlp(self, l, x):
        out = super().mlp(l, x)
        if self._rec is not None:
            self._rec["resid"][l] = (x + out).detach()
        return out

    @contextmanager
    def _recording(self):
        orig = ref.gate_act

        def act(z, kind):  # the twin's gate_act, with its output kept
            g = orig(z, kind)
            if self._rec is not None and self._layer is not None:
                self._rec["gate"][self._layer] = g.detach()
            return g

        L = self.cfg["n_layers"]
        self._rec = {"attn": [None] * L, "gate": [None] * L, "resid": [None] * L}
        ref.gate_act = act
        try:
            yield self._rec
        finally:
            ref.gate_act = orig
            self._rec = None

    def run_with_cache(self, tokens):
        """logits [B, T, V] and the cache (class docstring) for tokens [B, T]."""
        tokens = torch.as_tensor(np.asarray(tokens), dtype=torch.long)
        with torch.no_grad(), self._recording() as rec:
            logits = self.forward(tokens)
        return logits, rec

    def probe_maps(self, cache, proxy):
        """The maps the C probe stores for these sequences: per layer and
        head the mean over sequences of the real-token maps [L, H, T, T],
        each row first as Gu et al.'s proxy |a| / sum |a| when proxy is set
        (the run's own rule: its probe attribute "proxy"; docs/variants.md)."""
        e = self.cfg["sink_token"]
        A = torch.stack([a[:, :, e:, e:] for a in cache["attn"]])  # [L, B, H, T, T]
        if proxy:
            A = A.abs().tril()
            s = A.sum(-1, keepdim=True)
            A = torch.where(s > 0, A / s, torch.zeros_like(A))
        return A.mean(1)


def rerun_probe(run, model=None):
    """The last probe of a finished run recomputed in PyTorch from its own
    tokens and final weights: (maps [L, H, T, T] as the probe stores them,
    the cache of run_with_cache, the Probe). Only the last probe was taken
    with the final weights."""
    model = model or build_model(run)
    p = run.probe()
    _, cache = model.run_with_cache(p.tokens)
    return model.probe_maps(cache, bool(p.attrs.get("proxy", 0))), cache, p


def build_model(run, dtype=None):
    """RunModel of a Run (runfile.py) with its trained /params, in float64
    unless dtype says otherwise."""
    dtype = dtype or torch.float64
    cfg = OrderedDict((k, run.config[k]) for k in ref.catalog().defaults if k in run.config)
    params = OrderedDict((k, torch.from_numpy(np.asarray(v)).to(dtype))
                         for k, v in run.params.items())
    return RunModel(cfg, params, dtype=dtype)
