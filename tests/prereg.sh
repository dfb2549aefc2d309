#!/usr/bin/env bash
# prereg.sh: a confirmatory sweep's pre-registration, end to end, in a
# temporary git repository (preset tiny, 4 steps; reports without
# figures). A sweep whose sweep file, include or preset differs from its
# last commit is refused in one line, and so is one reached through GIT_DIR/GIT_WORK_TREE from outside
# any repository, or through a symbolic link to an edited or outside file;
# --uncommitted lets it through and the report's headline says so; a
# committed one records its commit in every run file's /protocol and pins
# its files, build, rules and run list in protocol.ini, and the report
# says "declared before the runs" only while every check holds: deleted
# run files, protocol.ini edited after the runs, protocol.ini and the runs'
# /protocol edited together ([primary] or the run list), other rules, or a
# results.csv committed before the protocol that holds a declared seed are
# each named. sweep refuses to replace a protocol.ini it did not write (or
# a symbolic link there).
#   tests/prereg.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" prereg "$@"
trap 'rm -rf "$W"' EXIT
command -v git >/dev/null || { echo "prereg: SKIP (git is not installed: no repository to test in)"; exit 77; }
attr() { h5dump -a "/protocol/$2" "$1" 2>/dev/null | awk -F': ' '/\(0\)/ {print $2}' | tr -d '"'; }
# refused LOG WHAT PATTERN: the sweep exited 2 with one line matching PATTERN
refused() {
    [ "$rc" -eq 2 ] || bad "$2 ran (exit $rc): $(tail -2 "$1")"
    [ "$(hook_free "$1" | wc -l)" -eq 1 ] || bad "$2: the refusal is not one line: $(cat "$1")"
    grep -q -- "$3" "$1" || bad "$2: the refusal does not say why: $(cat "$1")"
}
pin_fingerprint
declared='declared before the runs: every run file records its hash, as far as the checks below go'

study_repo 1-2
printf '[sweep]\npreset = tiny\nseeds = 1\nset = steps=4\n[run extra]\nvariant = baseline\n' >inc.sweep
sed 's/^\[primary\]/include = inc.sweep\n[primary]/' c.sweep >i.sweep
git add tiny.ini c.sweep inc.sweep i.sweep && git commit -qm sweep
commit=$(git log -1 --format=%H -- c.sweep)

# edited since its commit: refused in one line naming the file and the flag
echo '; an edit' >>c.sweep
"$G" sweep c.sweep --out dirty >dirty.log 2>&1
rc=$?
refused dirty.log "an edited sweep file" "c.sweep: a confirmatory sweep.*c.sweep differs from its last commit.*--uncommitted"
[ -e dirty/baseline_s1.h5 ] && bad "a refused sweep trained"

# --uncommitted lets it through; the run files and the headline say so
"$G" sweep c.sweep --no-figures --out unc --uncommitted --jobs 2 >unc.log 2>&1 || bad "--uncommitted failed: $(tail -3 unc.log)"
[ "$(attr unc/baseline_s1.h5 uncommitted)" = 1 ] || bad "uncommitted not recorded"
[ "$(attr unc/baseline_s1.h5 sweep_dirty)" = 1 ] || bad "sweep_dirty not recorded as 1"
grep -q '^uncommitted = 1$' unc/protocol.ini || bad "protocol.ini does not record --uncommitted"
grep -q -- '- \*\*run with --uncommitted\*\*' unc/REPORT.md || bad "the headline does not state --uncommitted"
grep -q "$declared" unc/REPORT.md && bad "an --uncommitted sweep reads declared before the runs"
git checkout -q c.sweep

# an edited preset, an edited include: refused like the sweep file
sed -i 's/^steps = .*/steps = 3/' tiny.ini
"$G" sweep c.sweep --out preset >preset.log 2>&1
rc=$?
refused preset.log "an edited preset" "tiny.ini differs from its last commit"
git checkout -q tiny.ini
echo '; an edit' >>inc.sweep
"$G" sweep i.sweep --out inc >inc.log 2>&1
rc=$?
refused inc.log "an edited include" "inc.sweep differs from its last commit"
git checkout -q inc.sweep

# outside any repository, GIT_DIR and GIT_WORK_TREE do not make it committed
mkdir ../outside && cp c.sweep tiny.ini ../outside/
GIT_DIR=$PWD/.git GIT_WORK_TREE=$PWD "$G" sweep ../outside/c.sweep --out ../outside/o >env.log 2>&1
rc=$?
refused env.log "a sweep outside any repository under GIT_DIR" "not in a git repository"
# a release archive or a copy without .git: with --uncommitted it runs, and
# the protocol, its run files and the headline say why it was not checked
"$G" sweep ../outside/c.sweep --no-figures --out ../outside/o --jobs 2 --uncommitted >copy.log 2>&1 ||
    bad "--uncommitted outside any repository failed: $(tail -2 copy.log)"
grep -qx "unchecked = the sweep file is not in a git repository" ../outside/o/protocol.ini ||
    bad "protocol.ini does not say why it was not checked"
grep -q "\*\*the protocol could not be checked against a commit\*\*: the sweep file is not in a git repository" \
    ../outside/o/REPORT.md || bad "the headline does not say the protocol could not be checked"
grep -q "\*\*run with --uncommitted\*\*" ../outside/o/REPORT.md || bad "the headline hides --uncommitted"

# a committed symbolic link is judged by its target: edited, or outside
cp c.sweep t.sweep && ln -s t.sweep link.sweep && ln -s ../outside/c.sweep away.sweep
git add t.sweep link.sweep away.sweep && git commit -qm links
echo '; an edit' >>t.sweep
"$G" sweep link.sweep --out link >link.log 2>&1
rc=$?
refused link.log "a link to an edited file" "t.sweep differs from its last commit"
"$G" sweep away.sweep --out away >away.log 2>&1
rc=$?
refused away.log "a link out of the repository" "leaves the repository"
git checkout -q t.sweep

# committed: commit, clean, text, hash and pins recorded; declared
"$G" sweep c.sweep --no-figures --out ok --jobs 2 >ok.log 2>&1 || bad "committed sweep failed: $(tail -3 ok.log)"
for r in baseline_s1 g1-elem_s2; do
    f=ok/$r.h5
    [ "$(attr "$f" sweep_commit)" = "$commit" ] || bad "$r: sweep_commit $(attr "$f" sweep_commit), not $commit"
    [ "$(attr "$f" sweep_dirty)" = 0 ] || bad "$r: sweep_dirty not 0"
    [ "$(attr "$f" uncommitted)" = 0 ] || bad "$r: uncommitted not 0"
    case "$(attr "$f" hash)" in fnv1a64:????????????????) ;; *) bad "$r: no hash" ;; esac
done
h5dump -a /protocol/text ok/baseline_s1.h5 | grep -q 'compare = g1-elem vs baseline' ||
    bad "the run file does not hold protocol.ini's text"
grep -q "^file = $commit fnv1a64:[0-9a-f]\{16\} tiny.ini$" ok/protocol.ini || bad "the preset is not pinned: $(cat ok/protocol.ini)"
grep -q '^run = g1-elem 1 2$' ok/protocol.ini || bad "the run list is not recorded"
grep -q '^rules = confirm-rules ' ok/protocol.ini || bad "the rules are not pinned"
grep -q "$declared" ok/REPORT.md || bad "the report does not say declared before the runs: $(grep -m1 'protocol.ini' ok/REPORT.md)"
grep -q "No results.csv in the tree at ${commit:0:12} (0 found) holds a declared seed" ok/REPORT.md ||
    bad "the seeds are not checked against the committed results.csv files"
grep -q 'Not checkable from these files: whether a declared seed was run' ok/REPORT.md ||
    bad "the headline does not say what cannot be checked (a preview in another directory)"
grep -q 'Written .* by gatelab .*(git .*), under the analysis rules "confirm-rules' ok/REPORT.md ||
    bad "REPORT.md does not record the build and rules that wrote it"
head -1 ok/results.csv | tr ',' '\n' | grep -qx protocol_hash || bad "results.csv has no protocol_hash column"
grep -q "$(attr ok/baseline_s1.h5 hash)" ok/results.csv || bad "results.csv lacks the run's hash"
grep -q 'All 4 declared runs (names × seeds) have their run files here' ok/REPORT.md ||
    bad "the headline does not say every declared run is here"
grep -q '^- This report: gatelab .*; the protocol: gatelab ' ok/REPORT.md ||
    bad "the headline does not name the report's build beside the protocol's"
# a pin whose hash is not its commit's bytes: named
cp -r ok pinned && sed -i "s/^file = $commit fnv1a64:[0-9a-f]* tiny.ini$/file = $commit fnv1a64:0000000000000000 tiny.ini/" pinned/protocol.ini
"$G" report pinned --no-figures >rep.log 2>&1 || bad "report failed: $(cat rep.log)"
grep -q '\*\*`tiny.ini` is not as pinned\*\*' pinned/REPORT.md || bad "a wrong pin is not named: $(grep -m3 '^- ' pinned/REPORT.md)"
grep -q "$declared" pinned/REPORT.md && bad "a wrong pin reads declared before the runs"
# pins that cannot be read: said, and not declared
cp -r ok unread && sed -i 's/^file = .* tiny.ini$/file = garbage/' unread/protocol.ini
"$G" report unread --no-figures >rep.log 2>&1 || bad "report failed: $(cat rep.log)"
grep -q "\*\*the protocol's pins cannot be read\*\*" unread/REPORT.md || bad "unreadable pins are not said: $(grep -m3 '^- ' unread/REPORT.md)"
grep -q "$declared" unread/REPORT.md && bad "unreadable pins read declared before the runs"
# rerun into the same directory: its own protocol.ini is replaced, runs skipped
"$G" sweep c.sweep --out ok --jobs 2 --no-report >ok2.log 2>&1 || bad "a rerun into its own directory failed: $(tail -2 ok2.log)"

# a declared run deleted with its row of results.csv: named in the headline
cp -r ok deleted && rm deleted/g1-elem_s2.h5 deleted/results.csv
"$G" report deleted --no-figures >rep.log 2>&1 || bad "report failed: $(cat rep.log)"
grep -q '\*\*1 of 4 declared runs are missing\*\*: `g1-elem_s2.h5`' deleted/REPORT.md || bad "a deleted run is not named"
grep -q "$declared" deleted/REPORT.md && bad "a directory with a deleted run reads declared before the runs"

# other rules pinned: said (a build with other rules reads the same)
cp -r ok rules && sed -i 's/^rules = .*/rules = confirm-rules 1, alpha 0.6/' rules/protocol.ini
"$G" report rules --no-figures >rep.log 2>&1 || bad "report failed: $(cat rep.log)"
grep -q '\*\*the rules differ\*\*: the protocol pins "confirm-rules 1, alpha 0.6"' rules/REPORT.md ||
    bad "other rules are not named"

# protocol.ini edited after the runs: the report names them
cp -r ok edited && echo 'margin = f_attn 0.5' >>edited/protocol.ini
"$G" report edited --no-figures >rep.log 2>&1 || bad "report failed: $(cat rep.log)"
grep -q 'not declared before every run\*\*: 4 runs recorded another protocol (`baseline_s1.h5`, `baseline_s2.h5`' edited/REPORT.md ||
    bad "the report does not name the runs made under another protocol: $(grep -m1 'protocol.ini' edited/REPORT.md)"

# protocol.ini and the runs' /protocol edited together: git disagrees
# train_under DIR [SKIP]: c.sweep's runs but SKIP, by hand, under DIR/protocol.ini
train_under() {
    "$G" sweep c.sweep --list | while IFS=$'\t' read -r _ id preset sets; do
        [ "$id" = "${2:-}" ] && continue
        args=()
        for s in $sets; do args+=(--set "$s"); done
        "$G" train --config "$preset" "${args[@]}" --protocol "$1/protocol.ini" --out "$1/$id.h5" -q >/dev/null 2>&1 ||
            echo "FAIL: training $id under $1/protocol.ini failed"
    done
}
mkdir hand && sed 's/^test = f_attn welch$/test = f_attn mann-whitney/' ok/protocol.ini >hand/protocol.ini
train_under hand
"$G" report hand --no-figures >rep.log 2>&1 || bad "report failed: $(cat rep.log)"
grep -q "\*\*the protocol's families are not the sweep file's\*\*: \`c.sweep\` at $commit" hand/REPORT.md ||
    bad "a protocol edited with its runs passes: $(grep -m3 '^- ' hand/REPORT.md)"
grep -q "$declared" hand/REPORT.md && bad "a protocol edited with its runs reads declared before the runs"
# ... and its run list shortened with them, to hide a seed
mkdir short && sed 's/^run = g1-elem 1 2$/run = g1-elem 1/' ok/protocol.ini >short/protocol.ini
train_under short g1-elem_s2
"$G" report short --no-figures >rep.log 2>&1 || bad "report failed: $(cat rep.log)"
grep -q "\*\*the protocol's run list is not the committed sweep files'\*\*: \`g1-elem_s2\` is committed but not in the list" short/REPORT.md ||
    bad "a run list shortened with its runs passes: $(grep -m4 '^- ' short/REPORT.md)"
grep -q "$declared" short/REPORT.md && bad "a shortened run list reads declared before the runs"

# a protocol.ini the sweep did not write, or a link there: refused, kept
mkdir foreign && printf '[primary]\nmetric = m_act\n' >foreign/protocol.ini
"$G" sweep c.sweep --out foreign >foreign.log 2>&1
rc=$?
refused foreign.log "a sweep over a user's protocol.ini" "foreign/protocol.ini was not written by gatelab sweep"
[ "$(cat foreign/protocol.ini)" = "$(printf '[primary]\nmetric = m_act')" ] || bad "a user's protocol.ini was changed"
mkdir linked && ln -s ../ok/protocol.ini linked/protocol.ini
"$G" sweep c.sweep --out linked >linked.log 2>&1
rc=$?
refused linked.log "a sweep over a linked protocol.ini" "linked/protocol.ini is a symbolic link"

# a committed study that ran a declared seed before the protocol's commit
mkdir prev && printf 'file,run,variant,data,seed\n"x,y_s2.h5",x,baseline,bigram,2\n' >prev/results.csv
echo '; seeds 1-2 again' >>c.sweep && git add prev/results.csv c.sweep && git commit -qm preview
"$G" sweep c.sweep --no-figures --out preview --jobs 2 >preview.log 2>&1 || bad "the preview sweep failed: $(tail -2 preview.log)"
grep -q "\*\*a declared seed was run before the protocol's commit\*\*: \`prev/results.csv\` at [0-9a-f]\{12\} holds seed 2" preview/REPORT.md ||
    bad "a seed in a results.csv committed before the protocol is not named: $(grep -m3 '^- ' preview/REPORT.md)"
grep -q "$declared" preview/REPORT.md && bad "a previewed seed reads declared before the runs"

# a committed results.csv too large to read: the seeds are not checked, and
# the report says so rather than an all-clear
git rm -q prev/results.csv && mkdir big && head -c 1100000 /dev/zero | tr '\0' 'x' >big/results.csv
echo '; seeds 1-2 once more' >>c.sweep && git add big/results.csv c.sweep && git commit -qm big
"$G" sweep c.sweep --no-figures --out bigcsv --jobs 2 >bigcsv.log 2>&1 || bad "the sweep beside a large results.csv failed: $(tail -2 bigcsv.log)"
grep -q '\*\*seeds not checked\*\*: `big/results.csv` at [0-9a-f]\{12\} cannot be read' bigcsv/REPORT.md ||
    bad "an unread results.csv passes as checked: $(grep -m3 '^- ' bigcsv/REPORT.md)"
grep -q "$declared" bigcsv/REPORT.md && bad "an unread results.csv reads declared before the runs"

[ $fail -eq 0 ] && echo "prereg: PASS" && exit 0
exit 1
