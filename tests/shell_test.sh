# shell_test.sh: the common start of the shell tests (clobber, resume_lineup,
# writers), sourced as `. "$(dirname "$0")/shell_test.sh" NAME "$@"`:
#   S     the source root (argument 1, default .)
#   G     the gatelab binary (argument 2, default $S/build/gatelab), absolute
#   W     a fresh scratch directory /tmp/gatelab-NAME-XXXXXX, the cwd
#   bad   records a failure: `bad MESSAGE` prints FAIL and sets fail=1
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
