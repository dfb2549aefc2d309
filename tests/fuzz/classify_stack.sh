#!/bin/sh
# classify_stack.sh: whose crash a sanitizer report on stdin shows.
#
#   classify_stack.sh < REPLAY.log    prints "hdf5 FRAME", "gatelab FRAME"
#                                     or "none" (no frame of either)
#
# Each stack frame ("#N 0xADDR in FUNCTION LOCATION") is told by where it
# comes from, its shared object or source path, not by the top frame alone:
#   - runtime, skipped: the sanitizer runtime and its interceptors
#     (compiler-rt, sanitizer_common), libFuzzer (fuzzer::, its main and
#     C++ allocations), libc (libc.so, glibc's sysdeps/ and string/
#     sources: memset, memcpy), malloc and friends, and any other library;
#   - hdf5: libhdf5*.so, or a source file H5*.c;
#   - gatelab: a source file under src/, analysis/ or tests/ (meson
#     builds name them ../src/..., or by absolute path), or a bare address
#     in a fuzz_* target.
#     A frame named for a C library function (strdup, memcpy, ...) is
#     the runtime's interceptor even where the symbolizer gives no source
#     path and shows it as an address in the fuzz_* binary it is linked
#     into: gatelab defines no function of those names.
# The first frame that is hdf5 or gatelab decides: a crash inside libhdf5
# called from gatelab is libhdf5's (an upstream bug, README.md).
libc='^(str(dup|ndup|len|nlen|cpy|ncpy|cat|ncat|cmp|ncmp|casecmp|ncasecmp|chr|rchr|str|spn|cspn|pbrk|tok|tok_r|tol|toll|toul|toull|tod|tof)|mem(cpy|move|set|cmp|chr|rchr|mem)|bcmp|bzero|ato(i|l|ll|f)|v?s?n?printf|v?fprintf|f?puts|fwrite|fread|read|write|pread|pwrite)$'
awk -v LIBC="$libc" '
function owner(loc, fn) {
    if (loc ~ /compiler-rt|sanitizer_common|libclang_rt|libFuzzer|\/libc\.so|\/libc-|\/libm\.so|\/sysdeps\/|glibc|\/string\/|ld-linux/) return "";
    if (fn ~ /^(__asan|__ubsan|__sanitizer|__interceptor|fuzzer::|malloc|calloc|realloc|free|main|operator new|raise|abort|pthread_kill)/) return "";
    if (fn ~ LIBC) return "";
    if (loc ~ /libhdf5[^ \/]*\.so/ || loc ~ /(^|[\/( ])H5[A-Za-z0-9_]*\.c:/) return "hdf5";
    if (loc ~ /(^|[\/( ])(src|analysis|tests)\/[^ ]*\.[ch]:[0-9]/ || loc ~ /\/fuzz_[a-z]+\+0x/) return "gatelab";
    return "";
}
/^ *#[0-9]+ 0x[0-9a-f]+/ {
    line = $0
    sub(/^ *#[0-9]+ 0x[0-9a-f]+ +(in +)?/, "", line)
    fn = line; sub(/ .*/, "", fn)
    loc = line; sub(/^[^ ]+ */, "", loc)
    if (fn ~ /^\(/) { loc = fn; fn = "" }
    o = owner(loc, fn)
    if (o != "") { print o " " line; found = 1; exit }
}
END { if (!found) print "none" }
'
