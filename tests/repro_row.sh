#!/usr/bin/env bash
# repro_row.sh STUDY RUN [GATELAB]: retrains one run of a committed study
# with this build and compares its results.csv row with the committed one,
# every column as text, so every digit.
#
#   tests/repro_row.sh claims-brown baseline_s1001
#
# STUDY names experiments/STUDY.sweep and results/reference/STUDY/; RUN is a
# run name of `gatelab sweep --list` (NAME_sSEED). The run is made as the
# sweep makes it (`sweep --only K`: training and the sweep's evals,
# interventions and quantization) in a scratch directory, reported alone
# (`gatelab report`, without the protocol, whose comparisons one run
# cannot meet), and its row set beside the study's. The protocol.ini the
# sweep writes must equal the study's but for its `repo =` line (the
# checkout's path), its `gatelab =` line (this build, which may be a
# later one: the rows say whether it trains to the same bits) and, when the
# study's was written by a build that pinned no fingerprint, its
# `training =` line; a study without a protocol.ini (a sweep with no
# [primary] section) must get none. protocol_hash, a hash of that whole
# file, is therefore not held. Nor are `file`, `tokens_per_sec` (a speed), and the columns a
# report computes from other runs of its directory (dppl_vs_baseline,
# dppl_pct_vs_baseline), which a run reported alone cannot have; each is
# printed when it differs.
# Exit 0 when every other column is equal, 1 when one differs, 2 on a
# usage or run error. GATELAB defaults to build/gatelab.
set -uo pipefail
die() { echo "repro_row.sh: $*" >&2; exit 2; }
[ $# -ge 2 ] && [ $# -le 3 ] || die "usage: $0 STUDY RUN [GATELAB]"
study=$1 run=$2
src=$(cd "$(dirname "$0")/.." && pwd)
bin=${3:-$src/build/gatelab}
sweep=$src/experiments/$study.sweep
csv=$src/results/reference/$study/results.csv
[ -x "$bin" ] || die "$bin: no gatelab binary (build it, or name one as the third argument)"
[ -f "$sweep" ] || die "$sweep: no such sweep file (STUDY names experiments/STUDY.sweep)"
[ -f "$csv" ] || die "$csv: the study has no committed results.csv (has it been run?)"
cd "$src" || die "$src: cannot enter the repository"
k=$("$bin" sweep --list "experiments/$study.sweep" --out /nonexistent |
    awk -F'\t' -v r="$run" '$2 == r { print $1 }')
[ -n "$k" ] || die "$run: not a run of experiments/$study.sweep (see gatelab sweep --list)"
dir=$(mktemp -d) || die "cannot make a scratch directory"
trap 'rm -rf "$dir"' EXIT
echo "repro_row.sh: retraining $run (run $k of $study) in $dir"
"$bin" sweep "experiments/$study.sweep" --only "$k" --out "$dir" --jobs 1 --no-report ||
    die "$run: the sweep failed: $(grep -h '^gatelab' "$dir"/logs/*.log | tail -n 1)"
# the protocol this sweep declared is the study's, but for the checkout's
# path, the build that ran it and, where the study's build pinned none, its
# training fingerprint (its training is held by the rows below)
study_proto=${csv%/*}/protocol.ini
if [ ! -e "$study_proto" ]; then
    [ ! -e "$dir/protocol.ini" ] ||
        die "$run: the sweep wrote a protocol.ini, the study has none (a [primary] added since?)"
    echo "repro_row.sh: the study declares no protocol (no [primary] section); none to compare"
else
    drop='^(repo|gatelab) = '
    grep -q '^training = ' "$study_proto" || drop='^(repo|gatelab|training) = '
    declared() { grep -Ev "$drop" "$1"; }
    echo "repro_row.sh: study's build: $(grep -m1 '^gatelab = ' "$study_proto");" \
        "this one: $(grep -m1 '^gatelab = ' "$dir/protocol.ini")"
    if ! diff <(declared "$study_proto") <(declared "$dir/protocol.ini") >"$dir/protocol.diff"; then
        cat "$dir/protocol.diff"
        echo "repro_row.sh: $run: the sweep declares another protocol than the study's protocol.ini" >&2
        exit 1
    fi
    # one run cannot meet the protocol's comparisons: report it as exploratory
    mv "$dir/protocol.ini" "$dir/protocol.declared" || die "$dir/protocol.ini: the sweep wrote none"
fi
"$bin" report "$dir" >"$dir/report.out" 2>&1 ||
    die "$run: gatelab report failed: $(tail -n 1 "$dir/report.out")"
/usr/bin/python3 - "$csv" "$dir/results.csv" "$run.h5" <<'EOF'
import csv
import sys

FREE = {"file", "tokens_per_sec", "dppl_vs_baseline", "dppl_pct_vs_baseline", "protocol_hash"}
ref_path, new_path, name = sys.argv[1:]


def row(path):
    with open(path, encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["file"].split("/")[-1] == name]
    if len(rows) != 1:
        sys.exit("repro_row.sh: %s has %d rows for %s" % (path, len(rows), name))
    return rows[0]


ref, new = row(ref_path), row(new_path)
held = [c for c in ref if c not in FREE]
differ = [c for c in held if ref[c] != new.get(c)]
for c in ref:
    if ref[c] != new.get(c):
        print("%s %s: committed %s, retrained %s" % ("DIFFERS" if c in held else "not held",
                                                     c, ref[c], new.get(c)))
print("repro_row.sh: %s: %d of %d held columns equal to every digit%s"
      % (name, len(held) - len(differ), len(held), "" if not differ else "; %d differ" % len(differ)))
sys.exit(1 if differ else 0)
EOF
