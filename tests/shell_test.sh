# shell_test.sh: the common start of the shell tests (clobber, resume_lineup,
# writers), sourced as `. "$(dirname "$0")/shell_test.sh" NAME "$@"`:
#   S     the source root (argument 1, default .)
#   G     the gatelab binary (argument 2, default $S/build/gatelab), absolute
#   W     a fresh scratch directory /tmp/gatelab-NAME-XXXXXX, the cwd
#   bad   records a failure: `bad MESSAGE` prints FAIL and sets fail=1
#   study_repo  a scratch git repository with a tiny confirmatory sweep (below)
#   pin_fingerprint  the build's training fingerprint computed once (below)
# Each test removes W in its own EXIT trap (writers.sh also kills its
# children there), so this file sets none.
set -uo pipefail
_name=$1
shift
S=$(cd "${1:-.}" && pwd)
G=$(cd "$(dirname "${2:-$S/build/gatelab}")" && pwd)/$(basename "${2:-gatelab}")
W=$(mktemp -d "/tmp/gatelab-$_name-XXXXXX")
cd "$W" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# study_repo SEEDS [LINE]: a new git repository ./repo, made the cwd, with
# tiny.ini and c.sweep (uncommitted): baseline and g1-elem on tiny at 4
# steps over SEEDS, [primary] testing f_attn by Welch, LINE added to it.
study_repo() {
    git init -q repo && cd repo || exit 1
    git config user.email t@t && git config user.name t
    cp "$S/experiments/tiny.ini" tiny.ini
    printf '[sweep]\npreset = tiny\nseeds = %s\nset = steps=4\nset = eval_every=4\n' "$1" >c.sweep
    printf '[primary]\nmetric = f_attn\ntest = f_attn welch\ncompare = g1-elem vs baseline\n' >>c.sweep
    [ -n "${2:-}" ] && printf '%s\n' "$2" >>c.sweep
    printf '[run baseline]\nvariant = baseline\n[run g1-elem]\nvariant = g1-elem\n' >>c.sweep
}

# pin_fingerprint: computes this build's training fingerprint once (a real
# `gatelab fingerprint`) and hands it to every later command through the
# test hook GATELAB_TEST_FINGERPRINT, so a test of many confirmatory sweeps
# does not retrain the catalog for each (each command then prints one
# "test hooks on" line on stderr; hook_free LOG drops it). The pinned value
# is the true one, so protocol.ini and the report read as without the hook.
pin_fingerprint() {
    local fp
    fp=$("$G" fingerprint | sed -n 's/^training //p')
    case "$fp" in fnv1a64:????????????????) ;; *) bad "gatelab fingerprint gave no training line"; return ;; esac
    export GATELAB_TEST_RUN=$_name GATELAB_TEST_FINGERPRINT=$fp
}

# hook_free LOG: LOG without the test hooks' notice lines
hook_free() { grep -v '^gatelab [a-z]*: test hooks on (GATELAB_TEST_RUN=' "$1"; }
