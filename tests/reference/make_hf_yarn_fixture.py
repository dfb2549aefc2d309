#!/usr/bin/python3
"""make_hf_yarn_fixture.py: float64 reference of YaRN as Hugging Face
checkpoints define it, into fixtures/hf_yarn.json (read by
tests/test_hf_rope.c).

The definition is transformers' `_compute_yarn_parameters` in
src/transformers/modeling_rope_utils.py as v5 has it (keys from
`rope_parameters`, standardized from v4's `rope_scaling` and `rope_theta`),
checked against a stored copy of that function: `original_max_position_
embeddings` sets the correction range (absent: `max_position_embeddings`),
`factor` absent is max_position_embeddings / original, the mscale ratio
only when both mscale keys are truthy, `truncate` defaults to true. The
v4.4x releases differ: their correction range used max_position_embeddings
and their attention factor 0.1 ln(factor) + 1 alone, so a checkpoint whose
two lengths differ gets other frequencies there; gatelab follows v5.

  dim = head_dim * partial_rotary_factor; base = rope_theta
  attention_factor = the key when given, else
      get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
      when mscale and mscale_all_dim are both given and nonzero, else
      get_mscale(factor), with get_mscale(s, m=1) = 1 if s <= 1 else
      0.1 m ln(s) + 1
  beta_fast = beta_fast or 32; beta_slow = beta_slow or 1
  orig = original_max_position_embeddings or max_position_embeddings
  find_correction_dim(n) = dim ln(orig / (n 2 pi)) / (2 ln base)
  low, high = find_correction_dim(beta_fast), find_correction_dim(beta_slow),
      floored and ceiled when truncate (default true), then
      max(low, 0), min(high, dim - 1)
  ramp_i = clamp((i - low) / (high - low), 0, 1), i = 0..dim/2-1
      (high += 0.001 when low == high)
  extrapolation_factor_i = 1 - ramp_i
  pos_freqs_i = base^(2i/dim); inv_freq_i = 1 / (factor pos_freqs_i)
      (1 - extrapolation_factor_i) + 1 / pos_freqs_i extrapolation_factor_i
  The model multiplies cos and sin by attention_factor (q and k each).

transformers computes pos_freqs in float32; this reference keeps float64
throughout, and the C side (float32 frequencies) is held to 1e-6 relative.
The same ramp is linear in the pair index, not in the pair's turns r_i as
the YaRN paper writes it (docs/MODEL.md, the trainer's YaRN); the two agree
at the ends and differ between them.

Regenerate:  /usr/bin/python3 tests/reference/make_hf_yarn_fixture.py
"""
import json
import math
import os

import numpy as np

# name, head_dim, max_position_embeddings, rope dict (rope_parameters, v5)
CASES = [
    ("qwen3-yarn4", 128, 40960,
     {"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 4.0,
      "original_max_position_embeddings": 32768}),
    ("llama-yarn8-betas", 64, 65536,
     {"rope_type": "yarn", "rope_theta": 500000.0, "factor": 8.0,
      "original_max_position_embeddings": 8192, "beta_fast": 16.0, "beta_slow": 2.0}),
    ("tiny-yarn2-notrunc", 16, 128,
     {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 2.0,
      "original_max_position_embeddings": 64, "truncate": False}),
    ("tiny-yarn2-orig-from-max", 16, 64,
     {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 2.0}),
    ("mscale", 32, 16384,
     {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 40.0,
      "original_max_position_embeddings": 4096, "mscale": 1.0, "mscale_all_dim": 0.707}),
    ("attention-factor", 32, 16384,
     {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
      "original_max_position_embeddings": 4096, "attention_factor": 1.25}),
    ("low-equals-high", 16, 64,
     {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 2.0,
      "original_max_position_embeddings": 4}),
    ("qwen3-default-1e6", 128, 40960, {"rope_type": "default", "rope_theta": 1000000.0}),
]


def get_mscale(scale, m=1.0):
    return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0


def yarn(head_dim, max_pos, rp):
    base = rp["rope_theta"]
    dim = int(head_dim * rp.get("partial_rotary_factor", 1.0))
    pos_freqs = base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    if rp["rope_type"] == "default":
        return 1.0 / pos_freqs, 1.0
    factor = rp["factor"]
    orig = rp.get("original_max_position_embeddings") or max_pos
    af = rp.get("attention_factor")
    ms, msa = rp.get("mscale"), rp.get("mscale_all_dim")
    if af is None:
        af = get_mscale(factor, ms) / get_mscale(factor, msa) if ms and msa else get_mscale(factor)
    beta_fast = rp.get("beta_fast") or 32
    beta_slow = rp.get("beta_slow") or 1

    def corr(n):
        return dim * math.log(orig / (n * 2 * math.pi)) / (2 * math.log(base))

    low, high = corr(beta_fast), corr(beta_slow)
    if rp.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0, 1)
    extra = 1.0 - ramp
    inv = (1.0 / (factor * pos_freqs)) * (1.0 - extra) + (1.0 / pos_freqs) * extra
    return inv, float(af)


def main():
    out = []
    for name, dh, max_pos, rp in CASES:
        inv, af = yarn(dh, max_pos, rp)
        out.append({"name": name, "head_dim": dh, "max_position_embeddings": max_pos,
                    "rope_parameters": rp, "inv_freq": [float(x) for x in inv],
                    "attention_factor": af})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "hf_yarn.json")
    with open(path, "w") as fh:
        json.dump({"generator": "tests/reference/make_hf_yarn_fixture.py", "cases": out}, fh,
                  indent=1)
        fh.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
