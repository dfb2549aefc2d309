#!/usr/bin/env bash
# The run file's read face goes down its floors and never back up. The
# floors are the list at the head of src/runfile/runfile_read.h (lines
# " *   N file.c ..."); from `nm` on the runfile library's objects, every
# call from one listed file to another must go to a lower floor. A call
# sideways or up is named with its symbol. Every runfile_read*.c,
# runfile_vet.c and runfile_check.c object must be listed, and every listed
# file must be in the library, so the check cannot pass by missing a file.
#   usage: check_read_order.sh LIB.a HEADER (the runfile library, runfile_read.h)
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: check_read_order.sh LIB.a HEADER" >&2; exit 2; }
lib=$1 hdr=$2
[ -f "$lib" ] || { echo "check_read_order: $lib: no such library" >&2; exit 2; }
[ -f "$hdr" ] || { echo "check_read_order: $hdr: no such header" >&2; exit 2; }
floors=$(sed -n 's/^ \*   \([0-9][0-9]*\) \(.*\.c\)$/\1 \2/p' "$hdr")
[ -n "$floors" ] || { echo "check_read_order: $hdr: no floor list"; exit 1; }
nm -A -P "$lib" 2>/dev/null | awk -v floors="$floors" '
    BEGIN {
        n = split(floors, line, "\n")
        for (i = 1; i <= n; i++) {
            k = split(line[i], w, " ")
            for (j = 2; j <= k; j++) floor[w[j]] = w[1] + 0
        }
    }
    {
        split($1, p, "[][]"); obj = p[2]
        sub(/:$/, "", obj)
        m = split(obj, q, "/"); file = q[m]; sub(/\.o$/, "", file)
        seen[file] = 1
        if ($3 == "U") use[file " " $2] = 1
        else if ($3 ~ /^[TDBRWVGS]$/) def[$2] = file
    }
    END {
        bad = 0; calls = 0
        for (f in seen)
            if (f ~ /^runfile_(read.*|vet|check)\.c$/ && !(f in floor)) {
                printf "check_read_order: %s is not on a floor of the list\n", f
                bad = 1
            }
        for (f in floor)
            if (!(f in seen)) {
                printf "check_read_order: the list names %s, not in the library\n", f
                bad = 1
            }
        for (u in use) {
            split(u, x, " ")
            a = x[1]; s = x[2]
            if (!(s in def)) continue
            b = def[s]
            if (a == b || !(a in floor) || !(b in floor)) continue
            calls++
            if (floor[b] >= floor[a]) {
                printf "check_read_order: %s (floor %d) calls %s of %s (floor %d)\n", \
                    a, floor[a], s, b, floor[b]
                bad = 1
            }
        }
        if (!bad && calls == 0) { print "check_read_order: no call between the files found (nm?)"; exit 1 }
        if (!bad) printf "read order: %d calls between the read face'"'"'s files, each down a floor\n", calls
        exit bad
    }'
