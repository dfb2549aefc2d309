#!/usr/bin/env bash
# check_seeds.sh: every claims study declares fresh seeds. Training is
# deterministic, so a run of a study's seed at its setting made anywhere
# else is a preview of its result; the committed tree must hold none:
#   - no seed of an experiments/claims-*.sweep is a seed of any committed
#     results/**/results.csv (its `seed` column) but the study's own,
#     results/reference/NAME/results.csv for claims-NAME.sweep's NAME;
#   - no seed of a claims sweep is a seed of any other experiments/*.sweep
#     (quickstart, another claims study, the reference sweeps).
# Seeds are read as the sweep expands them (`gatelab sweep FILE --list`,
# includes too). The check runs on the source tree (it must pass) and on a
# copy with a clash put in each way (it must fail, naming the clash).
#   tests/check_seeds.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" check_seeds "$@"
trap 'rm -rf "$W"' EXIT

# The seeds FILE.sweep runs, one per line, sorted and unique.
sweep_seeds() {
    "$G" sweep "$1" --list | awk -F'\t' '{ sub(/.*_s/, "", $2); print $2 }' | sort -u
}

# The seed column of a results.csv, one per line, sorted and unique.
csv_seeds() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "seed") c = i; next }
             c { print $c }' "$1" | sort -u
}

# check EXPERIMENTS RESULTS: prints each clash; its exit status is 1 when
# there is one. Every sweep file must expand.
check() {
    local exp=$1 res=$2 clash=0 f g
    mkdir -p seeds
    for f in "$exp"/*.sweep; do
        sweep_seeds "$f" >"seeds/$(basename "$f").txt" || {
            echo "$f: gatelab sweep --list failed"
            clash=1
        }
    done
    for f in "$exp"/claims-*.sweep; do
        [ -e "$f" ] || continue
        local mine="seeds/$(basename "$f").txt" own="$res/reference/$(basename "$f" .sweep)/results.csv"
        for g in "$exp"/*.sweep; do
            [ "$g" = "$f" ] && continue
            local both
            both=$(comm -12 "$mine" "seeds/$(basename "$g").txt" | tr '\n' ' ')
            [ -n "$both" ] && echo "$f: seeds ${both% } are also seeds of $g" && clash=1
        done
        while IFS= read -r g; do
            [ "$g" = "$own" ] && continue
            local both
            both=$(comm -12 "$mine" <(csv_seeds "$g") | tr '\n' ' ')
            [ -n "$both" ] && echo "$f: seeds ${both% } were run by the committed study $g" && clash=1
        done < <(find "$res" -name results.csv | sort)
    done
    rm -rf seeds
    return $clash
}

out=$(check "$S/experiments" "$S/results") || bad "a claims study's seeds are not fresh: $out"
[ -n "$(ls "$S"/experiments/claims-*.sweep 2>/dev/null)" ] || bad "no claims-*.sweep in $S/experiments"

# The check can fail: a copy whose quickstart takes a claims study's seed,
# and one whose committed results ran it.
cp -r "$S/experiments" exp && mkdir -p res/study
first=$(sweep_seeds exp/claims-bigram.sweep | head -1)
sed -i "s/^seeds = .*/seeds = 7,$first/" exp/quickstart.sweep
out=$(check exp res) && bad "a quickstart seed ($first) shared with claims-bigram passed"
echo "$out" | grep -q "claims-bigram.sweep: seeds $first are also seeds of exp/quickstart.sweep" ||
    bad "the clash with the quickstart is not named: $out"
cp "$S/experiments/quickstart.sweep" exp/quickstart.sweep
printf 'file,run,variant,data,seed,status\nbaseline_s%s.h5,baseline,baseline,bigram,%s,done\n' \
    "$first" "$first" >res/study/results.csv
out=$(check exp res) && bad "a claims seed ($first) in a committed results.csv passed"
echo "$out" | grep -q "claims-bigram.sweep: seeds $first were run by the committed study res/study/results.csv" ||
    bad "the clash with a committed study is not named: $out"
# The study's own committed results hold its seeds; another study's may not.
mkdir -p res/reference/claims-bigram && mv res/study/results.csv res/reference/claims-bigram/
out=$(check exp res) || bad "claims-bigram's own results.csv counted as a clash: $out"
mkdir -p res/reference/claims-brown && cp res/reference/claims-bigram/results.csv res/reference/claims-brown/
out=$(check exp res) && bad "claims-bigram's seed ($first) in claims-brown's results.csv passed"
echo "$out" | grep -q "claims-bigram.sweep: seeds $first were run by the committed study res/reference/claims-brown/results.csv" ||
    bad "the clash with another claims study's results is not named: $out"

[ $fail -eq 0 ] && echo "check_seeds: PASS" && exit 0
exit 1
