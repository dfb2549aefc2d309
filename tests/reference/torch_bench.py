#!/usr/bin/python3
"""torch_bench.py: the PyTorch twin of `gatelab bench`.

    /usr/bin/python3 tests/reference/torch_bench.py [--threads N] [--style llama|gpt2]
        [--variant baseline|g1-elem|g1-head|g5-elem|...] [--steps 20]
        [--warmup 3] [--repeats 5] [--batch 16] [--seq 256] [--shape KEY=VALUE]...

Trains the reference config in float32 with gatelab.ref (forward,
backward, global-norm clip, AdamW step on one fixed random batch) and prints
one JSON line: the median tokens/s over the repeats and GFLOP/s by the same
count as model_flops_per_token() in src/model/model.c:

    flops/token = 6 * N_matmul + 12 * L * T_int * H * dh

N_matmul is every matmul weight (w_q w_k w_v w_o, the MLP matrices, a FULL
gate's w and a head-slice gate's d weights, and the d x V output head, tied
or not); the second term is the two T x T attention products, forward and
backward, over the full square as computed.

Reference config (style llama): 4 layers, d_model 128, 4 heads, T 256,
batch 16, vocab 257, RMSNorm/RoPE/SwiGLU, d_ff 352, untied. Style gpt2:
LayerNorm, learned positions, GELU with d_ff 4d = 512, tied embeddings.
--shape KEY=VALUE overrides one model key of the style (by its config key:
n_layers, d_model, n_heads, n_kv_heads, head_dim, d_ff, vocab_size,
norm, pos, mlp, tied_embed, qk_norm, rope_base, norm_eps); `gatelab bench
--torch` passes its resolved config's shape this way, GQA included, so the
twin trains the same model as gatelab for any preset. --gatelab PATH names
the binary whose variant catalog the twin reads (gatelab.ref_config; `gatelab
bench --torch` passes itself).
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from gatelab import ref  # noqa: E402
from torch_blas import pin_blas_threads  # noqa: E402

STYLES = {
    "llama": dict(norm="rms", pos="rope", mlp="swiglu", d_ff=352, tied_embed=0),
    "gpt2": dict(norm="layer", pos="learned", mlp="gelu", d_ff=512, tied_embed=1),
}

FLOP_FORMULA = "6*N_matmul + 12*L*T*H*dh per token (fwd+bwd, full TxT square)"


SHAPE_KEYS = ("n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "d_ff",
              "vocab_size", "norm", "pos", "mlp", "tied_embed", "qk_norm",
              "rope_base", "norm_eps")


def parse_shape(items):
    """['d_model=64', ...] -> dict typed like the catalog's defaults."""
    out = {}
    for item in items:
        k, sep, v = item.partition("=")
        if not sep or k not in SHAPE_KEYS:
            raise ValueError("--shape %r: expected KEY=VALUE with KEY one of %s"
                             % (item, ", ".join(SHAPE_KEYS)))
        out[k] = ref.catalog().typed(k, v)
    return out


def build_config(style, variant, batch, seq, shape=None):
    cfg = dict(n_layers=4, d_model=128, n_heads=4, n_kv_heads=4, head_dim=32,
               vocab_size=257, seq_len=seq, max_pos=seq, batch_size=batch,
               lr=3e-3, warmup=100, steps=1000, min_lr_frac=0.1)
    cfg.update(STYLES[style])
    cfg.update(shape or {})
    base = ref.resolve(cfg)
    cfg.update(ref.variant_fields(variant, base))
    if cfg.get("sink_token"):
        cfg["max_pos"] = seq + cfg["sink_token"]
    return ref.resolve(cfg)


def flops_per_token(cfg, T):
    """The count of src/model/model.c model_flops_per_token."""
    n = 0
    for name, shape, _ in ref.param_shapes(cfg):
        if name.startswith("layers.") and len(shape) == 2 and not name.endswith(
                ("kv_bias_k", "kv_bias_v", "diff_lambda")):
            n += shape[0] * shape[1]
    n += cfg["d_model"] * cfg["vocab_size"]
    extra = cfg["sink_token"]  # sink / register tokens
    attn = 12.0 * (T + extra) * cfg["n_heads"] * cfg["head_dim"] * cfg["n_layers"]
    if cfg["diff_attn"]:  # the core runs twice
        attn *= 2
    return 6.0 * n + attn


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--style", choices=sorted(STYLES), default="llama")
    ap.add_argument("--variant", default="baseline",
                    help="a gatelab variant id (the C catalog)")
    ap.add_argument("--steps", type=int, default=20, help="timed steps per repeat")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="time by the wall clock, or by process CPU time per thread "
                         "(on a shared, loaded machine)")
    ap.add_argument("--blas-threads", type=int, default=0,
                    help="OpenBLAS's own thread count (default: as installed, one per core)")
    ap.add_argument("--gatelab", metavar="PATH",
                    help="the gatelab binary whose variant catalog the twin reads "
                         "(default: the source tree's build/gatelab, else gatelab on PATH)")
    ap.add_argument("--shape", action="append", default=[], metavar="KEY=VALUE",
                    help="override one model key (repeatable): " + ", ".join(SHAPE_KEYS))
    a = ap.parse_args()
    if a.gatelab:
        ref.use_catalog(a.gatelab)
    try:
        shape = parse_shape(a.shape)
    except ValueError as e:
        ap.error(str(e))
    if a.variant not in ref.catalog().rows:
        ap.error("unknown variant '%s' (known: %s)" % (a.variant, ", ".join(ref.catalog().ids)))
    if a.threads < 1 or a.steps < 1 or a.repeats < 1 or a.warmup < 0:
        ap.error("--threads, --steps, --repeats must be >= 1 and --warmup >= 0")

    torch.set_num_threads(a.threads)
    blas_threads = pin_blas_threads(a.blas_threads)
    cfg = build_config(a.style, a.variant, a.batch, a.seq, shape)
    gen = torch.Generator().manual_seed(a.seed)
    params = ref.init_params_model(cfg, gen, dtype=torch.float32)
    model = ref.Model(cfg, params=params, dtype=torch.float32)
    opt = ref.make_optimizer(model)
    V = cfg["vocab_size"]
    tok = torch.randint(0, V, (a.batch, a.seq), generator=gen)
    tgt = torch.randint(0, V, (a.batch, a.seq), generator=gen)

    step = 0
    for _ in range(a.warmup):
        ref.train_step(model, opt, tok, tgt, step)
        step += 1
    rates, loss = [], float("nan")
    for _ in range(a.repeats):
        clock = time.perf_counter if a.clock == "wall" else time.process_time
        t0 = clock()
        for _ in range(a.steps):
            loss = ref.train_step(model, opt, tok, tgt, step)
            step += 1
        dt = clock() - t0
        if a.clock == "cpu":  # CPU seconds of every thread that ran
            dt /= max(a.threads, blas_threads)
        rates.append(a.steps * a.batch * a.seq / dt)
    tps = statistics.median(rates)
    fpt = flops_per_token(cfg, a.seq)
    n_params = sum(p.numel() for p in model.p.values())
    print(json.dumps({
        "impl": "pytorch", "torch": torch.__version__, "threads": a.threads,
        "blas_threads": blas_threads,
        "style": a.style, "variant": a.variant, "batch": a.batch, "seq": a.seq,
        "n_layers": cfg["n_layers"], "d_model": cfg["d_model"],
        "n_heads": cfg["n_heads"], "n_kv_heads": cfg["n_kv_heads"],
        "d_ff": cfg["d_ff"], "vocab_size": cfg["vocab_size"],
        "params": n_params, "steps": a.steps, "warmup": a.warmup,
        "repeats": a.repeats, "clock": a.clock, "tokens_per_sec": round(tps, 1),
        "tokens_per_sec_all": [round(r, 1) for r in rates],
        "flops_per_token": fpt, "gflops": round(tps * fpt / 1e9, 3),
        "flop_formula": FLOP_FORMULA, "final_loss": round(loss, 4),
    }))


if __name__ == "__main__":
    main()
