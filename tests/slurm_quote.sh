#!/usr/bin/env bash
# slurm_quote.sh: `sweep --emit-slurm` with hostile paths. Every path the
# script names is one sh word in single quotes (src/sweep/sweepslurm.c):
# an --out holding ' $(...) ` " and spaces gives a script that parses
# (sh -n, bash -n) and, run as an array task with a fake gatelab, passes
# the paths through unchanged and runs nothing injected. A path with a
# newline is refused in one line, writing nothing.
#   tests/slurm_quote.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" slurm_quote "$@"
trap 'rm -rf "$W"' EXIT

printf 'steps = 1\n' >p.ini
printf '[sweep]\npreset = p\nseeds = 1,2\n[run baseline]\n' >s.sweep
# the fake gatelab: writes its arguments, one a line
cat >fake <<'FAKE'
#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done >"$ARGS_OUT"
FAKE
chmod +x fake

OUT="o'\$(touch INJ1)'\`touch INJ2\`\"x y"
SCRIPT="job'\$(touch INJ3).sbatch"
"$G" sweep s.sweep --out "$OUT" --emit-slurm "$SCRIPT" >out.txt 2>err.txt ||
    bad "--emit-slurm with a hostile --out failed: $(cat err.txt)"
[ -f "$SCRIPT" ] || bad "no script at the hostile --emit-slurm path"
sh -n "$SCRIPT" 2>err.txt || bad "sh -n refuses the script: $(cat err.txt)"
bash -n "$SCRIPT" 2>err.txt || bad "bash -n refuses the script: $(cat err.txt)"
for sh in sh bash; do
    rm -f args.txt
    ARGS_OUT=$W/args.txt GATELAB=$W/fake SLURM_ARRAY_TASK_ID=1 $sh "$SCRIPT" >/dev/null 2>err.txt ||
        bad "$sh: the array task failed: $(cat err.txt)"
    printf '%s\n' sweep s.sweep --out "$OUT" --only 1 >want.txt
    cmp -s args.txt want.txt || bad "$sh: the fake gatelab got: $(cat args.txt 2>/dev/null)"
    [ -d "$OUT/logs" ] || bad "$sh: the task did not make the logs directory under --out"
done
# the comment's lines to copy, run as they stand, inject nothing either
sed -n 's/^# or, afterwards: //p' "$SCRIPT" >report.sh
[ -s report.sh ] || bad "the script has no 'or, afterwards' line"
sh -n report.sh || bad "the 'or, afterwards' line does not parse"
# the --wrap word, as sbatch gets it, is the report command with --out whole
W1=$(sed -n 's/^#   sbatch --dependency=afterany:\$jid --wrap //p' "$SCRIPT")
eval "set -- $W1"
[ $# -eq 1 ] || bad "the --wrap argument is $# words, want 1"
eval "set -- $1"
[ "$2" = report ] && [ "$3" = "$OUT" ] && [ $# -eq 3 ] || bad "the --wrap command is: $*"
ls INJ* >/dev/null 2>&1 && bad "a command in a path ran: $(ls INJ*)"

# a newline in --out: refused, nothing written
NL="n
x"
"$G" sweep s.sweep --out "$NL" --emit-slurm nl.sbatch >out.txt 2>err.txt
rc=$?
[ $rc -eq 2 ] || bad "--out with a newline gave exit $rc, want 2"
[ "$(wc -l <err.txt)" -eq 1 ] || bad "want one line on stderr: $(cat err.txt)"
grep -q -- "--out 'n?x' holds a control character" err.txt || bad "the refusal does not name --out: $(cat err.txt)"
[ ! -e nl.sbatch ] && [ ! -e "$NL" ] || bad "a refused --emit-slurm wrote something"

[ $fail -eq 0 ] && echo "slurm_quote: PASS" && exit 0
exit 1
