#!/usr/bin/env bash
# The recipes of docs/ARCHITECTURE.md (the sections whose headings start
# "Adding" or "One config key") name what is there: every backticked path
# of the tree exists (one with a placeholder such as NAME, ID or * its
# folder), and every backticked C name occurs in a file the same item names beside it,
# else somewhere in src/, analysis/ or tests/ (a `PREFIX_<member>` or
# `PREFIX_*` pattern by its prefix, a `name(args)` by its name). An item
# is a numbered step or a paragraph. Other spans with spaces or
# punctuation (code, commands, options) are not read.
#   tests/check_recipes.sh [DOC]    (DOC: docs/ARCHITECTURE.md)
set -uo pipefail
cd "$(dirname "$0")/.."
doc=${1:-docs/ARCHITECTURE.md}
[ -f "$doc" ] || { echo "check_recipes: no $doc"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "check_recipes: $*"; status=1; }

# The recipes there must be: a heading that starts with each.
required=("One config key" "Adding a probe measure" "Adding an intervention kind"
    "Adding a metric" "Adding a report section" "Adding a variant" "Adding a command"
    "Adding an architecture")
for r in "${required[@]}"; do
    grep -q "^## $r" "$doc" || fail "$doc has no recipe \"## $r...\""
done

# section<TAB>item<TAB>token for each backticked span of a recipe's items
awk '
function flush(   s, t) {
    s = text
    while (match(s, /`[^`]+`/)) {
        t = substr(s, RSTART + 1, RLENGTH - 2)
        print sec "\t" item "\t" t
        s = substr(s, RSTART + RLENGTH)
    }
    text = ""
}
/^## / { flush(); on = ($0 ~ /^## (Adding|One config key)/); sec = substr($0, 4); n = 0; item = "paragraph 0"; next }
!on { next }
/^[[:space:]]*$/ { flush(); item = "paragraph " ++n; next }
/^[0-9]+\. / { flush(); item = "step " $1; sub(/\.$/, "", item) }
{ text = text " " $0 }
END { flush() }
' "$doc" >"$tmp/spans"
[ -s "$tmp/spans" ] || fail "no recipe section of $doc names anything"

# every file of the tree by base name, and every word of the code
find src analysis tests docs python -type f 2>/dev/null | sort >"$tmp/files"
grep -rhoE '[A-Za-z_][A-Za-z0-9_]*' src analysis tests 2>/dev/null | sort -u >"$tmp/words"

placeholder() { [[ "$1" =~ (^|[^A-Za-z])(NAME|ID)([^A-Za-z]|$) || "$1" == *'*'* || "$1" == *'<'* ]]; }
# A path of the tree: under a folder at the top (not a run file's group
# such as hidden/), or a file name with a source or document suffix.
is_path() {
    if [[ "$1" == */* ]]; then [ -d "${1%%/*}" ]; else [[ "$1" =~ \.(c|h|md|py|sh|mjs|build|h5|json)$ ]]; fi
}
# The files a path names: itself, or every file of that base name.
resolve() {
    if [[ "$1" == */* ]]; then
        [ -e "$1" ] && echo "$1"
    else
        awk -v b="$1" '{ n = split($0, p, "/"); if (p[n] == b) print }' "$tmp/files"
    fi
}
in_code() { grep -qxF -- "$1" "$tmp/words"; }
prefix_in_code() { grep -q -- "^$1" "$tmp/words"; }

checked=0
while IFS=$'\t' read -r sec item; do
    # the item's spans and the files it names
    mapfile -t toks < <(awk -F'\t' -v s="$sec" -v i="$item" '$1 == s && $2 == i { print $3 }' \
        "$tmp/spans")
    files=()
    for t in "${toks[@]}"; do
        is_path "$t" && [[ "$t" != /* && "$t" != *' '* ]] || continue
        while IFS= read -r f; do [ -n "$f" ] && files+=("$f"); done < <(resolve "$t")
    done
    ((${#files[@]})) && mapfile -t files < <(printf '%s\n' "${files[@]}" | sort -u)
    for t in "${toks[@]}"; do
        t=${t%()}
        # a call or macro use, `name(args)`: its name
        [[ "$t" =~ ^([A-Za-z_][A-Za-z0-9_]*)\( ]] && t=${BASH_REMATCH[1]}
        if [[ "$t" == *' '* || "$t" == /* ]]; then continue; fi # code, a run-file path
        if is_path "$t"; then
            checked=$((checked + 1))
            [ -n "$(resolve "$t")" ] && continue
            if placeholder "$t"; then
                d=${t%/*}
                [[ "$t" != */* || -d "$d" ]] && continue
            fi
            fail "\"$sec\" $item: \`$t\` does not exist"
        elif [[ "$t" =~ ^([A-Za-z_][A-Za-z0-9_]*)(<[A-Za-z_]*>|\*)$ ]]; then
            checked=$((checked + 1))
            p=${BASH_REMATCH[1]}
            prefix_in_code "$p" || fail "\"$sec\" $item: no name in src/, analysis/ or tests/ starts with \`$p\` (\`$t\`)"
        elif [[ "$t" =~ ^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$ ]]; then
            placeholder "$t" && continue
            checked=$((checked + 1))
            for w in ${t//./ }; do
                ((${#files[@]})) && grep -rqw -- "$w" "${files[@]}" && continue
                in_code "$w" && continue
                fail "\"$sec\" $item: \`$w\` is in none of ${files[*]:-its files} nor in src/, analysis/ or tests/"
            done
        fi
    done
done < <(cut -f1,2 "$tmp/spans" | uniq)

[ "$checked" -gt 50 ] || fail "only $checked names checked: the recipes were not read"
[ $status -eq 0 ] && echo "check_recipes: the $checked paths and names of the recipes in $doc exist"
exit $status
