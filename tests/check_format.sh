#!/usr/bin/env bash
# Fails (exit 1) when a .c/.h file of the repository (tests/ls_files.sh) differs from what
# clang-format makes of it with the repository's .clang-format.
#   bash tests/check_format.sh          # check
#   clang-format -i $(bash tests/ls_files.sh '*.c' '*.h')   # fix
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check_format: clang-format not installed" >&2; exit 2; }
mapfile -t files < <(bash tests/ls_files.sh '*.c' '*.h')
if clang-format --dry-run --Werror "${files[@]}" 2>/tmp/check_format.$$; then
    rm -f /tmp/check_format.$$; echo "format: ${#files[@]} files clean"; exit 0
fi
grep -o '^[^:]*\.[ch]:' /tmp/check_format.$$ | sort -u | sed 's/:$//; s/^/unformatted: /' >&2
rm -f /tmp/check_format.$$
exit 1
