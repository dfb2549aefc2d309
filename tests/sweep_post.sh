#!/usr/bin/env bash
# sweep_post.sh: a sweep's steps after training. `eval_lengths`,
# `eval_quant` and `intervene` in [sweep] make every run that ended done get
# `gatelab eval`, `gatelab eval --quant` and `gatelab intervene` by the
# sweep itself, stored in its run file (/lceval, /quant/MODE,
# /intervene/KIND), so a reference sweep's report has its
# long-context and intervention sections without a second command. A rerun
# skips runs that already hold them.
#   tests/sweep_post.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" sweep_post "$@"
trap 'rm -rf "$W"' EXIT
groups() { h5dump -n "$1" 2>/dev/null | awk '$1 == "group" {print $2}' | tr '\n' ' '; }
printf '[sweep]\npreset = %s\nseeds = 1\nset = steps=12\nset = eval_every=6\n' \
    "$S/experiments/tiny.ini" >post.sweep
printf 'eval_lengths = 1,2\nintervene = bos-mean, no-bos\neval_quant = w8a8,w4a4\n' >>post.sweep
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

# a rerun keeps the stored results and runs neither step again
cp out/baseline_s1.h5 before.h5
"$G" sweep post.sweep --out out --jobs 2 --no-report >again.log 2>&1 || bad "rerun failed"
grep -q "intervene baseline_s1" again.log && bad "the rerun intervened again: $(cat again.log)"
grep -q "eval baseline_s1" again.log && bad "the rerun evaluated again"
cmp -s out/baseline_s1.h5 before.h5 || bad "the rerun changed a finished run file"

[ $fail -eq 0 ] && echo "sweep_post: PASS" && exit 0
exit 1
