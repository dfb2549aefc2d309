#!/usr/bin/python3
"""make_prompt_fixture.py: the PyTorch reference of `gatelab probe` on a
trained byte-level run, for tests/test_probe_cmd.c.

    /usr/bin/python3 tests/reference/make_prompt_fixture.py [--out DIR]

Writes fixtures/prompt/prompt.h5 (its own directory: test_reference.c takes
every fixtures/*.h5 as one of its cases), one group "g1-elem-bytes":
  config           uint8 [n]: INI text of a tiny g1-elem model over byte
                   text with BOS (data = text, bos = 1, vocab 257; the test
                   supplies train_file and val_file)
  params/<name>    float32 weights (drawn as make_fixtures.py draws them)
  text             uint8 [n]: the prompt, "The cat sat on the mat."
  tokens           int32 [T]: BOS (256) and the text's bytes
  attention        float32 [L, H, T, T]: each head's attention map
  gates            float32 [L, T, C]: each layer's activated gate scores
Computed in float64 by gatelab.ref.Model, independently of the C code; the
test overwrites a run's /params with these weights and holds what
`gatelab probe RUN --text TEXT` stores under /prompt to them.
"""
import argparse
import os
import sys
from collections import OrderedDict

import h5py
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from gatelab import ref  # noqa: E402
import make_fixtures as mf  # noqa: E402

TEXT = "The cat sat on the mat."
BOS = 256
SEED = 20261206
CASE = "g1-elem-bytes"


class KeepModel(ref.Model):
    """gatelab.ref.Model keeping each layer's attention maps and gate scores."""

    def normalise(self, l, s, q, mask):
        a, slot = super().normalise(l, s, q, mask)
        self.maps.append(a)
        return a, slot

    def gate(self, l, xn, t):
        # the multiplicative gate applied to ones is its scores
        self.gates.append(super().gate(l, xn, torch.ones_like(t)))
        return super().gate(l, xn, t)

    def run(self, tokens):
        self.maps, self.gates = [], []
        self.forward(tokens)
        return (torch.stack(self.maps, 1)[0].numpy(),  # [L, H, T, T]
                torch.stack(self.gates, 1)[0].numpy())  # [L, T, C]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "fixtures", "prompt"))
    args = ap.parse_args()
    cfg = OrderedDict(mf.TINY)
    cfg.update(vocab_size=257, seq_len=32, max_pos=64)
    cfg.update(ref.variant_fields("g1-elem", ref.resolve(cfg)))
    cfg.update(mf.OPTIM)
    cfg = ref.resolve(cfg)
    assert cfg["gate_form"] == "mult"
    mf.DATA = OrderedDict(data="text", bos=1)  # byte text with BOS
    gen = torch.Generator().manual_seed(SEED)
    params = mf.f32_exact(ref.init_params(cfg, gen))
    tok = [BOS] + list(TEXT.encode())
    with torch.no_grad():
        A, G = KeepModel(cfg, params).run(torch.tensor([tok]))
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "prompt.h5")
    with h5py.File(path + ".tmp", "w", libver="latest") as f:
        f.attrs["generator"] = "tests/reference/make_prompt_fixture.py"
        g = f.create_group(CASE)
        mf.put_model(g, "g1-elem", cfg, params)
        mf.put(g, "text", np.frombuffer(TEXT.encode(), dtype=np.uint8))
        mf.put(g, "tokens", np.array(tok, dtype=np.int32))
        mf.put(g, "attention", A.astype(np.float32))
        mf.put(g, "gates", G.astype(np.float32))
    os.replace(path + ".tmp", path)
    print("%s: %.1f KB, T %d, attention %s, gates %s" % (path, os.path.getsize(path) / 1024,
                                                         len(tok), A.shape, G.shape))


if __name__ == "__main__":
    main()
