#!/usr/bin/env bash
# claims_tiny.sh: every claims study (experiments/claims-*.sweep, by glob,
# so a new one is covered without editing this test) run end to end at
# tiny scale as a user runs it: `gatelab sweep STUDY --jobs 2`, committed,
# in a scratch git repository. The copy of each study changes only what
# tiny cannot run or what would cost minutes, and keeps its families,
# tests, compares, claims, margins, evals and runs as declared:
#   preset = tiny.ini     a copy of experiments/tiny.ini (bigram data, no
#                         corpus needed; T = 32, 16-dim heads)
#   seeds = 9801-9810     a range no study declares; 10 seeds let every
#                         declared exact test reach its Holm bound (test_prereg's
#                         claims_families_reach: 9 two-sided tests need 9
#                         seeds), so none may read "left out (Tarone)"
#   steps                 `set = steps=12` and `set = eval_every=12` first, and
#                         every step count the study sets (`set = steps=N` or a
#                         run's `steps = N`) divided by 125 (at least 4), so
#                         the presets' 1500 steps become 12 and a study's
#                         ratios of steps stay (claims-length: 3000 -> 24);
#                         12 keep the whole test near two minutes on 2 cores
#   extend_* keys         the study's own preset's context extension (longctx.ini:
#                         continue at 256 with a raised RoPE base), as `set =`
#                         lines, so YaRN keeps a rotary pair and the YaRN claim
#                         is tested; eval_lengths then stops at 4x (8x of 256
#                         would take most of the test's time)
#   eval_needle           dropped: the needle task needs byte text and tiny
#                         is bigram (tests/sweep_post.sh runs the sweep's
#                         needle evaluation on text data)
#   include = F           F (beside the study) copied the same way
# Each study must exit 0 and write a REPORT.md whose confirmatory headline
# has one sentence per `paper =` line, each with its verdict: Confirmed,
# Not shown or Untestable here (never Contradicted for a one-sided or
# sink-free claim), or (paper = a ~ b) equivalent / not shown equivalent;
# whose pre-registration says declared before the runs; whose protocol.ini
# lists every run with the seeds. `gatelab report` on a directory holding
# only results.csv and protocol.ini then gives the same headline. The
# reports are written without figures (--no-figures; test_report and
# test_plot draw them).
# GATELAB_FAST=1 runs only the studies of at most 30 runs at 10 seeds,
# about a minute; the sanitized suite (ASAN_OPTIONS set,
# tests/run_sanitized.sh) the first of them alone: the plain suite holds
# every study's verdicts, the instrumented one looks for memory errors on
# one study's whole path.
#   tests/claims_tiny.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" claims_tiny "$@"
trap 'rm -rf "$W"' EXIT
command -v git >/dev/null || { echo "claims_tiny: SKIP (git is not installed: no repository to commit in)"; exit 77; }
pin_fingerprint
seeds=9801-9810
nseeds=10
declared='declared before the runs: every run file records its hash, as far as the checks below go'

git init -q repo && cd repo || exit 1
git config user.email t@t && git config user.name t
cp "$S/experiments/tiny.ini" tiny.ini
# tiny_copy SRC: SRC as its tiny copy ./NAME.sweep, and each file it
# includes (by a name relative to SRC) the same way, once
tiny_copy() {
    local src=$1 name preset ext inc
    name=$(basename "$src")
    [ -e "$name" ] && return 0
    preset=$(sed -n 's/^preset *= *\([^ ;]*\).*/\1/p' "$src")
    ext=$(sed -n 's/^\(extend_[a-z_]*\) *= *\([^ ;]*\).*/set = \1=\2/p' "$(dirname "$src")/${preset%.ini}.ini")
    ext=$ext awk -v seeds="$seeds" '
        function tiny_steps(n) { n = int(n / 125); return n < 4 ? 4 : n }
        /^\[sweep\]/ { print; print "set = steps=12"; print "set = eval_every=12"; if (ENVIRON["ext"] != "") print ENVIRON["ext"]; next }
        /^preset *=/ { print "preset = tiny.ini"; next }
        /^seeds *=/ { print "seeds = " seeds; next }
        /^set *= *eval_every=/ { next }
        /^set *= *steps=/ { split($0, kv, "="); print "set = steps=" tiny_steps(kv[3]); next }
        /^steps *=/ { split($0, kv, "="); print "steps = " tiny_steps(kv[2]); next }
        /^eval_lengths *=/ && ENVIRON["ext"] != "" { print "eval_lengths = 1,2,4"; next }
        /^eval_needle *=/ { next }
        { print }' "$src" >"$name"
    for inc in $(sed -n 's/^include *= *\([^ ;]*\).*/\1/p' "$src"); do
        [ "$(basename "$inc")" = "$inc" ] || { bad "$name: includes $inc outside its directory"; continue; }
        tiny_copy "$(dirname "$src")/$inc"
    done
}
studies=()
for src in "$S"/experiments/claims-*.sweep; do
    s=$(basename "$src" .sweep)
    tiny_copy "$src"
    runs=$(grep -c '^\[run ' "$s.sweep")
    if [ "${GATELAB_FAST:-0}" = 1 ] || [ -n "${ASAN_OPTIONS:-}" ]; then
        [ $((runs * nseeds)) -gt 30 ] && continue
        [ -n "${ASAN_OPTIONS:-}" ] && [ ${#studies[@]} -gt 0 ] && continue
    fi
    studies+=("$s")
done
[ ${#studies[@]} -gt 0 ] || bad "no claims study found under $S/experiments"
git add tiny.ini ./*.sweep && git commit -qm studies

# headline FILE: the confirmatory headline's sentences, one per line
headline() {
    awk '/^## Headline \(confirmatory\)/ { on = 1; next } on && /^## / { exit }
         on && /^- (The paper: |`)/' "$1"
}

for s in "${studies[@]}"; do
    start=$SECONDS
    "$G" sweep "$s.sweep" --no-figures --out "$s" --jobs 2 >"$s.log" 2>&1 || { bad "$s: sweep failed: $(tail -3 "$s.log")"; continue; }
    r=$s/REPORT.md
    [ -f "$r" ] || { bad "$s: no REPORT.md"; continue; }
    [ -e "$s/figures" ] && bad "$s: sweep --no-figures made $s/figures"
    grep -q '^## Headline (confirmatory)' "$r" || bad "$s: no confirmatory headline"
    grep -q "$declared" "$r" || bad "$s: not declared before the runs: $(grep -m1 'The protocol of this' "$r")"
    headline "$r" >"$s.head"
    claims=$(grep -c '^paper *=' "$s.sweep")
    equiv=$(grep -c '^paper *=.* ~ ' "$s.sweep")
    [ "$(grep -c '^- The paper: ' "$s.head")" -eq $((claims - equiv)) ] ||
        bad "$s: $((claims - equiv)) claims declared, headline sentences: $(grep -c '^- The paper: ' "$s.head")"
    [ "$(grep -c '^- `' "$s.head")" -eq "$equiv" ] ||
        bad "$s: $equiv equivalence claims declared, headline sentences: $(grep -c '^- `' "$s.head")"
    while IFS= read -r line; do
        case "$line" in
        '- The paper: '*'(tested one-sided)'*'**Contradicted**'* | *'sink-free'*'**Contradicted**'*)
            bad "$s: a one-sided claim reads Contradicted: $line" ;;
        '- The paper: '*'**Confirmed** here: '* | '- The paper: '*'**Not shown** here: '* | \
            '- The paper: '*'**Untestable here**: '* | '- The paper: '*'**Contradicted** here'*) ;;
        '- `'*' is **equivalent** ('* | '- `'*' is **not shown equivalent** ('*) ;;
        *) bad "$s: a headline sentence without its verdict: $line" ;;
        esac
    done <"$s.head"
    # the seeds are enough: no declared test is left out for its design
    grep -q "left out of the family (Tarone's rule)" "$r" &&
        bad "$s: $nseeds seeds leave a declared test out (Tarone): $(grep -m1 "Tarone's rule)" "$r")"
    # every declared run is in protocol.ini's run list with all the seeds
    for run in $(sed -n 's/^\[run \(.*\)\]$/\1/p' "$s.sweep"); do
        grep -q "^run = $run 9801 .*9810$" "$s/protocol.ini" ||
            bad "$s: protocol.ini does not list $run with seeds $seeds: $(grep -m1 "^run = $run " "$s/protocol.ini")"
    done
    # the report from results.csv and protocol.ini alone: the same headline
    mkdir "$s.kept" && cp "$s/results.csv" "$s/protocol.ini" "$s.kept/"
    "$G" report "$s.kept" --no-figures >"$s.report.log" 2>&1 || { bad "$s: report from results.csv failed: $(tail -2 "$s.report.log")"; continue; }
    headline "$s.kept/REPORT.md" | diff "$s.head" - >"$s.diff" ||
        bad "$s: the headline from results.csv differs: $(head -6 "$s.diff")"
    echo "claims_tiny: $s: $(wc -l <"$s.head") sentences, $(ls "$s"/*.h5 | wc -l) runs, $((SECONDS - start)) s"
done

[ $fail -eq 0 ] && echo "claims_tiny: PASS" && exit 0
exit 1
