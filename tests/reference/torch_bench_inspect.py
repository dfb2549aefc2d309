#!/usr/bin/python3
"""torch_bench_inspect.py: PyTorch's side of `gatelab bench --inspect`.

    /usr/bin/python3 tests/reference/torch_bench_inspect.py MODEL_DIR IDS_FILE
        [--threads N] [--blas-threads K] [--repeats R] [--clock wall|cpu]

Loads a GPT2LMHeadModel snapshot (F32 model.safetensors, read by hand) and
runs the eager GPT-2 forward of hf_forwards.py (attention
probabilities materialised, as inspecting needs them) on the first line of
IDS_FILE, R times after one warm-up. Prints one JSON line: the best and
median seconds with the LM head (logits, as model(ids) computes them) and
without it (what `gatelab inspect` runs), the peak RSS, and how many threads
OpenBLAS ran: torch.set_num_threads(N) does not reach OpenBLAS's own pool,
which by default has one thread per core, so "1 thread" is not one thread
unless --blas-threads 1 says so.
"""
import argparse
import json
import os
import resource
import statistics
import struct
import sys
import time
import warnings

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_forwards as fx  # noqa: E402
from torch_blas import pin_blas_threads  # noqa: E402


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F32", "F32 checkpoints only"
        b, end = e["data_offsets"]
        arr = np.frombuffer(data[b:end], dtype="<f4").reshape(e["shape"])
        out[name] = torch.from_numpy(arr)
    return out


def time_it(fn, repeats, clock):
    fn()
    ts = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        ts.append(clock() - t0)
    return min(ts), statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("ids")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="cpu: process CPU seconds (all threads), steadier on a busy machine")
    ap.add_argument("--blas-threads", type=int, default=0,
                    help="OpenBLAS's own thread count (default: as installed)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    blas_threads = pin_blas_threads(a.blas_threads)
    with open(os.path.join(a.model, "config.json")) as f:
        cfg = json.load(f)
    W = load_safetensors(os.path.join(a.model, "model.safetensors"))
    with open(a.ids) as f:
        ids = torch.tensor([int(x) for x in f.readline().split()])
    pre = "transformer." if "transformer.wte.weight" in W else ""

    def with_head():
        with torch.no_grad():
            fx.forward_gpt2(cfg, W, ids, pre)

    def body():
        """forward_gpt2 without the final LayerNorm and logits."""
        d, H, eps, T = cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"], len(ids)
        dh = d // H
        x = W[pre + "wte.weight"][ids] + W[pre + "wpe.weight"][:T]
        for l in range(cfg["n_layer"]):
            p = pre + "h.%d." % l
            h = fx.layer_norm(x, W[p + "ln_1.weight"], W[p + "ln_1.bias"], eps)
            qkv = torch.addmm(W[p + "attn.c_attn.bias"], h, W[p + "attn.c_attn.weight"])
            q, k, v = qkv.split(d, dim=-1)
            q, k, v = (t.view(T, H, dh).transpose(0, 1) for t in (q, k, v))
            o, probs = fx.causal_attention(q, k, v)
            x = x + torch.addmm(W[p + "attn.c_proj.bias"], o.reshape(T, d),
                                W[p + "attn.c_proj.weight"])
            h = fx.layer_norm(x, W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps)
            m = fx.gelu_tanh(torch.addmm(W[p + "mlp.c_fc.bias"], h, W[p + "mlp.c_fc.weight"]))
            x = x + torch.addmm(W[p + "mlp.c_proj.bias"], m, W[p + "mlp.c_proj.weight"])
        return x

    def forward_no_head():
        with torch.no_grad():
            body()

    clock = time.process_time if a.clock == "cpu" else time.perf_counter
    bh, mh = time_it(with_head, a.repeats, clock)
    bn, mn = time_it(forward_no_head, a.repeats, clock)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps({"threads": a.threads, "blas_threads": blas_threads, "T": len(ids),
                      "best_logits": bh, "median_logits": mh,
                      "best_nohead": bn, "median_nohead": mn, "peak_rss_mib": rss,
                      "torch": torch.__version__}))


if __name__ == "__main__":
    main()
