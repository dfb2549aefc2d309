#!/usr/bin/env bash
# The layer rule (docs/ARCHITECTURE.md): a file includes only headers of
# its own layer or of the layers below it, by bare name (no "../" or
# directory parts). The meson include paths already make a backwards
# include fail to compile; this names the offending line.
#   core      src/         -> core
#   train     src/train/   -> train, core
#   analysis  analysis/    -> analysis, core
#   cli       src/cli/     -> cli, train, analysis, hf, core
#   any other src/X/       -> X, core
set -uo pipefail
cd "$(dirname "$0")/.."
allowed() {
    case $1 in
        src) echo "src" ;;
        src/train) echo "src/train src" ;;
        analysis) echo "analysis src" ;;
        src/cli) echo "src/cli src/train analysis src/hf src" ;;
        src/*) echo "$1 src" ;;
    esac
}
bad=0
while read -r f; do
    dir=$(dirname "$f")
    dirs=$(allowed "$dir")
    while IFS= read -r line; do
        h=${line#*\"}; h=${h%%\"*}
        case $h in gatelab_build.h|gatelab_version.h) continue ;; esac
        if [[ $h == */* ]]; then
            echo "$f: #include \"$h\": include by bare name, not a path"; bad=1; continue
        fi
        ok=0
        for d in $dirs; do [ -f "$d/$h" ] && ok=1; done
        [ $ok = 1 ] || { echo "$f: #include \"$h\" is not in its layer or below ($dirs)"; bad=1; }
    done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
done < <(git ls-files 'src/*.c' 'src/*.h' 'analysis/*.c' 'analysis/*.h')
[ $bad = 0 ] && echo "layers: every include is in its layer or below"
exit $bad
