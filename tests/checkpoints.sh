#!/usr/bin/env bash
# checkpoints.sh: `gatelab report` and the commands' defaults over run files
# of `gatelab inspect` (the tiny committed Qwen3 snapshots, plain,
# elementwise- and headwise-gated, beside Gemma 3, gpt-oss, AFMoE and
# OLMo 2 ones, probed on three windows of 20 tokens), in one table:
# the report shows what a checkpoint has (no data source, no training
# sections, the real probe length), names the gate form, and the stream
# and eval --quant defaults fit the recorded input.
#   tests/checkpoints.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" checkpoints "$@"
trap 'rm -rf "$W"' EXIT
HF=$S/tests/reference/hf
for i in 1 2 3; do seq 2 21 | tr '\n' ' ' && echo; done >ids.txt
mkdir runs
for m in qwen3-f32 qwen3-elementwise-f32-sharded qwen3-headwise-f32; do
    "$G" inspect "$HF/$m" --tokens ids.txt --out "runs/$m.h5" -q >inspect.log 2>&1 ||
        bad "inspect $m failed: $(cat inspect.log)"
done

# the released gated models as the Hugging Face cache keeps them: one
# snapshot, a sub-directory per model
C=cache/models--QwQZh--gated_attention/snapshots/0123456789abcdef
for g in headwise elementwise; do
    mkdir -p $C/$g
    cp "$HF/qwen3-$g-f32"*/config.json "$HF/qwen3-$g-f32"*/*.safetensors* $C/$g/
    "$G" inspect $C/$g --tokens ids.txt --out "runs/released-$g.h5" -q >inspect.log 2>&1 ||
        bad "inspect $C/$g failed: $(cat inspect.log)"
done

# checkpoints of other families beside them (their vocabularies hold ids.txt's)
others="gemma3mm-f32:Gemma3ForConditionalGeneration:none gptoss-f32:GptOssForCausalLM:none"
others="$others afmoe-f32:AfmoeForCausalLM:gate_proj-elementwise-sigmoid olmo2-f32:Olmo2ForCausalLM:none"
others="$others laguna-f32:LagunaForCausalLM:g_proj-headwise-softplus"
others="$others laguna-heads-f32:LagunaForCausalLM:g_proj-headwise-softplus"
others="$others step3p5-heads-f32:Step3p5ForCausalLM:g_proj-headwise-sigmoid mimo-f32:MiMoV2FlashForCausalLM:none"
for o in $others; do
    "$G" inspect "$HF/${o%%:*}" --tokens ids.txt --out "runs/${o%%:*}.h5" -q >inspect.log 2>&1 ||
        bad "inspect ${o%%:*} failed: $(cat inspect.log)"
done

# the report: only what a checkpoint has
"$G" report runs >report.log 2>&1 || bad "report failed: $(cat report.log)"
R=runs/REPORT.md
grep -q '^- Data ' $R && bad "Settings has a data line: $(grep '^- Data ' $R)"
grep -q '^- Loss spikes' $R && bad "Settings has the loss-spike rule"
grep -q 'probe length 20 (the first 20 queries' $R || bad "sink rate not at the probe's 20 tokens"
grep -q 'probe length 64' $R && bad "report says probe length 64"
grep -q '^## Compute' $R && bad "report has the training Compute section"
grep -q '^## Ours beside the paper' $R && bad "report has the trained runs' paper table"
sed '/^## Definitions/,$d' $R >body.md
grep -qi 'baseline group' body.md && bad "report asks for a baseline of a checkpoint: $(grep -i 'baseline group' body.md)"
grep -q '^## Exploratory comparisons' $R && bad "report compares checkpoints with a baseline"
grep -q '^| qwen3-f32 | [^|]* | ? |' $R && bad "data column of a checkpoint is '?'"
grep -q '^| qwen3-f32 | [^|]* | tokens:ids.txt |' $R || bad "data column of a checkpoint does not name its input"
[ -e runs/figures/sink_vs_step.png ] && bad "report drew sink rate over training"
grep -q 'over training' $R && bad "report links a figure over training"
spikes=$(awk -F' \\| ' '/^\| qwen3-f32\.h5 / { print $17 }' $R)
[ -z "$spikes" ] || bad "spikes column of a checkpoint is '$spikes', not blank"

# the gate form config.json states, in the variant column, the pretrained
# table and the heatmaps' captions (model, snapshot and gate)
for m in qwen3-f32:none qwen3-elementwise-f32-sharded:elementwise qwen3-headwise-f32:headwise; do
    grep -q "^| ${m%%:*} | pretrained:Qwen3ForCausalLM:gate-${m#*:} |" $R ||
        bad "variant of ${m%%:*} does not name gate ${m#*:}"
    grep -q "^| ${m%%:*}.h5 | Qwen3ForCausalLM | ${m#*:} |" $R ||
        bad "Pretrained models row of ${m%%:*} does not name gate ${m#*:}"
done
# every family in the one table, each with its gate form
for o in $others; do
    m=${o%%:*} rest=${o#*:}
    grep -q "^| $m | pretrained:${rest%%:*}:gate-${rest#*:} |" $R ||
        bad "variant of $m does not name its family and gate ${rest#*:}"
    grep -q "^| $m.h5 | ${rest%%:*} | ${rest#*:} |" $R ||
        bad "Pretrained models row of $m does not name its family and gate ${rest#*:}"
done
# softplus gate scores are unbounded: no share below 0.1 in either table
grep -q '^| laguna-f32 | pretrained:LagunaForCausalLM:[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*| n/a |' $R ||
    bad "gate<0.1 of laguna-f32's unbounded softplus scores is not n/a"
[ "$(awk -F' \\| ' '/^\| laguna-f32\.h5 \| LagunaForCausalLM / { print $12 }' $R)" = n/a ] ||
    bad "Pretrained models row of laguna-f32 gives a gate<0.1 share of unbounded scores"
# plot first-share: gpt-oss's uniform reference names its windows and its sink slot, and the
# key of checkpoints' long names goes below the bars
"$G" plot --out fs.png first-share runs/gptoss-f32.h5 runs/qwen3-f32.h5 >plot.log 2>&1 ||
    bad "plot first-share of two checkpoints failed: $(cat plot.log)"
grep -q 'uniform 0\.[0-9]\{3\} (T=20, window 4 alternate, 1 sink slot)' fs.gp ||
    bad "the uniform reference of gpt-oss does not name its value, window and slot: $(grep -o 'uniform [^)]*)' fs.gp)"
# MiMo's sink logits sit on its sliding layers only: the reference says on how many
"$G" plot --out fsm.png first-share runs/mimo-f32.h5 >plot.log 2>&1 ||
    bad "plot first-share of mimo-f32 failed: $(cat plot.log)"
grep -q 'uniform 0\.[0-9]\{3\} (T=20, window 4 on 2/3, 1 sink slot on 2/3)' fsm.gp ||
    bad "the uniform reference of mimo-f32 does not say its slots are on 2 of 3 layers: $(grep -o 'uniform [^)]*)' fsm.gp)"
grep -q '^set key below' fs.gp || bad "the key of long checkpoint names is not below the bars"
# a prompt through it records the same: its scores are not bounded
"$G" probe runs/laguna-f32.h5 --tokens 2,5,7,9 --name p --no-figure >probe.log 2>&1 ||
    bad "probe of laguna-f32 failed: $(cat probe.log)"
command -v h5dump >/dev/null &&
    [ "$(h5dump -a /prompt/p/gate_bounded runs/laguna-f32.h5 | awk -F': ' '/\(0\)/ {print $2}')" != 0 ] &&
    bad "the prompt record of laguna-f32 calls its softplus gate bounded"
for g in headwise elementwise; do
    grep -q "^\*\*released-$g (checkpoint QwQZh/gated_attention/$g @0123456, gate $g)\*\*" $R ||
        bad "heatmap of released-$g not titled with model, snapshot and gate"
done
"$G" heatmap runs/released-headwise.h5 --compare runs/released-elementwise.h5 --layer 1 \
    -o cmp.png >heat.log 2>&1 || bad "heatmap --compare of two checkpoints: $(cat heat.log)"
# defaults that fit the checkpoint: stream's 512 x 8 and eval --quant's
# (4 + 4) x 4 windows are cut to the model's 64 positions and the three
# 20-token windows recorded, saying so in one line; what cannot fit is
# refused naming the options
one_line() { [ "$(wc -l <"$1")" -eq 1 ] && grep -q "$2" "$1"; }
run=runs/qwen3-headwise-f32.h5
"$G" stream $run -w >out 2>err || bad "stream with its defaults failed: $(cat err)"
one_line err 'stream: .*: --len 20 --n-seq 3 (the defaults 512 and 8 .*set --len and --n-seq' ||
    bad "stream's cut defaults not said in one line: $(cat err)"
grep -q 'window 5 of 20 tokens, 3 sequences' out || bad "stream did not run 3 x 20: $(cat out)"
"$G" stream $run -w -n 5 >out 2>err && bad "stream --n-seq 5 over 3 windows ran"
one_line err 'gives 3 windows of 20 tokens, 5 asked: lower --n-seq or --len' ||
    bad "stream --n-seq 5: $(cat err)"
"$G" eval $run --quant w8a8 -w >out 2>err || bad "eval --quant with its defaults failed: $(cat err)"
one_line err 'eval: .*--batch-size 1 --batches 2 --calib 1 (the defaults need 32 windows of 20' ||
    bad "eval --quant's cut defaults not said in one line: $(cat err)"
grep -q 'length 20  2 sequences  calibration 1 batches' out || bad "eval --quant: $(cat out)"
"$G" eval $run --quant w8a8 -w -n 3 -c 1 -B 1 >out 2>err && bad "eval --quant over 4 windows ran"
one_line err 'gives 3 windows of 20 tokens; --quant needs (--batches + --calib) x --batch-size = 4' ||
    bad "eval --quant -n 3 -c 1 -B 1: $(cat err)"

[ $fail -eq 0 ] && echo "checkpoints: PASS" && exit 0
exit 1
