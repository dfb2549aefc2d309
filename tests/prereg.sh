#!/usr/bin/env bash
# prereg.sh: a confirmatory sweep's pre-registration, end to end, in a
# temporary git repository. A sweep file with [primary] that differs from
# its last commit is refused in one line; --uncommitted lets it through and
# is recorded; a committed one records its commit and sweep_dirty 0 in
# every run file's /protocol, beside protocol.ini's exact text and hash, and
# the report says "declared before the runs"; protocol.ini edited after the
# runs makes the report name them.
#   tests/prereg.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" prereg "$@"
trap 'rm -rf "$W"' EXIT
command -v git >/dev/null || { echo "prereg: SKIP (git is not installed: no repository to test in)"; exit 77; }
attr() { h5dump -a "/protocol/$2" "$1" 2>/dev/null | awk -F': ' '/\(0\)/ {print $2}' | tr -d '"'; }

git init -q repo && cd repo || exit 1
git config user.email t@t && git config user.name t
cp "$S/experiments/tiny.ini" tiny.ini
printf '[sweep]\npreset = tiny\nseeds = 1\nset = steps=4\nset = eval_every=4\n' >c.sweep
printf '[primary]\nmetric = f_attn\ntest = f_attn welch\ncompare = g1-elem vs baseline\n' >>c.sweep
printf '[run baseline]\nvariant = baseline\n[run g1-elem]\nvariant = g1-elem\n' >>c.sweep
git add tiny.ini c.sweep && git commit -qm sweep
commit=$(git log -1 --format=%H -- c.sweep)

# edited since its commit: refused in one line naming the file and the flag
echo '; an edit' >>c.sweep
"$G" sweep c.sweep --out dirty >dirty.log 2>&1
rc=$?
[ $rc -eq 2 ] || bad "an edited confirmatory sweep file ran (exit $rc)"
[ "$(wc -l <dirty.log)" -eq 1 ] || bad "the refusal is not one line: $(cat dirty.log)"
grep -q "c.sweep: a confirmatory sweep.*differs from its last commit.*--uncommitted" dirty.log ||
    bad "the refusal does not say why: $(cat dirty.log)"
[ -e dirty/baseline_s1.h5 ] && bad "a refused sweep trained"

# --uncommitted lets it through, and the run files say so
"$G" sweep c.sweep --out unc --uncommitted --jobs 2 >unc.log 2>&1 || bad "--uncommitted failed: $(tail -3 unc.log)"
[ "$(attr unc/baseline_s1.h5 uncommitted)" = 1 ] || bad "uncommitted not recorded"
[ "$(attr unc/baseline_s1.h5 sweep_dirty)" = 1 ] || bad "sweep_dirty not recorded as 1"
grep -q '^uncommitted = 1$' unc/protocol.ini || bad "protocol.ini does not record --uncommitted"

# committed: commit, clean, text and hash recorded; declared before the runs
git checkout -q c.sweep
"$G" sweep c.sweep --out ok --jobs 2 >ok.log 2>&1 || bad "committed sweep failed: $(tail -3 ok.log)"
for r in baseline g1-elem; do
    f=ok/${r}_s1.h5
    [ "$(attr "$f" sweep_commit)" = "$commit" ] || bad "$r: sweep_commit $(attr "$f" sweep_commit), not $commit"
    [ "$(attr "$f" sweep_dirty)" = 0 ] || bad "$r: sweep_dirty not 0"
    [ "$(attr "$f" uncommitted)" = 0 ] || bad "$r: uncommitted not 0"
    case "$(attr "$f" hash)" in fnv1a64:????????????????) ;; *) bad "$r: no hash" ;; esac
done
h5dump -a /protocol/text ok/baseline_s1.h5 | grep -q 'compare = g1-elem vs baseline' ||
    bad "the run file does not hold protocol.ini's text"
grep -q "declared before the runs: every run file records its hash" ok/REPORT.md ||
    bad "the report does not say declared before the runs"
cut -d, -f1 ok/results.csv | head -1 >/dev/null
head -1 ok/results.csv | grep -q ',protocol_hash$' || bad "results.csv has no protocol_hash column"
grep -q "$(attr ok/baseline_s1.h5 hash)" ok/results.csv || bad "results.csv lacks the run's hash"

# protocol.ini edited after the runs: the report names them
echo 'margin = f_attn 0.5' >>ok/protocol.ini
"$G" report ok >rep.log 2>&1 || bad "report failed: $(cat rep.log)"
grep -q 'not declared before every run\*\*: 2 runs recorded another protocol (`baseline_s1.h5`, `g1-elem_s1.h5`)' ok/REPORT.md ||
    bad "the report does not name the runs made under another protocol: $(grep -m1 'protocol.ini' ok/REPORT.md)"

[ $fail -eq 0 ] && echo "prereg: PASS" && exit 0
exit 1
