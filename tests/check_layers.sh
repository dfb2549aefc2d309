#!/usr/bin/env bash
# The layer rule (docs/ARCHITECTURE.md): a file includes only headers of
# its own layer or of the layers below it, by bare name (no "../" or
# directory parts), and every source folder is a layer named here. The
# meson include paths already make a backwards include fail to compile;
# this names the offending line.
#   base      src/base/     -> base
#   config    src/config/   -> config, base
#   ops       src/ops/      -> ops, config, base
#   model     src/model/    -> model, ops, config, base
#   runfile   src/runfile/  -> runfile, model, ops, config, base
#   train     src/train/    -> train, runfile and below
#   hf        src/hf/       -> hf, runfile and below
#   stats     analysis/stats/     -> stats, ops, config, base
#   measures  analysis/measures/  -> measures, runfile and below
#   protocol  analysis/protocol/  -> protocol, measures, runfile and below
#   figures   analysis/figures/   -> figures, measures, runfile and below
#   report    analysis/report/    -> report, stats, protocol, figures,
#                                    measures, runfile and below
#   rerun     src/rerun/    -> rerun, train, hf, measures, runfile and below
#   sweep     src/sweep/    -> sweep, train, protocol, measures, runfile and below
#   cli       src/cli/      -> every layer
# The analysis rooms are layers too (analysis/meson.build); no source file
# sits in analysis/ itself.
set -uo pipefail
cd "$(dirname "$0")/.."
runfile_down="src/runfile src/model src/ops src/config src/base"
analysis_down="analysis/stats analysis/protocol analysis/figures analysis/measures"
allowed() {
    case $1 in
        src/base) echo "src/base" ;;
        src/config) echo "src/config src/base" ;;
        src/ops) echo "src/ops src/config src/base" ;;
        src/model) echo "src/model src/ops src/config src/base" ;;
        src/runfile) echo "$runfile_down" ;;
        src/train | src/hf | analysis/measures) echo "$1 $runfile_down" ;;
        analysis/stats) echo "analysis/stats src/ops src/config src/base" ;;
        analysis/protocol | analysis/figures) echo "$1 analysis/measures $runfile_down" ;;
        analysis/report) echo "$1 $analysis_down $runfile_down" ;;
        src/rerun) echo "src/rerun src/train src/hf analysis/measures $runfile_down" ;;
        src/sweep) echo "src/sweep src/train analysis/protocol analysis/measures $runfile_down" ;;
        src/cli) echo "src/cli src/rerun src/sweep src/train src/hf analysis/report $analysis_down $runfile_down" ;;
        *) echo "" ;;
    esac
}
bad=0
while read -r f; do
    dir=$(dirname "$f")
    dirs=$(allowed "$dir")
    if [ -z "$dirs" ]; then
        echo "$f: $dir is not a layer (tests/check_layers.sh, docs/ARCHITECTURE.md)"; bad=1; continue
    fi
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
done < <(bash tests/ls_files.sh 'src/*.c' 'src/*.h' 'analysis/*.c' 'analysis/*.h')
[ $bad = 0 ] && echo "layers: every include is in its layer or below"
exit $bad
