"""python_gatelab.py SRCDIR GATELAB: the Python package analysis/python/gatelab
loads tiny runs trained by the C binary into named arrays and tables, and
rebuilds each run's model in PyTorch whose attention maps (as the probe
stores them, proxy maps for softmax1) and gate scores match the C probe's
to 1e-4. Skipped (77) without h5py or PyTorch."""
import os
import subprocess
import sys
import tempfile

src, exe = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
try:
    import numpy as np
    import h5py  # noqa: F401
    import torch  # noqa: F401
except ImportError as e:
    print("SKIP:", e)
    sys.exit(77)
sys.path.insert(0, os.path.join(src, "analysis", "python"))
import gatelab  # noqa: E402
from gatelab.model import rerun_probe  # noqa: E402

fail = 0


def bad(msg):
    global fail
    print("FAIL:", msg)
    fail = 1


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
