"""python_catalog.py SRCDIR GATELAB: the PyTorch twin's configs against the
C catalog. The twin (python/gatelab/ref_config.py) reads the catalog from
`GATELAB variants --json` and builds each id's config itself: the id's
key=value fields typed by the key table's defaults, over the variant
fields' defaults, and the parameter-matched ids' shape change by its own
rule. For each of four bases (the key table's defaults: MHA, SwiGLU, d_ff
left to derive; make_fixtures.py's tiny GQA base; a GELU GQA base with
d_ff to derive and 3 kv heads; booleans set by the words true and false,
read by the twin as by C), every id's config so built must equal, key by key and
type by type, the `resolved` config the C catalog gives for that base
(`variants --json --set`), and every id must resolve in C over the GQA
bases; `variants --set` with a key that is not one, or without --json, is
refused in one line. Exit 1 naming each difference."""
import json
import os
import subprocess
import sys
import tempfile
from collections import OrderedDict

src, exe = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(src, "python"))
from gatelab import ref_config  # noqa: E402  (no PyTorch needed)

BASES = [
    ("defaults", []),
    ("tiny", ["n_layers=2", "d_model=16", "n_heads=4", "n_kv_heads=2", "head_dim=4", "d_ff=16",
              "vocab_size=11", "seq_len=7", "max_pos=16"]),
    ("gelu-gqa", ["d_model=96", "n_heads=12", "n_kv_heads=3", "mlp=gelu", "d_ff=0"]),
    ("bool-words", ["qk_norm=true", "tied_embed=false", "n_kv_heads=2"]),
]

problems = 0


def bad(msg):
    global problems
    print("FAIL:", msg)
    problems += 1


def check_base(name, sets, tmp):
    args = [exe, "variants", "--json"] + [a for s in sets for a in ("--set", s)]
    path = os.path.join(tmp, name + ".json")
    with open(path, "wb") as f:
        f.write(subprocess.run(args, check=True, capture_output=True).stdout)
    cat = ref_config.use_catalog(path)
    base = OrderedDict(cat.defaults)
    for s in sets:
        k, v = s.split("=", 1)
        base[k] = cat.typed(k, v)
    n = 0
    for vid in cat.ids:
        before = problems
        want = cat.rows[vid]["resolved"]
        if want is None:
            if sets:
                bad("%s: %s does not resolve in C: %s" % (name, vid, cat.rows[vid]["unresolved"]))
            continue
        got = OrderedDict(base)
        got.update(ref_config.variant_fields(vid, base))
        if want.get("variant") != vid:
            bad("%s: %s: C resolved variant = %r" % (name, vid, want.get("variant")))
        for k, v in want.items():
            if k == "variant":
                continue
            if k not in got:
                bad("%s: %s: the twin has no key %s (C: %r)" % (name, vid, k, v))
            elif got[k] != v or type(got[k]) is not type(v):
                bad("%s: %s: %s = %r in the twin, %r in C" % (name, vid, k, got[k], v))
        for k in got:
            if k not in want:
                bad("%s: %s: the twin sets %s, which C does not know" % (name, vid, k))
        n += problems == before
    print("%s: %d of %d catalog ids, %d keys each, equal in C and the twin"
          % (name, n, len(cat.ids), len(cat.defaults)))
    return n


with tempfile.TemporaryDirectory(prefix="gatelab-catalog-") as tmp:
    for name, sets in BASES:
        check_base(name, sets, tmp)
# a base key that is not one, and --set without --json: refused in one line, exit 2
for args in (["--json", "--set", "n_layer=2"], ["--set", "n_layers=2"]):
    r = subprocess.run([exe, "variants"] + args, capture_output=True, text=True)
    if r.returncode != 2 or r.stdout or len(r.stderr.splitlines()) != 1:
        bad("variants %s: exit %d, %r %r" % (" ".join(args), r.returncode, r.stdout[:80],
                                              r.stderr))
sys.exit(1 if problems else 0)
