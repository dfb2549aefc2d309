#!/usr/bin/env bash
# python_install.sh SRCDIR GATELAB: the Python package installs offline as
# docs/python.md says, and imports from anywhere. A venv that sees Debian's
# packages (--system-site-packages) gets `pip install ./python` from a copy
# of python/ (pip's isolated build fetches nothing: python/wheel_backend.py
# needs only the standard library); then, from /, `import gatelab` must
# come from the venv, not the source tree, read a run file's reader and
# resolve a catalog id through the installed twin with GATELAB's catalog.
# Skipped (77) without python3-venv (ensurepip), or without torch for the
# twin's part.
set -uo pipefail
S=$(cd "$1" && pwd)
G=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
PY=/usr/bin/python3
"$PY" -c 'import ensurepip, venv' 2>/dev/null ||
    { echo "python_install: SKIP (no venv/ensurepip for $PY: apt-get install python3-venv)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cp -r "$S/python" "$tmp/src"
rm -rf "$tmp/src/gatelab/__pycache__"
timeout 120 "$PY" -m venv --system-site-packages "$tmp/v" || fail "python3 -m venv"
timeout 120 "$tmp/v/bin/pip" install --quiet --disable-pip-version-check "$tmp/src" ||
    fail "pip install ./python"
rm -rf "$tmp/src" # the installed copy alone from here
out=$(cd / && "$tmp/v/bin/python" -c 'import gatelab, gatelab.runfile; print(gatelab.__file__)') ||
    fail "import gatelab from /"
echo "import gatelab: $out"
case $out in "$tmp/v/"*) ;; *) fail "gatelab imported from $out, not the venv" ;; esac
if ! "$tmp/v/bin/python" -c 'import torch' 2>/dev/null; then
    echo "python_install: SKIP (installed and imported; no torch for the twin's check)"; exit 77
fi
got=$(cd / && "$tmp/v/bin/python" -c '
import sys
from gatelab import ref
ref.use_catalog(sys.argv[1])
cfg = ref.resolve(ref.variant_fields("g1-head", ref.resolve({})))
print(cfg["gate_pos"], cfg["gate_gran"], len(ref.param_shapes(cfg)))' "$G") ||
    fail "the installed twin"
echo "installed twin, g1-head: $got"
# over the defaults: 4 layers of 10 tensors (the gate's among them), the
# embedding, the final norm and the output head
[ "$got" = "g1 head 43" ] || fail "g1-head resolved to '$got', expected 'g1 head 43'"
echo "python_install: installed offline, imported from /"
