/* report_compute.c: the scale of the runs beside the scales at which public
 * work saw each effect (paper_scales.h): the headline's scale paragraph
 * (md_scale, only the effects the protocol's metrics test) and the
 * "Compute" section (md_compute, every source). Both read only the rows,
 * so a report from run files and one from results.csv alone say the same:
 * parameters (n_params), training tokens and training FLOPs (flops.h,
 * the Row's tokens and flops: results.csv's train_tokens and train_flops). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flops.h"
#include "metric_table.h" /* metric_declared */
#include "paper_scales.h"
#include "report_priv.h"

/* The smallest and largest of k finite values. */
typedef struct {
    double lo, hi;
    int k;
} Range;

/* The runs' scale: each a range over the readable rows that know it. */
typedef struct {
    Range params, tokens, flops;
    int runs;
} RunScale;

static void range_add(Range *r, double v) {
    if (!isfinite(v)) return;
    r->lo = r->k ? fmin(r->lo, v) : v;
    r->hi = r->k ? fmax(r->hi, v) : v;
    r->k++;
}

/* The parameters, training tokens and FLOPs of the readable rows. */
static RunScale run_scale(const Row *rows, int n) {
    RunScale s = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0};
    for (int i = 0; i < n; i++) {
        const Row *w = &rows[i];
        if (!w->ok) continue;
        s.runs++;
        range_add(&s.params, w->n_params > 0 ? (double)w->n_params : NAN);
        range_add(&s.tokens, w->tokens);
        range_add(&s.flops, w->flops);
    }
    return s;
}

/* A count in 3 significant digits with its unit: "107k", "3.07M", "1.7B",
 * "3.5T" (below 1000: as it is). */
static void fmt_count(char *buf, size_t len, double v) {
    static const char *const unit[] = {"", "k", "M", "B", "T"};
    int u = 0;
    while (u < 4 && fabs(v) >= 999.5) v /= 1e3, u++;
    snprintf(buf, len, "%.3g%s", v, unit[u]);
}

/* A FLOP count (or a ratio of two) as "2.19e12": %.3g without the
 * exponent's plus sign and leading zeros. */
static void fmt_flops(char *buf, size_t len, double v) {
    char t[64], *e;
    snprintf(t, sizeof t, "%.3g", v);
    if ((e = strchr(t, 'e')) != NULL) {
        char *d = e + 1;
        if (*d == '+') d++;
        int neg = *d == '-';
        if (neg) d++;
        while (*d == '0' && d[1]) d++;
        snprintf(buf, len, "%.*se%s%s", (int)(e - t), t, neg ? "-" : "", d);
    } else snprintf(buf, len, "%s", t);
}

/* A range in fmt's form: "107k", or "107k to 115k" when the ends print
 * differently. */
static void put_range(FILE *f, const Range *r, void (*fmt)(char *, size_t, double)) {
    char lo[64], hi[64];
    fmt(lo, sizeof lo, r->lo);
    fmt(hi, sizeof hi, r->hi);
    if (strcmp(lo, hi)) fprintf(f, "%s to %s", lo, hi);
    else fputs(lo, f);
}

/* " (60M parameters, 5B tokens, about 1.8e18 FLOPs by 6 × parameters ×
 * tokens)": the sizes the source states; nothing when it states none (its
 * model's words say so). */
static void put_source_size(FILE *f, const ScaleSource *s) {
    char b[64];
    int said = 0, est;
    double fl = scale_flops(s, &est);
    if (isfinite(s->params))
        fmt_count(b, sizeof b, s->params), fprintf(f, " (%s parameters", b), said++;
    if (isfinite(s->tokens))
        fmt_count(b, sizeof b, s->tokens), fprintf(f, "%s%s tokens", said++ ? ", " : " (", b);
    if (isfinite(fl)) {
        fmt_flops(b, sizeof b, fl);
        fprintf(f, "%s%s%s FLOPs%s", said++ ? ", " : " (", est ? "about " : "", b,
                est ? " by 6 × parameters × tokens" : "");
    }
    if (said) fputc(')', f);
}

/* One source in a sentence: who saw the effect (or did not) in what,
 * at what size, and its numbers. */
static void put_source_phrase(FILE *f, const ScaleSource *s) {
    if (s->seen < 0) {
        fputs(s->who, f);
        return;
    }
    fprintf(f, "%s %s %s", s->who, s->seen ? "saw it in" : "did not see it in", s->model);
    put_source_size(f, s);
    fprintf(f, ": %s", s->result);
}

/* The effects a protocol metric tests, into e (at most SE_COUNT): its
 * metric-table row's `effects`, or the stability effect for good_regime;
 * returns how many (0: no source speaks to it). */
static int metric_effects(ProtoMetric m, ScaleEffect *e) {
    if (m == PROTO_GOOD_REGIME_M) return e[0] = SE_STABILITY, 1;
    const MetricCol *c = metric_declared(m);
    int k = 0;
    for (int s = 0; c && s < SE_COUNT; s++)
        if (c->effects & 1u << s) e[k++] = (ScaleEffect)s;
    return k;
}

/* The runs' sizes: "107k parameters a run, 3.07M training tokens a run
 * ... over 100 runs", each "not known" when no row has it. */
static void put_run_scale(FILE *f, const RunScale *s) {
    fputs("Scale of these runs (not a claim): ", f);
    if (s->params.k) put_range(f, &s->params, fmt_count);
    else fputs("not known", f);
    fputs(" parameters a run (all of them: the rows do not record the embedding's size), ", f);
    if (s->tokens.k) put_range(f, &s->tokens, fmt_count);
    else fputs("not known", f);
    fputs(" training tokens a run ([definition](#def-train-tokens)) and ", f);
    if (s->flops.k) put_range(f, &s->flops, fmt_flops);
    else fputs("not known", f);
    fprintf(f,
            " training FLOPs a run ([definition](#def-train-flops)), over %d run%s; a range is "
            "over the runs, whose arms differ.",
            s->runs, s->runs == 1 ? "" : "s");
}

/* Whether the readable rows were trained at more than one learning rate
 * (a val-loss claim across rates speaks to the stability effect too: the
 * paper's Table 2 compares arms at a raised rate). */
static int several_rates(const Row *rows, int n) {
    double lr = NAN;
    for (int i = 0; i < n; i++) {
        if (!rows[i].ok || !isfinite(rows[i].cfg[CFG_LR])) continue;
        if (isnan(lr)) lr = rows[i].cfg[CFG_LR];
        else if (!cfg_eq(lr, rows[i].cfg[CFG_LR])) return 1;
    }
    return 0;
}

void md_scale(FILE *f, const Row *rows, int n, const Protocol *pr) {
    RunScale s = run_scale(rows, n);
    int want[SE_COUNT] = {0};
    put_run_scale(f, &s);
    fputs(" Where the paper and other public work saw the effects this protocol's metrics test "
          "(docs/paper-tables.md, \"Scales at which each effect is seen\", cites each source; "
          "the Compute section below sets them beside these runs' FLOPs):\n\n",
          f);
    for (int j = 0; j < pr->n_metrics; j++) {
        ScaleEffect e[SE_COUNT];
        int k = metric_effects(pr->metrics[j], e);
        for (int i = 0; i < k; i++) want[e[i]] = 1;
        if (pr->metrics[j] == proto_metric_of(PROTO_LOSS_METRIC) && several_rates(rows, n))
            want[SE_STABILITY] = 1;
        if (!k)
            fprintf(f, "- %s: no source in docs/paper-tables.md gives the scale of its effect.\n",
                    proto_metric_name(pr->metrics[j]));
    }
    for (int e = 0; e < SE_COUNT; e++) {
        if (!want[e]) continue;
        fprintf(f, "- %s: ", scale_effect_name((ScaleEffect)e));
        int said = 0;
        for (int i = 0; scale_source(i); i++)
            if (scale_source(i)->effect == (ScaleEffect)e) {
                if (said++) fputs("; ", f);
                put_source_phrase(f, scale_source(i));
            }
        fputs(".\n", f);
    }
    fputc('\n', f);
}

/* One source against the largest run: the Compute table's row. */
static void compute_row(FILE *f, const ScaleSource *s, double largest) {
    char b[64];
    int est;
    fprintf(f, "| %s | %s | %s%s%s | %s |", scale_effect_name(s->effect), s->who,
            s->seen > 0    ? "saw it"
            : s->seen == 0 ? "did not see it"
                           : "–",
            *s->result ? ": " : "", s->result, s->seen < 0 ? "–" : s->model);
    if (isfinite(s->params)) fmt_count(b, sizeof b, s->params), fprintf(f, " %s |", b);
    else fputs(" – |", f);
    if (isfinite(s->tokens)) fmt_count(b, sizeof b, s->tokens), fprintf(f, " %s |", b);
    else fputs(" – |", f);
    double fl = scale_flops(s, &est);
    if (isfinite(fl)) fmt_flops(b, sizeof b, fl), fprintf(f, " %s%s |", est ? "≈" : "", b);
    else fputs(" – |", f);
    if (!isfinite(fl)) fputs(" – |", f);
    else if (largest >= fl) fputs(" at or above it |", f);
    else fmt_flops(b, sizeof b, fl / largest), fprintf(f, " %s× below |", b);
    fprintf(f, " %s; %s |\n", s->source, s->doc);
}

void md_compute(FILE *f, const Row *rows, int n) {
    RunScale s = run_scale(rows, n);
    fputs("\n## Compute\n\n", f);
    if (s.flops.k == 0) {
        fputs("No run's training FLOPs are known (no readable config or step count).\n", f);
        return;
    }
    put_run_scale(f, &s);
    fputs(" Beside them, the scales at which the paper and other public work saw each effect, or "
          "looked for it and did not, one row per source (docs/paper-tables.md, \"Scales at which "
          "each effect is seen\"); ≈ marks FLOPs estimated as 6 × parameters × tokens for a dense "
          "model. An effect seen only above every run here is not expected to show, and its "
          "absence here says nothing about larger models.\n\n| effect | source | result | model "
          "| parameters | tokens | FLOPs | our largest run | cited from |\n"
          "|---|---|---|---|---|---|---|---|---|\n",
          f);
    for (int i = 0; scale_source(i); i++) compute_row(f, scale_source(i), s.flops.hi);
}
