#!/usr/bin/env bash
# pieces.sh: a confirmatory study run in pieces (`gatelab sweep --seeds`),
# end to end in a temporary git repository (preset tiny, 4 steps; reports
# without figures). The first piece's report states no test (interim) and names what is missing;
# the second piece, run where only the first piece's committed results.csv
# and protocol.ini are (a new machine), joins those rows to its run files,
# and its headline equals the headline of the whole study run at once.
# The build's training fingerprint is pinned in protocol.ini, and a build
# with another cannot add a piece. --seeds refuses a seed the sweep lacks,
# and --only beside it; a
# results.csv that cannot be read is left as it is, and the report refuses.
#   tests/pieces.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" pieces "$@"
trap 'rm -rf "$W"' EXIT
command -v git >/dev/null || { echo "pieces: SKIP (git is not installed: no repository to test in)"; exit 77; }

study_repo 1-4 'paper = f_attn g1-elem < baseline'
git add tiny.ini c.sweep && git commit -qm sweep
pin_fingerprint

# a seed the sweep lacks, and --only beside --seeds: refused in one line
"$G" sweep c.sweep --out x --seeds 1,9 >x.log 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q -- '--seeds: seed 9 is not a seed of' x.log || bad "a foreign seed: exit $rc: $(cat x.log)"
"$G" sweep c.sweep --out x --seeds 1 --only 0 >x.log 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q -- 'does not go with --only' x.log || bad "--seeds with --only: exit $rc: $(cat x.log)"
[ -e x/baseline_s1.h5 ] && bad "a refused piece trained"
"$G" sweep c.sweep --list --seeds 2 >list.log 2>&1 || bad "--list --seeds failed: $(cat list.log)"
[ "$(grep -c '_s2' list.log)" -eq 2 ] && ! grep -q '_s1' list.log || bad "--list --seeds does not list the piece: $(cat list.log)"

# piece 1: seeds 1-2; an interim report
"$G" sweep c.sweep --no-figures --out p1 --seeds 1-2 --jobs 2 >p1.log 2>&1 || bad "piece 1 failed: $(tail -3 p1.log)"
grep -q -- '--seeds 1-2: 4 of the sweep.s 8 runs' p1.log || bad "piece 1 does not say its share: $(head -3 p1.log)"
[ -e p1/baseline_s3.h5 ] && bad "piece 1 ran a seed outside it"
[ "$(ls p1/*.h5 | wc -l)" -eq 4 ] || bad "piece 1 did not run its 4 runs"
grep -q '\*\*Interim: no test yet.\*\* 4 of the runs' p1/REPORT.md || bad "piece 1's report is not interim: $(grep -m2 -A3 'Headline' p1/REPORT.md)"
grep -q '\*\*4 of 8 declared runs are missing\*\*' p1/REPORT.md || bad "piece 1 does not name the missing runs"
grep -q -- '- The paper:' p1/REPORT.md && bad "piece 1's report states a claim's test"
grep -q '^### Primary tests' p1/REPORT.md && bad "piece 1's report has a table of tests"

# the build's training fingerprint is pinned
fp=$("$G" fingerprint | sed -n 's/^training //p')
grep -qx "training = $fp" p1/protocol.ini || bad "protocol.ini does not pin the training fingerprint $fp"
grep -q "training fingerprint $fp" p1/REPORT.md || bad "the headline does not name the training fingerprint"
# a build that trains otherwise cannot add a piece: refused, nothing changed
cp p1/protocol.ini before.ini
GATELAB_TEST_RUN=pieces GATELAB_TEST_FINGERPRINT=fnv1a64:0123456789abcdef \
    "$G" sweep c.sweep --out p1 --seeds 3 >other.log 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "pins the training fingerprint $fp, this build's is fnv1a64:0123456789abcdef" other.log ||
    bad "a build with another fingerprint: exit $rc: $(tail -2 other.log)"
cmp -s p1/protocol.ini before.ini || bad "a refused piece changed protocol.ini"
[ -e p1/baseline_s3.h5 ] && bad "a build with another fingerprint trained"

# piece 2 on a new machine: the committed files of piece 1 only
mkdir p2 && cp p1/results.csv p1/protocol.ini p2/
"$G" sweep c.sweep --no-figures --out p2 --seeds 3-4 --jobs 2 >p2.log 2>&1 || bad "piece 2 failed: $(tail -3 p2.log)"
grep -q 'Run files in `.*p2`: 4 (4 readable, 0 unreadable), and 4 rows of `.*p2/results.csv` whose run files are not here' p2/REPORT.md ||
    bad "piece 2's report does not say what it joined: $(sed -n 3p p2/REPORT.md)"
grep -q 'All 8 declared runs (names × seeds) are here: 4 run files, and 4 rows of results.csv' p2/REPORT.md ||
    bad "piece 2's headline does not count the joined runs"
[ "$(tail -n +2 p2/results.csv | wc -l)" -eq 8 ] || bad "piece 2's results.csv does not hold all 8 runs"
grep -q 'Interim' p2/REPORT.md && bad "the last piece's report is interim"

# the whole study at once: the same headline sentences and tests
"$G" sweep c.sweep --no-figures --out whole --jobs 2 >whole.log 2>&1 || bad "the whole sweep failed: $(tail -3 whole.log)"
claims() { grep -E '^- The paper:|^\| P[0-9]' "$1"; }
[ -n "$(claims whole/REPORT.md)" ] || bad "the whole study states no claim"
[ "$(claims p2/REPORT.md)" = "$(claims whole/REPORT.md)" ] ||
    bad "the pieces' headline differs from the whole study's: $(diff <(claims p2/REPORT.md) <(claims whole/REPORT.md))"
# every row of piece 1 is in the joined results.csv as committed, but for
# the two columns taken against the baseline's mean over every seed
measured() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) skip[i] = $i ~ /^dppl/ }
             { s = ""; for (i = 1; i <= NF; i++) if (!skip[i]) s = s "," $i; print s }' "$1"
}
measured p2/results.csv >joined.rows
while IFS= read -r line; do
    grep -qxF -- "$line" joined.rows || bad "a row of piece 1 changed in the join: ${line:0:60}"
done < <(measured p1/results.csv | tail -n +2)

# a rerun of the last piece skips its runs and joins the same rows
"$G" sweep c.sweep --no-figures --out p2 --seeds 3-4 --jobs 2 >p2b.log 2>&1 || bad "rerunning piece 2 failed: $(tail -3 p2b.log)"
[ "$(tail -n +2 p2/results.csv | wc -l)" -eq 8 ] || bad "a rerun lost joined rows"

# a results.csv that cannot be read beside run files: refused, kept
cp -r p2 bad && rm bad/baseline_s3.h5 && echo 'baseline_s9.h5,x' >>bad/results.csv
cp bad/results.csv before.csv
"$G" report bad >bad.log 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q 'it may hold the rows of an earlier piece' bad.log || bad "an unreadable results.csv: exit $rc: $(cat bad.log)"
cmp -s bad/results.csv before.csv || bad "an unreadable results.csv was replaced"
exit $fail
