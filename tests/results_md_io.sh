#!/usr/bin/env bash
# results_md_io.sh: experiments/results_md.py over a copy of the committed
# reports. A mean over fewer values than its row's seeds says how many
# ("(1 of 2)"); a symbolic link at docs/results.md is refused (exit 2, one
# line) and neither it nor its target written; a missing report gives one
# line naming it and exit 2, no traceback.
#   tests/results_md_io.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" results_md_io "$@"
trap 'rm -rf "$W"' EXIT

# a root holding what results_md.py reads: README.md, docs/, the reports and results.csv
mkdir root && cp -r "$S/README.md" "$S/docs" root/
(cd "$S" && find results/reference -name REPORT.md -o -name results.csv) | while read -r f; do
    mkdir -p "root/$(dirname "$f")" && cp "$S/$f" "root/$f"
done
md() { /usr/bin/python3 "$S/experiments/results_md.py" --root root "$@" >out.txt 2>err.txt; }
one_line() {
    [ "$(wc -l <err.txt)" -eq 1 ] || bad "want one line on stderr: $(cat err.txt)"
    grep -q "$1" err.txt || bad "want '$1' on stderr: $(cat err.txt)"
    grep -q Traceback err.txt && bad "a traceback: $(cat err.txt)"
}
md --check || bad "--check on the committed reports: exit $? ($(cat err.txt))"

# one F-Attn value of the first run blanked: its mean is over one row fewer
csvf=$(ls root/results/reference/claims-*/results.csv | head -1)
/usr/bin/python3 - "$csvf" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8")))
rows[0]["f_attn"] = ""
with open(sys.argv[1], "w", encoding="utf-8", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
PY
n=$(/usr/bin/python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); \
print(sum(1 for x in r if (x['run'],x['variant'])==(r[0]['run'],r[0]['variant'])))" "$csvf")
md || bad "write: exit $? ($(cat err.txt))"
grep -q "($((n - 1)) of $n) |" root/docs/results.md ||
    bad "no '($((n - 1)) of $n)' cell in docs/results.md for the blanked value"

# a symbolic link at docs/results.md: refused, the link and its target kept
echo "precious" >target.txt && cp target.txt target.orig
rm root/docs/results.md && ln -s "$W/target.txt" root/docs/results.md
md; rc=$?
[ $rc -eq 2 ] || bad "through a link: exit $rc, want 2"
one_line "is a symbolic link; refusing to write through it"
cmp -s target.txt target.orig || bad "the link's target was written"
[ -L root/docs/results.md ] || bad "the link was replaced"

# a missing report: one line naming it, exit 2
rm root/docs/results.md && rm "$(dirname "$csvf")/results.csv"
md; rc=$?
[ $rc -eq 2 ] || bad "missing results.csv: exit $rc, want 2"
one_line "$(dirname "${csvf#root/}")/results.csv: No such file or directory"
exit $fail
