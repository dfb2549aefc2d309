#!/usr/bin/env bash
# metrics_log.sh: what a run shows while it works. The live metrics log
# RUN.h5.jsonl (src/train/metrics_log.h): a run killed with SIGKILL mid-way
# leaves a log whose every line parses; the resume cuts what the lost
# session wrote past its checkpoint, so the finished log has every step
# once, in order, with the losses of an unbroken run; a log path holding
# someone else's file is refused. And `report`'s progress lines on stderr
# (a terminal, here GATELAB_TEST_PROGRESS), none when stderr is a file.
#   tests/metrics_log.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" metrics_log "$@"
trap 'rm -rf "$W"' EXIT
PY=/usr/bin/python3
[ -x $PY ] || { echo "SKIP: no $PY"; exit 77; }

T="--config $S/experiments/tiny.ini --quiet"
# parses LOG: every line a JSON object ending in a newline
parses() {
    $PY - "$1" <<'PYEOF' || bad "$1: a line does not parse"
import json, sys
data = open(sys.argv[1], "rb").read()
assert data.endswith(b"\n"), "torn last line"
for n, line in enumerate(data.decode().splitlines(), 1):
    o = json.loads(line)
    assert isinstance(o, dict) and "event" in o and "step" in o, (n, line)
PYEOF
}

"$G" train $T --out whole.h5 || { echo "setup: train failed"; exit 1; }
parses whole.h5.jsonl
GATELAB_TEST_KILL_AT=30 "$G" train $T --out cut.h5 2>/dev/null
rc=$?
[ $rc -eq 137 ] || bad "GATELAB_TEST_KILL_AT=30 gave exit $rc, want 137 (SIGKILL)"
parses cut.h5.jsonl
grep -q '"event":"train","step":30,' cut.h5.jsonl || bad "the killed run's log lacks step 30"
"$G" train $T --out cut.h5 --resume || bad "resume failed"
parses cut.h5.jsonl
$PY - whole.h5.jsonl cut.h5.jsonl <<'PYEOF' || bad "the resumed log is not the unbroken run's"
import json, sys
def lines(p):
    return [json.loads(l) for l in open(p)]
whole, cut = lines(sys.argv[1]), lines(sys.argv[2])
ev = lambda L, e: [o for o in L if o["event"] == e]
steps = [o["step"] for o in ev(cut, "train")]
assert steps == list(range(60)), steps
assert [o["step"] for o in ev(cut, "eval")] == [20, 40, 60]
assert [o["step"] for o in ev(cut, "probe")] == [20, 40, 60]
assert [o["step"] for o in ev(cut, "resume")] == [20]  # the checkpoint at 20
assert cut[0]["event"] == "start" and cut[-1] == {"event": "done", "step": 60}
key = lambda o: (o["loss"], o["lr"], o["grad_norm"], o["tokens"])
assert [key(o) for o in ev(cut, "train")] == [key(o) for o in ev(whole, "train")]
assert ev(cut, "eval") == ev(whole, "eval") and ev(cut, "probe") == ev(whole, "probe")
assert all("bpb" not in o for o in ev(cut, "eval"))  # bigram data: not bytes
assert all(0 < o["f_attn"] < 1 and len(o["f_attn_layer"]) == 2 for o in ev(cut, "probe"))
PYEOF

# the log path is another file, or a link: refused before any work
echo "precious" >notes.txt
cp notes.txt other.h5.jsonl
"$G" train $T --out other.h5 >out.txt 2>err.txt
rc=$?
[ $rc -eq 2 ] || bad "a foreign other.h5.jsonl gave exit $rc, want 2"
[ "$(wc -l <err.txt)" -eq 1 ] || bad "want one line on stderr: $(cat err.txt)"
grep -q "other.h5.jsonl" err.txt || bad "the refusal does not name the log: $(cat err.txt)"
cmp -s notes.txt other.h5.jsonl || bad "other.h5.jsonl was changed"
[ ! -e other.h5 ] || bad "other.h5 was written"
ln -s notes.txt link.h5.jsonl
"$G" train $T --out link.h5 >out.txt 2>err.txt
rc=$?
[ $rc -eq 2 ] || bad "a linked link.h5.jsonl gave exit $rc, want 2"
[ -L link.h5.jsonl ] || bad "link.h5.jsonl is no longer a link"
cmp -s notes.txt <(echo precious) || bad "the link's target was changed"
# --force over our own run replaces its log too
"$G" train $T --out whole.h5 --force || bad "train --force over our own run failed"
[ "$(grep -c '"event":"start"' whole.h5.jsonl)" -eq 1 ] || bad "--force did not start a new log"
# a hard-linked copy of a log (cp -al backup) keeps its bytes: --force and
# --resume put a new log in place, never write the old one
mkdir bak && cp -al whole.h5 whole.h5.jsonl bak/ && cp bak/whole.h5.jsonl whole.saved
"$G" train $T --out whole.h5 --force || bad "train --force over a hard-linked run failed"
cmp -s bak/whole.h5.jsonl whole.saved || bad "train --force rewrote the hard-linked backup's log"
GATELAB_TEST_KILL_AT=30 "$G" train $T --out linked.h5 2>/dev/null
ln linked.h5.jsonl linked.bak && cp linked.h5.jsonl linked.saved
"$G" train $T --out linked.h5 --resume || bad "resume of linked.h5 failed"
cmp -s linked.bak linked.saved || bad "--resume rewrote the hard-linked copy of the log"
parses linked.h5.jsonl
# a resume whose log was deleted starts a new log with the resume line
GATELAB_TEST_KILL_AT=30 "$G" train $T --out gone.h5 2>/dev/null
rm gone.h5.jsonl
"$G" train $T --out gone.h5 --resume || bad "resume of gone.h5 without its log failed"
parses gone.h5.jsonl
$PY - gone.h5.jsonl <<'PYEOF' || bad "the new log of a resume lacks its start or resume line"
import json, sys
L = [json.loads(l) for l in open(sys.argv[1])]
assert [o["event"] for o in L[:2]] == ["start", "resume"], L[:2]
assert L[1]["step"] == 20 and L[-1] == {"event": "done", "step": 60}
assert [o["step"] for o in L if o["event"] == "train"] == list(range(20, 60))
PYEOF
# report: progress on stderr when asked (a terminal), silent into a file
mkdir runs && cp whole.h5 cut.h5 runs/
GATELAB_TEST_PROGRESS=1 "$G" report runs --out rep >out.txt 2>err.txt || bad "report failed"
grep -q '^report: reading 2 run files' err.txt || bad "no reading progress: $(head -3 err.txt)"
grep -q '^report: figures' err.txt || bad "no figures progress: $(head -3 err.txt)"
"$G" report runs --out rep >out.txt 2>err.txt || bad "report failed"
[ ! -s err.txt ] || bad "report wrote to a non-terminal stderr: $(head -3 err.txt)"
exit $fail
