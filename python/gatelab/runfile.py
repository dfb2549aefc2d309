"""A gatelab run file (docs/runfile.md) as named numpy arrays and tables.

Only h5py and numpy. Everything is read when the file is loaded (run files
are small), so the HDF5 file is closed again at once and a run that is
still training can be reloaded to see its newer rows.

A file is vetted before it is read, as the C tools vet one
(src/runfile/runfile_vet.c): libhdf5 is not hardened against hostile
files (a corrupt heap crashes or hangs it, a corrupt length makes it
allocate gigabytes), so a child process with bounded memory, CPU and
wall time walks the file and reads it first; a file that crashes, hangs
or exhausts that child, holds an external link (a read through it would
open another file), or declares a dataset larger than the child's memory
bound is refused with one RunFileError naming the file.
"""
import json
import os
import resource
import signal
import subprocess
import sys
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


class RunFileError(ValueError):
    """A file that is no readable gatelab run file; the message names it."""


# The vetting child's bounds, those of the C vet (runfile_vet.c): memory
# growth 1 GiB plus 8 times the file's size, time 5 s plus 1 s per 8 MiB
# of file, at most 60 s.
VET_MEM_BYTES = 1 << 30
VET_MEM_PER_BYTE = 8
VET_SECONDS_MIN, VET_SECONDS_MAX = 5, 60
VET_BYTES_PER_SECOND = 8 << 20
_VET_REFUSED, _VET_NOMEM = 2, 3


def vet_budget(path):
    """(bytes the vetting child may add, its seconds) for the file at path."""
    size = os.path.getsize(path)
    secs = min(VET_SECONDS_MAX, VET_SECONDS_MIN + size // VET_BYTES_PER_SECOND)
    return VET_MEM_BYTES + VET_MEM_PER_BYTE * size, secs


def _walk(path, group, budget, seen):
    """Refuse external links and datasets declaring more than budget bytes
    under group; soft links are not followed (their targets are walked
    where they live), each object once."""
    import h5py
    import numpy as np
    for name in group:
        link = group.get(name, getlink=True)
        where = group.name.rstrip("/") + "/" + name
        if isinstance(link, h5py.ExternalLink):
            raise RunFileError("%s: %s is an external link to %s: a run file holds no links "
                               "to other files" % (path, where, link.filename))
        if not isinstance(link, h5py.HardLink):
            continue
        obj = group[name]
        if obj.id.addr in seen if hasattr(obj.id, "addr") else False:
            continue
        seen.add(getattr(obj.id, "addr", None))
        if isinstance(obj, h5py.Group):
            _walk(path, obj, budget, seen)
        elif isinstance(obj, h5py.Dataset):
            n = int(np.prod(obj.shape, dtype=object)) if obj.shape else 1
            if n * obj.dtype.itemsize > budget:
                raise RunFileError("%s: dataset %s declares %s of %d bytes (%d bytes), over the "
                                   "%d bytes a run file this size may need: the file is corrupt"
                                   % (path, where, obj.shape, obj.dtype.itemsize,
                                      n * obj.dtype.itemsize, budget))


def _vet_main(path, budget, secs):
    """The vetting child: bound itself, walk the file, read it as Run does.
    Exits 0, _VET_REFUSED with the reason on stderr, or _VET_NOMEM."""
    import h5py
    with open("/proc/self/statm") as f:
        vm = int(f.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (vm + budget, vm + budget))
    resource.setrlimit(resource.RLIMIT_CPU, (secs, secs + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        with h5py.File(path, "r") as f:
            _walk(path, f, budget, set())
        Run(path, vet=False)
    except MemoryError:
        os._exit(_VET_NOMEM)
    except Exception as e:  # every refusal is one line naming the file
        msg = str(e) if str(e).startswith(path) else "%s: %s" % (path, e)
        sys.stderr.write(" ".join(msg.split()) + "\n")
        sys.stderr.flush()
        os._exit(_VET_REFUSED)
    os._exit(0)


def vet(path):
    """Vet the file at path in a bounded child process (see the module's
    text); None, or RunFileError with one line naming the file."""
    if not os.path.isfile(path):
        raise RunFileError("%s: not a regular file" % path)
    budget, secs = vet_budget(path)
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from gatelab.runfile import _vet_main; "
            "_vet_main(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    try:
        r = subprocess.run([sys.executable, "-c", code, pkg, path, str(budget), str(secs)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                           timeout=secs + 5)
    except subprocess.TimeoutExpired:
        raise RunFileError("%s: reading this file hung for %d s: the file is corrupt"
                           % (path, secs + 5)) from None
    why = r.stderr.decode(errors="replace").strip().splitlines()
    if r.returncode == 0:
        return
    if r.returncode == _VET_REFUSED and why:
        raise RunFileError(why[-1])
    if r.returncode == _VET_NOMEM:
        raise RunFileError("%s: reading this file needs over %d MB of memory: the file is "
                           "corrupt" % (path, budget >> 20))
    if r.returncode == -signal.SIGXCPU:
        raise RunFileError("%s: reading this file took over %d s of CPU: the file is corrupt"
                           % (path, secs))
    if r.returncode < 0:
        raise RunFileError("%s: the HDF5 library crashed reading this file (signal %d): the "
                           "file is corrupt" % (path, -r.returncode))
    raise RunFileError("%s: the vetting process failed (exit %d): %s"
                       % (path, r.returncode, why[-1] if why else "no message"))


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
    .pretrained (the attributes of /pretrained) and .layer_window (int32
    [L]: each layer's sliding window, 0 for full causal attention; None
    for a run without /pretrained/layer_window). The file is vetted first
    (vet); vet=False skips that, for the vetting child itself."""

    def __init__(self, path, vet=True):
        self.path = path
        if vet:
            globals()["vet"](path)
        with h5py.File(path, "r") as f:
            self.attrs = _attrs(f)
            if self.attrs.get("schema") != "gatelab-run":
                raise RunFileError("%s: not a gatelab run file" % path)
            self.config = _attrs(f["config"]) if "config" in f else OrderedDict()
            self.config.pop("text", None)
            self.train = _group(f["metrics/train"]) if "metrics/train" in f else {}
            self.eval = _group(f["metrics/eval"]) if "metrics/eval" in f else {}
            self.summary = _attrs(f["summary"]) if "summary" in f else OrderedDict()
            self.pretrained = _attrs(f["pretrained"]) if "pretrained" in f else None
            self.layer_window = (f["pretrained/layer_window"][()]
                                 if "pretrained/layer_window" in f else None)
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
