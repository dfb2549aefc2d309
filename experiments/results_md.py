#!/usr/bin/python3
"""results_md.py: writes docs/results.md from the committed reports.

Every result sentence of docs/results.md is copied verbatim from a
generated REPORT.md of a claims study under results/reference/ (the
lines the report's own tests decide; the earlier studies under
results/reference/earlier/ are named, not quoted), and its tables are
computed here from the committed results.csv (means and sample standard
deviations over seeds, no tests), but for the first: every claims study's
claims with the verdict and Holm p its headline prints, a claim's tests
in different studies side by side.
Nothing in the output is a result written by hand.

    /usr/bin/python3 experiments/results_md.py            # rewrite docs/results.md
    /usr/bin/python3 experiments/results_md.py --check    # exit 1 if it differs
    /usr/bin/python3 experiments/results_md.py --check --root DIR

--check also holds README.md to the reports: every quoted ("> ") line of
README.md must be a line of the first claims study's REPORT.md, which the
paragraph before the quote names; and every committed claims-* report must
be listed in CLAIMS.
"""
import argparse
import csv
import math
import os
import re
import sys
import tempfile

REF = "results/reference"

# The claims studies committed so far (results/README.md), in the order
# docs/results.md gives them: (directory, title, framing); the framing says
# what was run, never what it showed. --check fails on a committed
# claims-* report this list lacks.
CLAIMS = [
    ("claims-brown", "The paper's claims on the Brown corpus",
     "baseline, g1-elem and g1-head, 40 fresh seeds each (1001-1040), paired by seed, at\n"
     "`natural.ini` (Brown bytes + BOS), the primary family of `experiments/claims-brown.sweep`\n"
     "(7 tests by the exact Wilcoxon signed-rank test, Holm-corrected, and 2 equivalence tests\n"
     "by paired TOST), its protocol committed before the runs and pinned in its `protocol.ini`."),
    ("claims-stability", "The paper's stability claim: learning rate without clipping",
     "baseline, g1-elem and qk-norm at every half-decade of lr from 1e-2 to 1, gradient\n"
     "clipping off, 15 fresh seeds each (1201-1215), paired by seed, at `small.ini`\n"
     "(bigram-backcopy), the primary family of `experiments/claims-stability.sweep` (2 tests at\n"
     "the two highest rates by the exact Wilcoxon signed-rank test, Holm-corrected), its protocol\n"
     "committed before the runs and pinned in its `protocol.ini`."),
    ("claims-longctx", "The paper's long-context claim: extension with YaRN",
     "baseline and g1-elem, 20 fresh seeds each (3001-3020), paired by seed, at `longctx.ini`\n"
     "(Brown bytes + BOS, trained at T = 128, the RoPE base raised and training continued at 256\n"
     "for the last 20% of the steps), evaluated at 1x-8x of 256 with plain RoPE and YaRN and on the\n"
     "needle task; the primary family of `experiments/claims-longctx.sweep` (1 test, the\n"
     "degradation at 4x under YaRN, by the exact Wilcoxon signed-rank test, one-sided in the\n"
     "paper's direction), its protocol committed before the runs and pinned in its `protocol.ini`."),
    ("claims-length", "The paper's claims at twice the training steps",
     "baseline and g1-elem at `natural.ini`'s 1500 steps and at 3000 (`-2x`), 50 fresh seeds\n"
     "(1501-1550), paired by seed, on Brown bytes + BOS; the primary family of\n"
     "`experiments/claims-length.sweep` (3 tests at 3000 steps by the exact Wilcoxon signed-rank\n"
     "test, Holm-corrected) and its secondary question (the change of the val-loss gain from\n"
     "1500 to 3000 steps, a paired difference in differences, non-inferiority with margin\n"
     "0.04 nats), its protocol committed before the runs and pinned in its `protocol.ini`; run\n"
     "in two pieces of 25 seeds, the tests in the report of the last."),
    ("claims-bigram", "The paper's sink claims on bigram-backcopy",
     "baseline, g1-elem, g1-head, g1-const and g1-ns, 20 fresh seeds each (1301-1320), paired by\n"
     "seed, at `small.ini` (bigram-backcopy), the primary family of\n"
     "`experiments/claims-bigram.sweep` (9 tests by the exact Wilcoxon signed-rank test,\n"
     "Holm-corrected, and 1 equivalence test by paired TOST; no val-loss claim, the task's floor\n"
     "leaves no room for one), its protocol committed before the runs and pinned in its\n"
     "`protocol.ini`."),
    ("claims-nonlin", "The paper's non-linearity and sparsity claims",
     "baseline, g1-elem, the non-linearity controls sdpa-rmsnorm, sdpa-silu and g1-add-id, the\n"
     "constant gate g1-const and the non-sparse gate g1-ns, 60 fresh seeds (1401-1460), paired\n"
     "by seed, at `natural.ini` (Brown bytes + BOS); the primary family of\n"
     "`experiments/claims-nonlin.sweep` (8 val-loss tests in the paper's directions by the exact\n"
     "Wilcoxon signed-rank test, Holm-corrected) and its secondary family (F-Attn on the same 8\n"
     "comparisons), its protocol committed before the runs and pinned in its `protocol.ini`; run\n"
     "in three pieces of 20 seeds, the tests in the report of the last."),
]

# The earlier studies are not quoted: docs/results.md gives the claims
# studies only, and names where the earlier ones are kept.
EARLIER = (
    "The studies made before the claims studies, on 2026-12-01 by earlier builds under earlier\n"
    "rules, are under `results/reference/earlier/` as a record; [their\n"
    "index](../results/reference/earlier/REPORT.md) says how each was made and what its\n"
    "sentences can be read as. This page quotes none of them: the claims studies above\n"
    "replace them.")

# results.csv columns of the table: (column, header, format)
COLUMNS = [("val_loss", "val loss", "%.4f"), ("f_attn", "F-Attn", "%.3f"), ("sink_rate_0.3", "sink@0.3", "%.2f"),
           ("gate_mean", "gate mean", "%.3f"), ("m_act", "M-Act", "%.0f"),
           ("top1_over_median", "top1/median", "%.0f")]
# docs/paper-tables.md Table 4 columns set beside ours: ours -> the paper's header
PAPER = {"f_attn": "F-Attn", "gate_mean": "gate mean", "m_act": "M-Act"}


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def section(text, head):
    """The lines of the section whose heading is head, up to the next of its level."""
    lines, out, inside = text.split("\n"), [], False
    level = head.split(" ")[0]
    for line in lines:
        if line == head:
            inside = True
            continue
        if inside and line.startswith("#") and line.split(" ")[0] in ("#", "##", level):
            break
        if inside:
            out.append(line)
    return out


def headline_quote(text):
    """The headline's claim sentences, from the first "- The paper" to the equivalence part,
    the secondary family's pointer or the first table's heading, whichever comes first;
    then the equivalence part's sentence and its bullets, when the headline has one.
    An interim headline (a study in pieces before its last) has no claim sentences: its
    quote is its "**Interim" paragraph, which says so."""
    lines = section(text, "## Headline (confirmatory)")
    start = next((i for i, l in enumerate(lines) if l.startswith("- The paper")), None)
    if start is None:
        return [l for l in lines if l.startswith("**Interim")]
    stops = ("Equivalence", "The protocol's [secondary]", "### ")
    end = next((i for i in range(start, len(lines)) if lines[i].startswith(stops)), len(lines))
    block = lines[start:end]
    while block and not block[-1].strip():
        block.pop()
    eq = next((i for i in range(end, len(lines)) if lines[i].startswith("Equivalence")), None)
    if eq is not None:
        bullets = []
        for line in lines[eq + 1:]:
            if line.startswith("- "):
                bullets.append(line)
            elif line.strip() or bullets:
                break
        block += ["", lines[eq], ""] + bullets
    return block


SCALE = re.compile(r"^Scale of these runs \(not a claim\): (.+?) parameters a run .*?, (.+?) "
                   r"training tokens a run .*? and (.+?) training FLOPs a run ")


def scale_cell(text):
    """The runs' scale as a report's headline gives it ("Scale of these runs (not a claim):"
    before its claim sentences, never one of them): "P parameters, N tokens, F FLOPs" a run,
    or "–" for a report made before the headline gave it."""
    for line in section(text, "## Headline (confirmatory)"):
        m = SCALE.match(line)
        if m:
            return "%s parameters, %s tokens, %s FLOPs" % m.groups()
    return "–"


def quote(block):
    return "\n".join("> " + l if l else ">" for l in block)


def paper_table4(root):
    """{id: {header: text}} from docs/paper-tables.md's Table 4."""
    lines = section(read(root, "docs/paper-tables.md"), "## Table 4: sparsity")
    rows = [l for l in lines if l.startswith("|")]
    if len(rows) < 2:
        return {}
    head = [c.strip() for c in rows[0].strip("|").split("|")]
    out = {}
    for r in rows[2:]:
        cells = [c.strip() for c in r.strip("|").split("|")]
        out[cells[0]] = dict(zip(head, cells))
    return out


def mean_sd(values):
    """(mean, sample sd or None, how many values) of the finite values; None if none."""
    v = [x for x in values if math.isfinite(x)]
    if not v:
        return None
    m = sum(v) / len(v)
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else None
    return m, sd, len(v)


def mean_cell(ms, fmt, rows):
    """A table cell: mean ± sd, with how many of the group's rows it is over when fewer."""
    if ms is None:
        return "–"
    m, sd, n = ms
    cell = fmt % m if sd is None else (fmt % m) + " ± " + (fmt % sd)
    return cell if n == rows else "%s (%d of %d)" % (cell, n, rows)


def num(s):
    try:
        return float(s)
    except ValueError:
        return float("nan")


def sweep_table(root, rel):
    """Mean ± sample std per run name of rel's results.csv, beside Table 4."""
    with open(os.path.join(root, rel, "results.csv"), encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    paper = paper_table4(root)
    groups = {}
    for r in rows:
        groups.setdefault((r["run"], r["variant"]), []).append(r)
    head = ["run", "seeds"]
    for col, name, _ in COLUMNS:
        head.append(name)
        if col in PAPER:
            head.append("paper")
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (run, variant), rs in groups.items():
        cells = [run, str(len(rs))]
        for col, _, fmt in COLUMNS:
            cells.append(mean_cell(mean_sd([num(r.get(col, "")) for r in rs]), fmt, len(rs)))
            if col in PAPER:
                cells.append(paper.get(variant, {}).get(PAPER[col]) or "–")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


TABLE_NOTE = ("The table gives the mean ± sample std over seeds from its `results.csv`; a\n"
              "mean over fewer of the row's seeds (a value missing or not finite) says how many,\n"
              "`(12 of 15)`. The paper's column is Table 4 of docs/paper-tables.md (reference\n"
              "data, not ours, at the paper's scale).")


def claim_rows(directory, text):
    """One (claim, study, id, verdict, Holm p) per headline sentence of a claims report:
    the claim as the sentence states it, the verdict and p as the report prints them."""
    rows = []
    for line in headline_quote(text):
        if line.startswith("- The paper: "):
            claim = line[len("- The paper: "):].split(" (Table", 1)[0]
            ident = re.search(r"\((P[0-9]+)\)\.$", line)
        elif line.startswith("- `"):
            claim = line[2:].split(" is **", 1)[0]
            ident = re.search(r", (E[0-9]+)\)\.$", line)
        else:
            continue
        m = re.search(r"\*\*([^*]+)\*\*", line)  # the sentence's first bold: its verdict
        if not (m and ident):
            sys.exit("results_md.py: %s's headline sentence has no verdict or id: %s"
                     % (directory, line[:120]))
        p = re.search(r"Holm (?:TOST )?p (?:= )?(< [0-9.e+-]+|[0-9.e+-]+)", line)
        rows.append((claim, directory, ident.group(1), m.group(1), p.group(1) if p else "–"))
    return rows


def claims_summary(reports):
    """The table of every claim the claims studies' reports ({directory: REPORT.md's text},
    in CLAIMS's order) test, a claim's tests in different studies side by side, in the order
    the claims first appear, each with its study's scale (scale_cell)."""
    rows, scale = [], {}
    for directory, text in reports.items():
        rows += claim_rows(directory, text)
        scale[directory] = scale_cell(text)
    first = {}
    for i, r in enumerate(rows):
        first.setdefault(r[0], i)
    rows.sort(key=lambda r: first[r[0]])
    out = ["| the paper's claim, as the report states it | study | id | verdict | Holm p "
           "| the study's runs, each |",
           "|---|---|---|---|---|---|"]
    out += ["| %s | [%s](../%s/%s/REPORT.md) | %s | %s | %s | %s |"
            % (c, d, REF, d, i, v, p, scale[d]) for c, d, i, v, p in rows]
    return "\n".join(out)


def claims_dirs(root):
    """The claims-* directories under REF that hold a REPORT.md."""
    base = os.path.join(root, REF)
    return sorted(d for d in os.listdir(base)
                  if d.startswith("claims-") and os.path.isfile(os.path.join(base, d, "REPORT.md")))


def build(root):
    reports = {d: read(root, "%s/%s/REPORT.md" % (REF, d)) for d, _, _ in CLAIMS}
    parts = [
        "<!-- Generated by experiments/results_md.py from results/reference/; do not edit. -->",
        "# Results",
        "",
        "Every result sentence below is copied verbatim from a generated report, where it sits\n"
        "beside the test that makes it (its id: P for the primary family, E for equivalence);\n"
        "each table is computed by `experiments/results_md.py` from the committed `results.csv`.\n"
        "The reports, their `results.csv` and figures are under `results/reference/` ([its\n"
        "index](../results/reference/REPORT.md)).",
        "", "## Every claim tested so far", "",
        "One row per test of the claims studies committed so far, copied from each report's\n"
        "headline (verdict and Holm-adjusted p as printed there; \"Untestable here\" has none),\n"
        "with the parameters, training tokens and training FLOPs of each of the study's runs as\n"
        "its headline gives them (\"–\": a report made before it did), a claim's tests in\n"
        "different studies side by side. Each study's design, and so what its\n"
        "verdicts can be read as, is in its section below and in the index.",
        "", claims_summary(reports),
    ]
    for directory, title, framing in CLAIMS:
        rel = "%s/%s" % (REF, directory)
        parts += ["", "## " + title, "",
                  "`%s/REPORT.md`: %s Its headline, verbatim:" % (rel, framing), "",
                  quote(headline_quote(reports[directory])), "",
                  "%s Its report gives every test, its secondary family if it declares\n"
                  "one, and the scale of these runs beside the scales at which each effect was\n"
                  "seen." % TABLE_NOTE,
                  "", sweep_table(root, rel)]
    parts += ["", "## Earlier studies", "", EARLIER]
    return "\n".join(parts) + "\n"


def check_readme(root):
    """Every quoted line of README.md is a line of the first claims study's
    report, and the paragraph introducing them names that report."""
    rel = "%s/%s/" % (REF, CLAIMS[0][0])
    report = set(read(root, rel + "REPORT.md").split("\n"))
    readme = read(root, "README.md")
    bad = [l for l in readme.split("\n") if l.startswith("> ") and l[2:] not in report]
    for l in bad:
        print("README.md quotes a line %sREPORT.md does not have: %s" % (rel, l[:120]),
              file=sys.stderr)
    paras = readme.split("\n\n")
    quoted = [i for i, p in enumerate(paras) if p.startswith("> ")]
    if quoted and rel + "REPORT.md" not in paras[quoted[0] - 1]:
        print("README.md: the paragraph before the quote must name %sREPORT.md" % rel,
              file=sys.stderr)
        return False
    return not bad


def check_listed(root):
    """Every committed claims study is in CLAIMS."""
    missing = set(claims_dirs(root)) - {c[0] for c in CLAIMS}
    for d in sorted(missing):
        print("%s/%s/REPORT.md is committed but experiments/results_md.py's CLAIMS lacks it"
              % (REF, d), file=sys.stderr)
    return not missing


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    a = ap.parse_args()
    try:
        return run(a)
    except OSError as e:
        print("results_md.py: %s: %s" % (e.filename or "?", e.strerror or e), file=sys.stderr)
        return 2


def write_beside(path, text):
    """text into path through a fresh temporary beside it, renamed into place;
    a symbolic link at path is refused (exit 2), never written through."""
    if os.path.islink(path):
        print("results_md.py: %s is a symbolic link; refusing to write through it "
              "(give the real path with --root)" % path, file=sys.stderr)
        return 2
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp",
                               dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, os.stat(path).st_mode & 0o7777 if os.path.exists(path) else 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return 0


def run(a):
    """Build docs/results.md under a.root; write it, or with a.check compare it."""
    text = build(a.root)
    path = os.path.join(a.root, "docs/results.md")
    if not a.check:
        return write_beside(path, text)
    ok = check_readme(a.root) & check_listed(a.root)
    if read(a.root, "docs/results.md") != text:
        print("docs/results.md differs from what experiments/results_md.py generates; "
              "run it to regenerate", file=sys.stderr)
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
