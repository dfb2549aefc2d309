#!/usr/bin/env bash
# fingerprint.sh: `gatelab fingerprint` against an independent
# recomputation. With --keep DIR it keeps the run file of every catalog
# id; Python (h5py) reads each file's /params in the order of the
# parameter table (`gatelab train --print-params` on the file's own
# /config text), hashes the float32 bytes with FNV-1a 64 and the lines
# "ID HASH" likewise, and must print the command's every line. Two calls
# print the same (the plain suite's check); a confirmatory sweep pins the
# fingerprint in its protocol.ini (tests/pieces.sh holds the refusal of
# another).
#   tests/fingerprint.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" fingerprint "$@"
trap 'rm -rf "$W"' EXIT
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "fingerprint: SKIP (no h5py/numpy for /usr/bin/python3)"; exit 77; }

"$G" fingerprint --keep kept >one.txt 2>one.err || bad "fingerprint --keep failed: $(cat one.err)"
# the second call trains the catalog again: the plain suite's alone (the
# sanitized suite, ASAN_OPTIONS set, looks for memory errors, which the
# first call's training reaches)
if [ -z "${ASAN_OPTIONS:-}" ]; then
    "$G" fingerprint >two.txt 2>two.err || bad "fingerprint failed: $(cat two.err)"
    cmp -s one.txt two.txt || bad "two calls differ: $(diff one.txt two.txt | head -4)"
fi
ids=$("$G" variants --json | /usr/bin/python3 -c 'import json,sys; print(" ".join(v["id"] for v in json.load(sys.stdin)["variants"]))')
[ "$(grep -vc '^training ' one.txt)" -eq "$(echo $ids | wc -w)" ] || bad "not one line per catalog id"
"$G" fingerprint --keep kept >/dev/null 2>again.err && bad "--keep onto an existing directory ran"
grep -q 'wants a new directory' again.err || bad "--keep onto an existing directory: $(cat again.err)"

/usr/bin/python3 - "$G" one.txt $ids <<'PY' || bad "the recomputation differs"
import subprocess, sys, h5py, numpy as np
gatelab, listing, ids = sys.argv[1], sys.argv[2], sys.argv[3:]
def fnv(data, h=0xcbf29ce484222325):
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h
lines = []
for i in ids:
    f = h5py.File(f"kept/{i}.h5", "r")
    text = f["config"].attrs["text"]
    open("cfg.ini", "w").write(text.decode() if isinstance(text, bytes) else text)
    table = subprocess.run([gatelab, "train", "--config", "cfg.ini", "--out", "x.h5",
                            "--print-params"], capture_output=True, text=True, check=True).stdout
    names = [l.split()[0] for l in table.splitlines()[1:] if l.split() and l.split()[0] in f["params"]]
    assert len(names) == len(f["params"]), f"{i}: {len(names)} of {len(f['params'])} tensors in the table"
    data = b"".join(np.asarray(f["params"][n], dtype="<f4").tobytes() for n in names)
    lines.append(f"{i} fnv1a64:{fnv(data):016x}\n")
total = f"training fnv1a64:{fnv(''.join(lines).encode()):016x}\n"
want = open(listing).read()
if "".join(lines) + total != want:
    sys.stdout.write("FAIL: recomputed:\n" + "".join(lines) + total + "printed:\n" + want)
    sys.exit(1)
PY
exit $fail
