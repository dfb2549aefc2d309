#!/usr/bin/env bash
# No two source files call each other. From `nm` on the object files of the
# static libraries given (meson passes every gatelab library), each file's
# undefined symbols are matched to the file that defines them; a pair
# A -> B and B -> A is a circle, named with the symbols each way. Such a
# pair is one piece of logic split in two (merge it) or a helper that
# belongs in a third file both call.
#   usage: check_cycles.sh LIB.a...
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: check_cycles.sh LIB.a..." >&2; exit 2; }
for a in "$@"; do
    [ -f "$a" ] || { echo "check_cycles: $a: no such library" >&2; exit 2; }
done
# "lib.a[dir/x.c.o]: sym T ..." -> "file type sym", file named by the
# library's source folder (the .a sits in the build tree at that path).
nm -A -P "$@" 2>/dev/null | awk '
    {
        split($1, p, "[][]"); lib = p[1]; obj = p[2]
        sub(/:$/, "", obj)
        n = split(obj, q, "/"); base = q[n]; sub(/\.o$/, "", base)
        m = split(lib, d, "/"); dir = ""
        for (i = 1; i < m; i++) dir = dir (dir == "" ? "" : "/") d[i]
        sub(/^(.*\/)?build[^\/]*\/?/, "", dir)
        file = (dir == "" ? "" : dir "/") base
        if ($3 == "U") print file, "U", $2
        else if ($3 ~ /^[TDBRWVGS]$/) print file, "D", $2
    }' | awk '
    $2 == "D" { def[$3] = $1; next }
    { use[NR] = $1 " " $3 }
    END {
        for (k in use) {
            split(use[k], u, " ")
            if (!(u[2] in def) || def[u[2]] == u[1]) continue
            e = u[1] SUBSEP def[u[2]]
            if (!(e in why)) why[e] = u[2]
        }
        bad = 0; edges = 0
        for (e in why) edges++
        if (edges == 0) { print "check_cycles: no call between files found (nm?)"; exit 1 }
        for (e in why) {
            split(e, f, SUBSEP)
            r = f[2] SUBSEP f[1]
            if (f[1] < f[2] && (r in why)) {
                printf "%s <-> %s: %s calls %s, %s calls %s\n", f[1], f[2], f[1], why[e], f[2], why[r]
                bad = 1
            }
        }
        if (!bad) printf "cycles: no two source files call each other (%d file-to-file calls)\n", edges
        exit bad
    }'
