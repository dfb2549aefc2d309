#!/bin/sh
# classify_stack_test.sh: classify_stack.sh on recorded sanitizer reports,
# stacks/NAME.OWNER.txt, each expected to be OWNER's (hdf5, gatelab, none):
# an HDF5-internal crash whose top frame is the runtime's or glibc's memset
# (with a source path) is HDF5's, ours is ours with or without symbols.
here=$(cd "$(dirname "$0")" && pwd)
status=0
n=0
for f in "$here"/stacks/*.txt; do
    want=$(basename "$f" .txt)
    want=${want##*.}
    got=$(sh "$here/classify_stack.sh" <"$f")
    n=$((n + 1))
    case $got in
        "$want"|"$want "*) ;;
        *) echo "FAIL: $(basename "$f"): want $want, got: $got"; status=1 ;;
    esac
done
[ $n -ge 5 ] || { echo "FAIL: only $n recorded stacks"; status=1; }
[ $status = 0 ] && echo "classify_stack: $n recorded stacks classified as recorded"
exit $status
