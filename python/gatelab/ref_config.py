"""gatelab.ref_config: the configs of the PyTorch twin (gatelab.ref).

The catalog is the C one, read from `gatelab variants --json`
(src/cli/cmd_variants.c): every key's default, the enums as the INI files
spell them, the variant fields and each catalog id's key=value text. Here
is what the twin does with it: a config dict filled from the defaults
(resolve), an id's fields and shape change over a base (variant_fields),
and the INI reader (parse_ini). tests/python_catalog.py holds the dicts
built here to the configs the C catalog resolves, id by id.

Where the catalog comes from: use_catalog(SOURCE) names a gatelab binary
or a file holding its `variants --json` output; without it the first use
runs the source tree's build/gatelab (this package in its place under
python/), else `gatelab` on PATH.
"""
import json
import math
import os
import shutil
import subprocess
from collections import OrderedDict

_catalog = None


class Catalog:
    """`gatelab variants --json`, read: defaults (every key the twin may
    read, typed; the id key `variant` left out, the twin builds from
    fields), enums (key -> allowed names), variant_keys (the variant fields,
    in the key table's order), variant_base (their defaults: what every id
    starts from), ids (in the C catalog's order) and rows (id -> its JSON
    row: fields, changes_shape, formula, resolved)."""

    def __init__(self, doc):
        self.defaults = OrderedDict((k, v) for k, v in doc["defaults"].items()
                                    if k != "variant")
        self.enums = OrderedDict((k, tuple(v)) for k, v in doc["enums"].items())
        self.variant_keys = list(doc["variant_keys"])
        self.variant_base = OrderedDict((k, self.defaults[k]) for k in self.variant_keys)
        self.rows = OrderedDict((r["id"], r) for r in doc["variants"])
        self.ids = list(self.rows)

    def typed(self, key, text):
        """text as the type of key's default (int, float or str; a boolean
        key's default is an int, and true/false read as 1/0 as in C)."""
        kind = type(self.defaults[key]) if key in self.defaults else str
        if kind is int and text in ("true", "false"):
            return int(text == "true")
        return kind(text) if kind is not str else text

    def fields(self, vid):
        """The key=value text of catalog id vid as a typed dict."""
        if vid not in self.rows:
            raise KeyError("unknown variant id '%s'" % vid)
        out = OrderedDict()
        for kv in self.rows[vid]["fields"].split():
            k, v = kv.split("=", 1)
            out[k] = self.typed(k, v)
        return out


def load_catalog(source):
    """A Catalog from source: a file of `gatelab variants --json` output,
    or a gatelab binary (run here)."""
    with open(source, "rb") as f:
        is_json = f.read(1) == b"{"
    if is_json:
        with open(source, encoding="utf-8") as f:
            return Catalog(json.load(f))
    out = subprocess.run([source, "variants", "--json"], check=True, capture_output=True)
    return Catalog(json.loads(out.stdout))


def default_source():
    """The source tree's build/gatelab when this package sits in the tree,
    else `gatelab` on PATH, else None."""
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.join(here, "..", "..", "build", "gatelab")
    if os.access(tree, os.X_OK):
        return os.path.normpath(tree)
    return shutil.which("gatelab")


def use_catalog(source):
    """Read the catalog from source (load_catalog) for every later use."""
    global _catalog
    _catalog = load_catalog(source)
    return _catalog


def catalog():
    """The catalog in use: use_catalog's, else default_source()'s."""
    if _catalog is None:
        src = default_source()
        if not src:
            raise RuntimeError("gatelab.ref: no variant catalog: build gatelab (meson setup "
                               "build && meson compile -C build), put it on PATH, or call "
                               "gatelab.ref.use_catalog(PATH_TO_GATELAB)")
        use_catalog(src)
    return _catalog


def auto_d_ff(d_model, mlp):
    """d_ff when a config leaves it 0 (src/config/config_derive.c): 4 d for
    GELU, 8 d / 3 rounded up to a multiple of 32 for SwiGLU."""
    if mlp == "gelu":
        return 4 * d_model
    return (int(math.floor(8.0 * d_model / 3.0 + 0.5)) + 31) // 32 * 32


def _mlp_mats(cfg):
    return 3 if cfg["mlp"] == "swiglu" else 2


def _shape_change(vid, base):
    """The shape keys parameter-matched id vid changes over base, each worth
    about g1-elem's d*H*dh gate params per layer: more-kv-heads doubles
    n_kv_heads; more-q-heads adds query heads with head_dim fixed (with GQA
    H/(2 Hkv) rounded, times Hkv; with MHA H/4 and the kv heads follow);
    wider-ffn / g1-elem-matched widen / narrow d_ff by gate/(mats*d) rounded
    to a multiple of 8, at least 8. A d_ff left 0 becomes auto_d_ff's first,
    as src/config/variants.c does for every shape change."""
    d, H, Hkv = base["d_model"], base["n_heads"], base["n_kv_heads"]
    dh = base["head_dim"] or d // H
    out = {"d_ff": base["d_ff"] or auto_d_ff(d, base["mlp"])}
    ffn_delta = max(8, 8 * int(math.floor(d * H * dh / (_mlp_mats(base) * d) / 8.0 + 0.5)))
    if vid == "more-kv-heads":
        out["n_kv_heads"] = 2 * Hkv
    elif vid == "more-q-heads":
        out["head_dim"] = dh
        if Hkv == H:
            out["n_heads"] = out["n_kv_heads"] = H + max(1, int(math.floor(H / 4.0 + 0.5)))
        else:
            out["n_heads"] = H + max(1, int(math.floor(H / (2.0 * Hkv) + 0.5))) * Hkv
    elif vid == "wider-ffn":
        out["d_ff"] += ffn_delta
    elif vid == "g1-elem-matched":
        out["d_ff"] -= ffn_delta
    else:
        raise ValueError("variant %s changes shapes by a rule the twin does not know" % vid)
    return out


def variant_fields(vid, base):
    """Explicit field values of catalog id vid over the config dict base:
    every variant field (its default unless the id's fields name it), the
    other keys those fields name, and any shape key the id changes."""
    cat = catalog()
    out = OrderedDict(cat.variant_base)
    out.update(cat.fields(vid))
    if cat.rows[vid]["changes_shape"]:
        out.update(_shape_change(vid, base))
    return out


def resolve(cfg):
    """A complete config dict: defaults, then cfg; checks enum spellings;
    head_dim and d_ff left 0 derived as the C config_resolve derives them."""
    cat = catalog()
    out = OrderedDict(cat.defaults)
    for k, v in cfg.items():
        out[k] = v
    for k, allowed in cat.enums.items():
        if k in out and out[k] not in allowed:
            raise ValueError("%s = %r: expected one of %s" % (k, out[k], allowed))
    if not out["head_dim"]:
        out["head_dim"] = out["d_model"] // out["n_heads"]
    if not out["d_ff"]:
        out["d_ff"] = auto_d_ff(out["d_model"], out["mlp"])
    return out


def parse_ini(text):
    """key = value lines (sections and comments ignored) -> dict of typed values."""
    cat = catalog()
    cfg = OrderedDict()
    for line in text.splitlines():
        line = line.split("#")[0].split(";")[0].strip()
        if not line or line.startswith("["):
            continue
        k, v = (s.strip() for s in line.split("=", 1))
        cfg[k] = cat.typed(k, v)
    if "variant" in cfg and cfg["variant"] in cat.rows:
        # the id first, explicit fields after it override (as the C loader)
        merged = OrderedDict(variant_fields(cfg["variant"], resolve(cfg)))
        merged.update(cfg)
        cfg = merged
    return cfg
