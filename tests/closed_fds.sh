#!/usr/bin/env bash
# closed_fds.sh: gatelab started with its standard descriptors closed
# (`2>&-`, `>&- 2>&-`). Its first act opens /dev/null onto each closed one
# (src/cli/main.c), so no file it opens later takes fd 1 or 2 and gets
# the lines meant for stdout or stderr: the lock file holds only its pid
# (a killed run still resumes), the metrics log parses, and `report`
# writes the same REPORT.md as with open descriptors.
#   tests/closed_fds.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" closed_fds "$@"
trap 'rm -rf "$W"' EXIT
PY=/usr/bin/python3
[ -x $PY ] || { echo "SKIP: no $PY"; exit 77; }
# not --quiet: train prints progress lines, which must go nowhere
T="--config $S/experiments/tiny.ini --set steps=40 --set eval_every=10 --set ckpt_every=10"
parses() { # every line of LOG a JSON object
    $PY - "$1" <<'PYEOF' || bad "$1: a line does not parse (stdout or stderr went into it)"
import json, sys
for line in open(sys.argv[1], "rb").read().decode().splitlines():
    assert isinstance(json.loads(line), dict)
PYEOF
}

# stderr closed, killed mid-run: the lock file left behind is a lock file
GATELAB_TEST_RUN=1 GATELAB_TEST_KILL_AT=25 "$G" train $T --out a.h5 2>&-
rc=$?
[ $rc -eq 137 ] || bad "train 2>&- with GATELAB_TEST_KILL_AT=25 gave exit $rc, want 137"
if [ -e a.h5.lock ]; then
    grep -qv '^pid [0-9]*$' a.h5.lock && bad "a.h5.lock holds more than its pid: $(head -c 200 a.h5.lock)"
fi
"$G" train $T --quiet --out a.h5 --resume 2>err.txt || bad "--resume after train 2>&- refused: $(cat err.txt)"
parses a.h5.jsonl

# stdout and stderr closed: the metrics log holds only its own lines
"$G" train $T --out b.h5 >&- 2>&- || bad "train >&- 2>&- failed"
parses b.h5.jsonl
[ -e b.h5.lock ] && bad "b.h5.lock left behind"

# report with both closed: the same REPORT.md as with both open
mkdir rep && cp b.h5 rep/ && "$G" report rep >/dev/null 2>&1 || bad "report rep failed"
same_report() { # REPORT.md as open.md, but for the line giving when it was written
    diff <(grep -v '^Run files in' open.md) <(grep -v '^Run files in' rep/REPORT.md) >/dev/null &&
        grep -q '(1 readable, 0 unreadable)' rep/REPORT.md
}
cp rep/REPORT.md open.md
"$G" report rep >&- 2>&- || bad "report rep >&- 2>&- failed"
grep -qi corrupt rep/REPORT.md && bad "report >&- 2>&- calls a good run file corrupt"
same_report || bad "report >&- 2>&- wrote another REPORT.md: $(diff open.md rep/REPORT.md | head -5)"
# stdin closed too: the same
"$G" report rep <&- >&- 2>&- || bad "report rep <&- >&- 2>&- failed"
same_report || bad "report <&- >&- 2>&- wrote another REPORT.md"

[ $fail -eq 0 ] && echo "closed_fds: PASS" && exit 0
exit 1
