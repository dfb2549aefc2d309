"""python_gatelab.py SRCDIR GATELAB: the Python package python/gatelab
refuses, with one RunFileError naming the file and within its time bound,
every fuzzer-found corrupt run file (tests/fuzz/regressions/runread and
tests/data/hdf5-crash.h5: crashes, hangs and huge allocations inside
libhdf5), an external link and a declared-but-unwritten huge dataset;
reads each layer's window of a run of `gatelab inspect` (gemma2-f32's
{4, 0, 4}; None for a trained run and for an inspected run written
without it); loads tiny runs trained by the C binary into named arrays
and tables, and
rebuilds each run's model in PyTorch whose attention maps (as the probe
stores them, proxy maps for softmax1) and gate scores match the C probe's
to 1e-4. Skipped (77) without h5py or PyTorch."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

src, exe = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
try:
    import numpy as np
    import h5py
except ImportError as e:
    print("SKIP:", e)
    sys.exit(77)
sys.path.insert(0, os.path.join(src, "python"))
import gatelab  # noqa: E402
from gatelab.runfile import RunFileError  # noqa: E402

fail = 0


def bad(msg):
    global fail
    print("FAIL:", msg)
    fail = 1


def refused(path, *words):
    """load_run(path) raises one RunFileError naming path (and words), in
    a child process here so a crash or hang of the reader is a failure."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import gatelab\n"
            "try:\n    gatelab.load_run(sys.argv[2])\n"
            "except gatelab.runfile.RunFileError as e:\n    print(e); sys.exit(0)\n"
            "sys.exit(5)")
    t0 = time.time()
    try:
        r = subprocess.run([sys.executable, "-c", code, os.path.join(src, "python"), path],
                           capture_output=True, text=True, timeout=80)
    except subprocess.TimeoutExpired:
        return bad("%s: the reader hung" % path)
    line = r.stdout.strip()
    print("%s: %.1f s: %s" % (os.path.basename(path), time.time() - t0, line))
    if r.returncode != 0 or "\n" in line or not line.startswith(path):
        bad("%s: not refused in one line naming it (exit %d): %r %r"
            % (path, r.returncode, line, r.stderr[-300:]))
    for w in words:
        if w not in line:
            bad("%s: %r not in %r" % (path, w, line))


def vet_tests(tmp):
    """The corrupt files of the fuzzers, and two made here."""
    corpus = sorted(glob.glob(os.path.join(src, "tests", "fuzz", "regressions", "runread", "*")))
    corpus.append(os.path.join(src, "tests", "data", "hdf5-crash.h5"))
    good = ("ok-", "attr-double", "config-normaliser", "probe-normaliser", "status-outside")
    for path in corpus:
        if not os.path.basename(path).startswith(good):  # the C side reads these; so may we
            refused(path)
    base = os.path.join(tmp, "vet-base.h5")
    subprocess.run([exe, "train", "--config", os.path.join(src, "experiments", "tiny.ini"),
                    "--quiet", "--out", base], check=True)
    gatelab.load_run(base)
    other = os.path.join(tmp, "other.h5")
    with h5py.File(other, "w") as f:
        f["x"] = np.arange(4)
    ext = os.path.join(tmp, "external.h5")
    shutil.copy(base, ext)
    with h5py.File(ext, "a") as f:
        f["summary/elsewhere"] = h5py.ExternalLink(other, "/x")
    refused(ext, "external link", other)
    huge = os.path.join(tmp, "huge.h5")
    shutil.copy(base, huge)
    with h5py.File(huge, "a") as f:  # 23.8 GiB declared, nothing written
        f["probe"]["step_0000060"].create_dataset("big", shape=(800, 1000, 1000, 8), dtype="f4")
    refused(huge, "/probe/step_0000060/big", "declares")


def layer_window_tests(tmp):
    """Run.layer_window: /pretrained/layer_window of an inspected run, None
    without it."""
    ids = os.path.join(tmp, "ids.txt")
    with open(ids, "w") as f:
        f.write("1 2 3 4 5 6 7 8\n3 4 5 6 7 8 9 10\n")
    path = os.path.join(tmp, "gemma2.h5")
    subprocess.run([exe, "inspect", os.path.join(src, "tests", "reference", "hf", "gemma2-f32"),
                    "--tokens", ids, "--out", path, "-q"], check=True)
    w = gatelab.load_run(path).layer_window
    if w is None or w.dtype != np.int32 or list(w) != [4, 0, 4]:
        bad("gemma2-f32: layer_window %r, not int32 [4, 0, 4]" % (w,))
    older = os.path.join(tmp, "gemma2-older.h5")
    shutil.copy(path, older)
    with h5py.File(older, "a") as f:
        del f["pretrained/layer_window"]
    run = gatelab.load_run(older)
    if run.layer_window is not None or run.pretrained is None:
        bad("an inspected run without /pretrained/layer_window: %r" % (run.layer_window,))
    if gatelab.load_run(os.path.join(tmp, "vet-base.h5")).layer_window is not None:
        bad("a trained run has a layer_window")


with tempfile.TemporaryDirectory(prefix="gatelab-python-vet-") as tmp:
    vet_tests(tmp)
    layer_window_tests(tmp)
try:
    import torch  # noqa: F401
except ImportError as e:
    print("SKIP:", e)
    sys.exit(fail or 77)
from gatelab import ref  # noqa: E402
from gatelab.model import rerun_probe  # noqa: E402

ref.use_catalog(exe)  # the twin's catalog from the binary under test

with tempfile.TemporaryDirectory(prefix="gatelab-python-") as tmp:
    for variant in ("baseline", "g1-elem", "softmax1"):
        path = os.path.join(tmp, variant + ".h5")
        subprocess.run([exe, "train", "--config", os.path.join(src, "experiments", "tiny.ini"),
                        "--set", "variant=" + variant, "--quiet", "--out", path], check=True)
        run = gatelab.load_run(path)
        c = run.config
        if run.attrs["variant"] != variant or c["n_layers"] != 2 or run.attrs["status"] != "done":
            bad("%s: attrs/config %r %r" % (variant, run.attrs, dict(c)))
        n = c["steps"]
        if list(run.train["step"]) != list(range(n)) or run.train["loss"].shape != (n,):
            bad("%s: train table %r" % (variant, run.train["step"]))
        if list(run.eval["step"]) != [20, 40, 60]:
            bad("%s: eval steps %r" % (variant, run.eval["step"]))
        p = run.probe()
        if p.step != 60 or p.attention.shape != (2, 2, 32, 32) or p.tokens.shape != (4, 32):
            bad("%s: probe %r" % (variant, p))
        log = run.log()
        fa = log["probe"][-1]["f_attn_layer"]
        if not np.allclose(fa, p.f_attn_layer(), atol=1e-6):
            bad("%s: the log's F-Attn %r is not the probe's %r" % (variant, fa, p.f_attn_layer()))
        maps, cache, _ = rerun_probe(run)
        d = float(np.abs(maps.numpy() - p.attention).max())
        print("%s: max |torch - C| attention %.3g (proxy %d)" % (variant, d, p.attrs["proxy"]))
        if not d < 1e-4:
            bad("%s: attention differs from the C probe by %g" % (variant, d))
        if (variant == "softmax1") != bool(p.attrs["proxy"]):
            bad("%s: proxy attribute %r" % (variant, p.attrs["proxy"]))
        if "gate_channel_mean" in p.arrays:
            g = np.stack([x.numpy() for x in cache["gate"]])  # [L, B, T, C]
            dg = float(np.abs(g.mean(axis=(1, 2)) - p.gate_channel_mean).max())
            print("%s: max |torch - C| gate channel mean %.3g" % (variant, dg))
            if not dg < 1e-4:
                bad("%s: gate scores differ from the C probe by %g" % (variant, dg))
        elif variant == "g1-elem":
            bad("g1-elem: no gate_channel_mean in its probe")
        if variant != "g1-elem" and any(x is not None for x in cache["gate"]):
            bad("%s: gate scores recorded for an ungated variant" % variant)
sys.exit(fail)
