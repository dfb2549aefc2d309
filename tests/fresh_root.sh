#!/usr/bin/env bash
# The README's two commands as a new user meets them: a minimal Debian 12
# root made from Debian's packages alone (debootstrap --variant=minbase,
# from the mirror this machine's apt uses), the repository's committed
# HEAD cloned into its /root/gatelab (root's home, mode 700), and inside it
# as root `bash experiments/quickstart.sh` and then `bash tests/run_tests.sh`.
# Prints each command's exit and wall time, the quickstart's headline and
# the tests' closing lines; the logs stay in WORK. Exit 0 only when both
# commands exit 0. Needs root (debootstrap, chroot, mounts) and the
# network to Debian's mirror; takes 30 to 60 minutes on 2 cores, so it is
# not part of CI (docs/testing.md).
#   bash tests/fresh_root.sh              # a git clone of HEAD
#   bash tests/fresh_root.sh --no-git     # HEAD as a release archive: no .git
#   GATELAB_FRESH_DIR=/var/tmp/x GATELAB_FAST=1 bash tests/fresh_root.sh
# GATELAB_FRESH_DIR is the work directory (default /var/tmp/gatelab-fresh;
# its root/ is made anew each time); GATELAB_FAST=1 is passed to the test
# command (the meson suite only).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd -P)
mode=clone
for a in "$@"; do
    case $a in
        --no-git) mode=archive ;;
        -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "fresh_root: unknown option '$a' (--no-git, --help)" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "fresh_root: needs root (debootstrap, chroot, mount)" >&2; exit 2; }
work=${GATELAB_FRESH_DIR:-/var/tmp/gatelab-fresh}
root=$work/root

# the Debian mirror this machine's apt uses (deb822 or one-line sources)
mirror=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $0 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$mirror" ] || { echo "fresh_root: no Debian mirror in /etc/apt/sources.list{,.d}" >&2; exit 2; }
command -v debootstrap >/dev/null || bash "$src/experiments/install-deps.sh" debootstrap
command -v git >/dev/null || bash "$src/experiments/install-deps.sh" git

unmount_all() {
    for m in dev/pts dev proc sys; do
        mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m"
    done
    return 0
}
trap unmount_all EXIT
mkdir -p "$work"
if [ -d "$root" ]; then unmount_all; rm -rf --one-file-system "$root"; fi

echo "== debootstrap --variant=minbase bookworm ($work/debootstrap.log)"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { echo "fresh_root: debootstrap failed, see $work/debootstrap.log" >&2; exit 1; }
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"

chmod 700 "$root/root"
if [ $mode = clone ]; then
    git clone -q "$src" "$root/root/gatelab"
else
    mkdir "$root/root/gatelab"
    git -C "$src" archive HEAD | tar -x -C "$root/root/gatelab"
fi
echo "== $mode of $(git -C "$src" rev-parse --short HEAD) in /root/gatelab"

# run NAME COMMAND: COMMAND inside the root as root from /root/gatelab, in a
# clean environment; its output into WORK/NAME.log, its exit into rc_NAME
run() {
    local t0=$SECONDS rc=0
    chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        ${GATELAB_FAST:+GATELAB_FAST=$GATELAB_FAST} \
        /bin/bash -c "cd /root/gatelab && $2" >"$work/$1.log" 2>&1 || rc=$?
    printf -v "rc_$1" %d "$rc"
    echo "$1: exit $rc in $((SECONDS - t0)) s ($work/$1.log)"
}
run quickstart "bash experiments/quickstart.sh"
report=$root/root/gatelab/results/quickstart/REPORT.md
if [ -f "$report" ]; then
    # the pre-registration verdict: the first two lines of its list
    awk '/^Pre-registration/ {on = 1; next} on && /^- / {print; if (++k == 2) exit}' "$report" |
        cut -c1-300
    grep -m1 '^- The paper' "$report" || echo "quickstart: no headline sentence in REPORT.md"
fi
run tests "bash tests/run_tests.sh"
tail -n 3 "$work/tests.log" | grep -E 'passed|skipped' || tail -n 5 "$work/tests.log"
[ "$rc_quickstart" = 0 ] && [ "$rc_tests" = 0 ]
