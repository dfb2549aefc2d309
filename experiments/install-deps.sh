#!/usr/bin/env bash
# Install the Debian 12 packages a job needs, only those missing (apt-get
# runs only then, so it needs root only then). Each argument is a profile
# or a package name:
#   build       compiler, meson, and the libraries gatelab links
#   test        build + git (the pre-registration tests make repositories),
#               hdf5-tools, python3-h5py (resume_lineup.sh), python3-torch
#               (python_gatelab.py checks the Python package against the C
#               tool), python3-venv (python_install.sh installs the package
#               into a venv: Debian keeps venv's ensurepip there), MPI (the
#               two-rank sweep test), clang-format, qemu-user (repro.sh's
#               run on a CPU without AVX-512), clang, its libFuzzer runtime
#               and llvm's symbolizer (the fuzzers classify a crash by its
#               symbolized stack frame: tests/fuzz/run_fuzzers.sh)
#   quickstart  build + git (a confirmatory sweep checks its sweep file's
#               commit) + nodejs/npm (data/fetch_brown.sh)
#   bash experiments/install-deps.sh test
#   bash experiments/install-deps.sh build clang
set -euo pipefail

BUILD="gcc meson ninja-build pkg-config libopenblas-dev libhdf5-dev libpng-dev libcairo2-dev
       libinih-dev libcmocka-dev libgsl-dev gnuplot-nox libjansson-dev libpcre2-dev libicu-dev
       zlib1g-dev"
[ $# -gt 0 ] || { echo "usage: $0 build|test|quickstart|PACKAGE..." >&2; exit 2; }
pkgs=""
for a in "$@"; do
    case $a in
        build) pkgs="$pkgs $BUILD" ;;
        test) pkgs="$pkgs $BUILD git hdf5-tools python3-h5py python3-torch python3-venv libopenmpi-dev openmpi-bin clang-format qemu-user clang libclang-rt-14-dev llvm" ;;
        quickstart) pkgs="$pkgs $BUILD git nodejs npm" ;;
        *) pkgs="$pkgs $a" ;;
    esac
done

missing=$(for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done | sort -u)
# npm may come with the machine outside Debian's packages: keep that one
if command -v npm >/dev/null; then missing=$(echo "$missing" | grep -vx -e nodejs -e npm || true); fi
if [ -n "$missing" ]; then
    echo "== installing: $(echo $missing)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
