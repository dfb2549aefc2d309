"""A gatelab run file (docs/runfile.md) as named numpy arrays and tables.

Only h5py and numpy. Everything is read when the file is loaded (run files
are small), so the HDF5 file is closed again at once and a run that is
still training can be reloaded to see its newer rows.
"""
import json
import os
from collections import OrderedDict

import h5py
import numpy as np


def _text(v):
    return v.decode() if isinstance(v, bytes) else (v.item() if hasattr(v, "item") else v)


def _attrs(obj):
    return OrderedDict((k, _text(v)) for k, v in obj.attrs.items())


def _group(g):
    """A group's datasets (and subgroups, one level) as name -> numpy array."""
    out = OrderedDict()
    for k, v in g.items():
        if isinstance(v, h5py.Dataset):
            out[k] = v[()]
        else:
            for kk, vv in v.items():
                out[k + "/" + kk] = vv[()]
    return out


class Probe:
    """One probe record, /probe/step_NNNNNNN: its arrays by name (attention
    [L, H, T, T], first_col [N, L, H, T], tokens [N, T], alpha0 [L, H],
    gate_* and hidden/* where the run has them) as attributes and in
    .arrays, its HDF5 attributes (step, proxy, normaliser, ...) in .attrs."""

    def __init__(self, arrays, attrs):
        self.arrays, self.attrs = arrays, attrs
        self.step = int(attrs.get("step", -1))

    def __getattr__(self, name):
        arrays = self.__dict__.get("arrays", {})
        for k in (name, "hidden/" + name):
            if k in arrays:
                return arrays[k]
        raise AttributeError(name)

    def f_attn_layer(self):
        """Each layer's F-Attn (mean over heads) of the mean maps: the share
        of attention on position 0 over queries 1..T-1 (docs/metrics.md)."""
        A = self.arrays["attention"].astype(np.float64)
        return A[:, :, 1:, 0].mean(axis=(1, 2))

    def __repr__(self):
        return "Probe(step=%d, %s)" % (self.step, ", ".join(self.arrays))


class Run:
    """A run file: .attrs (root attributes: schema, variant, seed, status),
    .config (the resolved config, INI key -> value), .train and .eval
    (column name -> numpy array, one row per step), .summary, .params
    (name -> numpy array in PyTorch [out, in] order, src/model/model.h),
    .probes (step -> Probe), and for runs of `gatelab inspect`
    .pretrained."""

    def __init__(self, path):
        self.path = path
        with h5py.File(path, "r") as f:
            self.attrs = _attrs(f)
            if self.attrs.get("schema") != "gatelab-run":
                raise ValueError("%s: not a gatelab run file" % path)
            self.config = _attrs(f["config"]) if "config" in f else OrderedDict()
            self.config.pop("text", None)
            self.train = _group(f["metrics/train"]) if "metrics/train" in f else {}
            self.eval = _group(f["metrics/eval"]) if "metrics/eval" in f else {}
            self.summary = _attrs(f["summary"]) if "summary" in f else OrderedDict()
            self.pretrained = _attrs(f["pretrained"]) if "pretrained" in f else None
            self.params = OrderedDict(
                (k, v[()]) for k, v in f["params"].items()) if "params" in f else OrderedDict()
            self.probes = OrderedDict()
            if "probe" in f:
                for name in sorted(k for k in f["probe"] if k.startswith("step_")):
                    g = f["probe"][name]
                    p = Probe(_group(g), _attrs(g))
                    self.probes[p.step] = p

    def probe(self, step=None):
        """The probe at `step`, or the last one."""
        if not self.probes:
            raise KeyError("%s has no probe" % self.path)
        return self.probes[max(self.probes) if step is None else step]

    def table(self, name="train"):
        """.train or .eval as a pandas DataFrame (pandas needed)."""
        import pandas as pd
        return pd.DataFrame({k: v for k, v in getattr(self, name).items()})

    def log(self):
        """The run's live metrics log RUN.h5.jsonl (load_log)."""
        return load_log(self.path + ".jsonl")

    def __repr__(self):
        return "Run(%r, variant=%r, seed=%r, status=%r, %d probes)" % (
            self.path, self.attrs.get("variant"), self.attrs.get("seed"),
            self.attrs.get("status"), len(self.probes))


def load_run(path):
    """Read the run file at path (see Run)."""
    return Run(path)


def load_log(path):
    """A live metrics log (docs/runfile.md): event -> list of line dicts,
    whole lines only, so it can be read while the run trains."""
    out = OrderedDict()
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            if line.endswith("\n"):
                o = json.loads(line)
                out.setdefault(o["event"], []).append(o)
    return out
