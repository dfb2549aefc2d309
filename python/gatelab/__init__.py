"""gatelab: read gatelab run files from Python, and rebuild a run's model.

    import gatelab
    run = gatelab.load_run("runs/base.h5")      # h5py + numpy only
    run.config["variant"], run.train["loss"], run.probe().attention.shape
    model = gatelab.build_model(run)            # needs PyTorch
    logits, cache = model.run_with_cache(run.probe().tokens)
    cache["attn"][0]                            # layer 0's maps [B, H, T, T]
    cache["gate"][0]                            # layer 0's gate scores

See docs/python.md. The model is the project's PyTorch twin, gatelab.ref
(docs/MODEL.md), whose variant catalog is the C one (gatelab.ref_config).
The run file reader is imported on first use, so `gatelab.ref` alone
needs PyTorch but not h5py.
"""
__all__ = ["Run", "Probe", "load_run", "load_log", "build_model"]

_RUNFILE = ("Run", "Probe", "load_run", "load_log")


def __getattr__(name):
    if name in _RUNFILE:
        from . import runfile
        return getattr(runfile, name)
    raise AttributeError("module 'gatelab' has no attribute %r" % name)


def build_model(run, dtype=None):
    """The run's model with its trained weights (PyTorch; see model.py)."""
    from .model import build_model as _build
    return _build(run, dtype=dtype)
