#!/usr/bin/env bash
# The environment rule (src/base/env.h): every GATELAB_* variable named in
# the sources, the tests or the docs is a row of env.c's table, and gatelab
# reads them only through env_get (no getenv("GATELAB_...") elsewhere).
set -uo pipefail
cd "$(dirname "$0")/.."
table=$(grep -o '{"GATELAB_[A-Z0-9_]*"' src/base/env.c | tr -d '{"' | sort -u)
status=0
# names gatelab's own build defines, not environment variables
not_env="GATELAB_VERSION GATELAB_DESCRIBE GATELAB_SOURCE_ROOT GATELAB_HAVE_MPI
  GATELAB_ALLOW_NO_VET GATELAB_BUILD_H GATELAB_TEST_"
for name in $(grep -rhoE 'GATELAB_[A-Z0-9_]+' src analysis tests docs --include='*.c' \
        --include='*.h' --include='*.sh' --include='*.md' --include='meson.build' | sort -u); do
    case " $(echo $not_env) " in *" $name "*) continue ;; esac
    case "$name" in *_H) continue ;; esac # include guards
    if ! grep -qx "$name" <<<"$table"; then
        echo "check_env: $name is not in src/base/env.c's table"
        status=1
    fi
done
if grep -rn 'getenv("GATELAB_\|getenv(ENV_' src analysis --include='*.c' | grep -v '^src/base/env.c:'; then
    echo "check_env: read GATELAB_* variables with env_get (src/base/env.h)"
    status=1
fi
[ $status -eq 0 ] && echo "check_env: every GATELAB_* variable is in the table and read through it"
exit $status
