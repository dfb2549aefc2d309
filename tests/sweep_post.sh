#!/usr/bin/env bash
# sweep_post.sh: a sweep's steps after training. `eval_lengths`,
# `eval_quant` (with `eval_quant_keep_first` and `eval_quant_source`) and
# `intervene` in [sweep] make every run that ended done get
# `gatelab eval`, `gatelab eval --quant` and `gatelab intervene` by the
# sweep itself, stored in its run file (/lceval, /quant/MODE,
# /intervene/KIND), so a reference sweep's report has its
# long-context and intervention sections without a second command. A rerun
# skips runs that already hold them. `eval_needle = 1` adds the needle task
# to that eval (a text-data run: the needle needs byte text with BOS), read
# into results.csv's needle_acc_* columns and the report's needle table,
# which results.csv alone gives too; a run evaluated without it gets it on
# a rerun that asks.
#   tests/sweep_post.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" sweep_post "$@"
trap 'rm -rf "$W"' EXIT
groups() { h5dump -n "$1" 2>/dev/null | awk '$1 == "group" {print $2}' | tr '\n' ' '; }
printf '[sweep]\npreset = %s\nseeds = 1\nset = steps=12\nset = eval_every=6\n' \
    "$S/experiments/tiny.ini" >post.sweep
printf 'eval_lengths = 1,2\nintervene = bos-mean, no-bos\neval_quant = w8a8,w4a4\n' >>post.sweep
printf 'eval_quant_keep_first = 1\neval_quant_source = 1\n' >>post.sweep
printf '[run baseline]\nvariant = baseline\n[run g1-elem]\nvariant = g1-elem\n' >>post.sweep

"$G" sweep post.sweep --out out --jobs 2 >sweep.log 2>&1 || bad "sweep failed: $(tail -3 sweep.log)"
for r in baseline g1-elem; do
    g=$(groups "out/${r}_s1.h5")
    for want in /lceval /intervene/none /intervene/bos-mean /intervene/no-bos /quant /quant/w8a8 \
        /quant/w4a4; do
        [[ " $g" == *" $want "* ]] || bad "$r: no $want in the run file (groups: $g)"
    done
    [[ " $g" == *" /intervene/gates-open "* ]] && bad "$r: an intervention that was not asked for"
    [[ " $g" == *" /quant/w8a8-pct "* ]] && bad "$r: a quantization mode that was not asked for"
done
grep -q "^Interventions" out/REPORT.md || bad "the report has no intervention table"
# eval_quant_keep_first and eval_quant_source reach that eval: K on /quant, a source per mode
grep -q "gatelab sweep: eval .* --quant w8a8,w4a4 --quant-keep-first 1 --quant-source" \
    out/logs/baseline_s1.log || bad "the quantized eval lacks its options"
h5dump -a /quant/keep_first out/baseline_s1.h5 | grep -q "(0): 1" || bad "/quant keep_first is not 1"
h5dump -a /quant/w4a4/source out/baseline_s1.h5 | grep -q '"layer ' || bad "/quant/w4a4 has no source"
grep -q "^| baseline | w8a8 | layer " out/REPORT.md || bad "the report names no damage source"

# a rerun keeps the stored results and runs neither step again
cp out/baseline_s1.h5 before.h5
"$G" sweep post.sweep --out out --jobs 2 --no-report >again.log 2>&1 || bad "rerun failed"
grep -q "intervene baseline_s1" again.log && bad "the rerun intervened again: $(cat again.log)"
grep -q "eval baseline_s1" again.log && bad "the rerun evaluated again"
cmp -s out/baseline_s1.h5 before.h5 || bad "the rerun changed a finished run file"

# the needle: a tiny run on the test text files, evaluated without it first
{
    printf '[sweep]\npreset = %s\nseeds = 1\nset = steps=12\nset = eval_every=6\n' \
        "$S/experiments/tiny.ini"
    printf 'set = data=text\nset = seq_len=64\nset = train_file=%s\nset = val_file=%s\n' \
        "$S/tests/data/text_train.txt" "$S/tests/data/text_val.txt"
    printf 'eval_lengths = 1,2\n'
} >needle.sweep
printf '[run baseline]\nvariant = baseline\n' >runs.part
cat runs.part >>needle.sweep
"$G" sweep needle.sweep --out nd --jobs 1 --no-report >needle.log 2>&1 ||
    bad "text sweep failed: $(tail -3 needle.log)"
h5dump -d /lceval/plain/L_64/needle_acc nd/baseline_s1.h5 >/dev/null 2>&1 &&
    bad "a needle result without eval_needle"
sed -i 's/^eval_lengths = 1,2$/eval_lengths = 1,2\neval_needle = 1/' needle.sweep
"$G" sweep needle.sweep --out nd --jobs 1 >needle.log 2>&1 ||
    bad "needle sweep failed: $(tail -3 needle.log)"
grep -q "eval baseline_s1 at 1x,2x (plain and YaRN, needle)" needle.log ||
    bad "a run evaluated without the needle was not evaluated again: $(cat needle.log)"
for L in 64 128; do
    h5dump -d "/lceval/plain/L_$L/needle_acc" nd/baseline_s1.h5 >/dev/null 2>&1 ||
        bad "no needle result at $L"
done
head -1 nd/results.csv | tr ',' '\n' >ncols.txt
val() { awk -F, -v c="$(grep -nx "$1" ncols.txt | cut -d: -f1)" 'NR == 2 {print $c}' nd/results.csv; }
[ -n "$(val needle_acc_1x_plain)" ] && [ -n "$(val needle_acc_2x_plain)" ] ||
    bad "needle_acc_1x_plain/2x blank in results.csv"
[ -z "$(val needle_acc_4x_plain)" ] || bad "needle_acc_4x_plain filled where not evaluated"
[ "$(val needle_rows)" = 80 ] || bad "needle_rows $(val needle_rows), want 5 depths x 16 rows"
grep -q "^## Needle retrieval" nd/REPORT.md || bad "the report has no needle section"
grep -q "Retrieval: untestable here.\*\* No arm retrieves above chance" nd/REPORT.md ||
    bad "a 12-step model's needle table is not marked untestable here"
# results.csv alone gives the same needle section
mkdir ndcsv && cp nd/results.csv ndcsv/
"$G" report ndcsv >ndcsv.log 2>&1 || bad "report from results.csv failed: $(cat ndcsv.log)"
section() { awk '/^## / { on = $0 ~ /^## Needle retrieval/ } on' "$1"; }
[ -n "$(section ndcsv/REPORT.md)" ] && diff <(section nd/REPORT.md) <(section ndcsv/REPORT.md) \
    >needle.diff || bad "the needle section from results.csv differs: $(head -5 needle.diff)"
# a rerun that asks again evaluates nothing
"$G" sweep needle.sweep --out nd --jobs 1 --no-report >again.log 2>&1 || bad "needle rerun failed"
grep -q "eval baseline_s1" again.log && bad "the rerun evaluated the needle again"
# eval_needle without eval_lengths, or with a bad value: one line naming the line
{ sed '/^eval_lengths/d' needle.sweep; } >bad1.sweep
"$G" sweep bad1.sweep --out x --dry-run >bad1.log 2>&1 && bad "eval_needle without eval_lengths ran"
grep -q "bad1.sweep:[0-9]*: eval_needle = 1 needs eval_lengths" bad1.log ||
    bad "eval_needle without eval_lengths: $(cat bad1.log)"
sed 's/^eval_needle = 1$/eval_needle = yes/' needle.sweep >bad2.sweep
"$G" sweep bad2.sweep --out x --dry-run >bad2.log 2>&1 && bad "eval_needle = yes accepted"
grep -q "bad2.sweep:[0-9]*: bad eval_needle 'yes'" bad2.log || bad "eval_needle = yes: $(cat bad2.log)"

[ $fail -eq 0 ] && echo "sweep_post: PASS" && exit 0
exit 1
