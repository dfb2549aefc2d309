#!/usr/bin/env bash
# The repository's files that match any of the given patterns ('*.c',
# 'src/*.h': a * matches across directories, as in git's pathspecs), one a
# line, relative to the source root. In a git checkout these are the
# tracked files (`git ls-files`); in a release archive or a copy without
# .git, every file under the root outside dot-directories and meson build
# directories (those holding meson-private/).
#   bash tests/ls_files.sh '*.c' '*.h'
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: tests/ls_files.sh PATTERN..." >&2; exit 2; }
here=$(pwd -P)
if command -v git >/dev/null &&
    [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$here" ]; then
    exec git ls-files -- "$@"
fi
find . \( -name '.?*' -o -exec test -d '{}/meson-private' \; \) -prune -o -type f -print |
    sed 's|^\./||' | LC_ALL=C sort | while IFS= read -r f; do
        for p in "$@"; do
            # shellcheck disable=SC2053
            if [[ $f == $p ]]; then printf '%s\n' "$f"; break; fi
        done
    done
