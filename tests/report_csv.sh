#!/usr/bin/env bash
# report_csv.sh: a committed study keeps only results.csv and protocol.ini
# (run files do not outlive the machine), and `gatelab report DIR` on such
# a directory gives the same tables: results.csv read back and written
# again is the same bytes, and REPORT.md is the run files' report less its
# title and the sections that read run files (figures, mechanism, ...); the
# long-context section comes from the rows and is held equal too (both
# without figures). Bad rows are one-line errors naming the
# file and line.
#   tests/report_csv.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" report_csv "$@"
trap 'rm -rf "$W"' EXIT
{
    printf '[sweep]\npreset = %s\nseeds = 9401,9402,9403,9404,9405,9406\n' "$S/experiments/tiny.ini"
    printf '[primary]\nmetric = f_attn\nmetric = val_loss\ntest = f_attn wilcoxon\n'
    printf 'test = val_loss paired-t\ncompare = g1-elem vs baseline\n'
    printf 'paper = f_attn g1-elem < baseline\npaper = val_loss g1-elem < baseline\n'
    printf '[run baseline]\nvariant = baseline\n[run g1-elem]\nvariant = g1-elem\n'
} >t.sweep
"$G" sweep t.sweep --no-figures --out runs --jobs 2 --uncommitted >sweep.log 2>&1 ||
    bad "sweep failed: $(tail -3 sweep.log)"
mkdir kept
cp runs/results.csv runs/protocol.ini kept/
"$G" report kept --no-figures >report.log 2>&1 || bad "report from results.csv alone failed: $(cat report.log)"
cmp -s runs/results.csv kept/results.csv || bad "results.csv read back and written differs"
# the tables: every section but the figures and those that read run files
tables() {
    awk '/^## / { skip = $0 ~ /^## (Figures|Mechanism|Stability|Pretrained|Stream)/ }
         /^## / { seen = 1 } seen && !skip' "$1"
}
diff <(tables runs/REPORT.md) <(tables kept/REPORT.md) >tables.diff ||
    bad "REPORT.md tables differ: $(head -20 tables.diff)"
grep -q "P1" kept/REPORT.md || bad "no primary test in the report from results.csv"
grep -q "From \`kept/results.csv\` alone: 12 runs" kept/REPORT.md ||
    bad "the title does not say the rows come from results.csv"
# the probe measures are columns (tiny's runs store key norms and heads)
head -1 kept/results.csv | tr ',' '\n' >cols.txt
for c in key_norm_first value_norm_rest dormant_heads dormant_heads_norm secondary_sinks \
    residual_sinks cfg_seq_len; do
    grep -qx "$c" cols.txt || bad "results.csv has no column $c"
done
# both dormant-head rules, and the sink rule's heads are among the norm rule's
dn=$(grep -nx dormant_heads_norm cols.txt | cut -d: -f1)
for c in dormant_heads dormant_heads_norm; do
    col=$(grep -nx $c cols.txt | cut -d: -f1)
    awk -F, -v c="$col" 'NR > 1 && $c == "" {exit 1}' kept/results.csv ||
        bad "a run with head probes has a blank $c"
done
col=$(grep -nx dormant_heads cols.txt | cut -d: -f1)
awk -F, -v s="$col" -v n="$dn" 'NR > 1 && $s + 0 > $n + 0 {exit 1}' kept/results.csv ||
    bad "more heads dormant by the sink rule than by the output-norm rule"

# bad rows: one line naming the file and line, exit 2, nothing written
mkdir bad
cp runs/protocol.ini bad/
{ head -2 runs/results.csv; echo "x.h5,x,baseline"; } >bad/results.csv
"$G" report bad >bad.log 2>&1
rc=$?
[ $rc = 2 ] || bad "a short row: exit $rc"
grep -q "bad/results.csv:3: 3 fields where the header has" bad.log || bad "short row: $(cat bad.log)"
[ -e bad/REPORT.md ] && bad "a report was written from a bad results.csv"
sed '2s/^baseline_s9401.h5,/..\/evil.h5,/' runs/results.csv >bad/results.csv
"$G" report bad >bad.log 2>&1 && bad "a file column that leaves the directory was accepted"
grep -q "is not a run file's name" bad.log || bad "evil file name: $(cat bad.log)"
rm bad/results.csv && mkdir bad/results.csv
"$G" report bad >bad.log 2>&1 && bad "a directory as results.csv was accepted"
grep -q "is a directory" bad.log || bad "directory results.csv: $(cat bad.log)"

[ $fail -eq 0 ] && echo "report_csv: PASS" && exit 0
exit 1
