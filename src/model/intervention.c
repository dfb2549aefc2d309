/* intervention.c: the inference-time interventions (intervention.h). */
#include "intervention.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "metrics.h"

const IvKindRow IV_KINDS[IV_COUNT] = {
    [IV_NONE] = {RS_IV_NONE, 0, "the plain rerun every other kind is compared with"},
    [IV_GATES_OPEN] = {RS_IV_GATES_OPEN, IVP_IN_ALL | IVP_SETS_GATES,
                       "every gate score = identity (1; 0 for additive gates)"},
    [IV_GATES_MEAN] = {RS_IV_GATES_MEAN, IVP_IN_ALL | IVP_SETS_GATES,
                       "each gate score = its channel's mean over the sequence's tokens"},
    [IV_BOS_CLIP] = {RS_IV_BOS_CLIP, IVP_IN_ALL,
                     "after every block, position 0's K largest |h| features are\n"
                     "clipped to the sequence's median |h|"},
    [IV_BOS_MEAN] = {RS_IV_BOS_MEAN, IVP_IN_ALL,
                     "after every block, position 0's residual = the mean of the\nother tokens'"},
    [IV_NO_BOS] = {RS_IV_NO_BOS, IVP_IN_ALL, "the probe without its first token (T-1 tokens)"},
    [IV_HEAD_ZERO] = {RS_IV_HEAD_ZERO, 0, "the --heads' outputs = 0 before the output projection"},
    [IV_GATES_OPEN_LAYER] = {RS_IV_GATES_OPEN_LAYER, IVP_PER_LAYER | IVP_SETS_GATES,
                             "gates-open in --layer only (others untouched)"},
    [IV_GATE_CONST] = {RS_IV_GATE_CONST, IVP_NEEDS_GATES | IVP_SETS_GATES,
                       "every gate score = c, one result per c of --gate-const"},
    [IV_MACT_MEAN] = {RS_IV_MACT_MEAN, IVP_PER_LAYER | IVP_MACT,
                      "after block --layer, each massive activation = its\n"
                      "feature's mean over the sequence's tokens"},
    [IV_MACT_ZERO] = {RS_IV_MACT_ZERO, IVP_PER_LAYER | IVP_MACT, "the same, set to 0"},
};

const char *intervention_name(InterventionKind k) {
    return k >= 0 && k < IV_COUNT ? IV_KINDS[k].name : "unknown";
}

int intervention_kind(const char *name) {
    for (int k = 0; name && k < IV_COUNT; k++)
        if (!strcmp(name, IV_KINDS[k].name)) return k;
    return -1;
}

int intervention_has(InterventionKind k, unsigned p) {
    return k >= 0 && k < IV_COUNT && (IV_KINDS[k].props & p) != 0;
}

char *intervention_names(char *out, size_t len, int with_all) {
    size_t at = 0;
    out[0] = 0;
    if (with_all) at = (size_t)snprintf(out, len, "all");
    for (int k = IV_NONE + 1; k < IV_COUNT && at < len; k++)
        at += (size_t)snprintf(out + at, len - at, "%s%s", at ? ", " : "", IV_KINDS[k].name);
    return out;
}

void intervention_help(FILE *f) {
    char all[256];
    size_t at = 0;
    all[0] = 0;
    for (int k = IV_NONE + 1; k < IV_COUNT; k++) {
        const IvKindRow *r = &IV_KINDS[k];
        fprintf(f, "  %-16s ", r->name);
        for (const char *h = r->help; *h;) {
            size_t n = strcspn(h, "\n");
            fprintf(f, "%.*s\n", (int)n, h);
            h += n;
            if (*h) fprintf(f, "  %-16s ", ""), h++;
        }
        if (r->props & IVP_IN_ALL && at < sizeof all)
            at += (size_t)snprintf(all + at, sizeof all - at, "%s%s", at ? ", " : "", r->name);
    }
    fprintf(f, "  %-16s %s\n", "all", all);
}

/* g [B, Ti, C]: each channel of a sequence set to its mean over rows e..Ti-1 */
static void gates_mean(float *g, int B, int Ti, int e, int C) {
    for (int b = 0; b < B; b++) {
        float *seq = g + (size_t)b * Ti * C;
        for (int c = 0; c < C; c++) {
            double s = 0.0;
            for (int t = e; t < Ti; t++) s += seq[(size_t)t * C + c];
            float mean = (float)(s / (Ti - e));
            for (int t = 0; t < Ti; t++) seq[(size_t)t * C + c] = mean;
        }
    }
}

int intervention_per_layer(InterventionKind k) { return intervention_has(k, IVP_PER_LAYER); }

int intervention_mact(InterventionKind k) { return intervention_has(k, IVP_MACT); }

char *intervention_mact_text(char *out, size_t len, double mact_abs, double mact_ratio) {
    if (isnan(mact_abs) || isnan(mact_ratio)) snprintf(out, len, "thresholds not recorded");
    else snprintf(out, len, "|h| > %g, > %g x median", mact_abs, mact_ratio);
    return out;
}

void iv_gate_scores(const Intervention *iv, int l, float *g, int per_token, int B, int Ti, int e,
                    int C, GateForm form) {
    if (!iv || !g) return;
    size_t n = per_token ? (size_t)B * Ti * C : (size_t)C;
    const int open =
        iv->kind == IV_GATES_OPEN || (iv->kind == IV_GATES_OPEN_LAYER && l == iv->layer);
    if (open || iv->kind == IV_GATE_CONST) {
        float v = iv->kind == IV_GATE_CONST ? iv->gate_const : form == FORM_ADD ? 0.0f : 1.0f;
        for (size_t i = 0; i < n; i++) g[i] = v;
    } else if (iv->kind == IV_GATES_MEAN && per_token && Ti > e) {
        gates_mean(g, B, Ti, e, C);
    }
}

/* h [T, d] of one sequence: row 0's k largest |h| clipped to the median
 * |h| over all of h. A clipped feature sits at the median, so each pass
 * takes the largest |h| still above it (the first index on ties). */
static void bos_clip(float *h, int T, int d, int k, float *scratch) {
    float med = (float)abs_median(h, (size_t)T * d, scratch);
    for (int j = 0; j < k; j++) {
        int best = 0;
        for (int i = 1; i < d; i++)
            if (fabsf(h[i]) > fabsf(h[best])) best = i;
        if (!(fabsf(h[best]) > med)) return;
        h[best] = h[best] < 0 ? -med : med;
    }
}

/* h [T, d] of one sequence: row 0 = mean of rows 1..T-1 */
static void bos_mean(float *h, int T, int d) {
    if (T < 2) return;
    for (int i = 0; i < d; i++) {
        double s = 0.0;
        for (int t = 1; t < T; t++) s += h[(size_t)t * d + i];
        h[i] = (float)(s / (T - 1));
    }
}

void iv_head_output(const Intervention *iv, int l, float *y, int B, int Ti, int H, int dh) {
    if (!iv || iv->kind != IV_HEAD_ZERO || !iv->head_zero) return;
    const size_t rows = (size_t)B * Ti, w = (size_t)H * dh;
    for (int h = 0; h < H; h++) {
        if (!iv->head_zero[(size_t)l * H + h]) continue;
        for (size_t r = 0; r < rows; r++) memset(y + r * w + (size_t)h * dh, 0, dh * sizeof(float));
    }
}

/* h [T, d] of one sequence: every entry with |h| above the massive
 * threshold set to 0 (zero) or to its feature's mean over the T rows,
 * taken before any entry of that feature changes. */
static void mact_set(float *h, int T, int d, const Intervention *iv, int zero) {
    const double thr =
        massive_threshold(h, (size_t)T * d, iv->mact_abs, iv->mact_ratio, iv->scratch);
    for (int i = 0; i < d; i++) {
        double s = 0.0;
        int any = 0;
        for (int t = 0; t < T; t++) {
            float v = h[(size_t)t * d + i];
            s += v;
            any |= fabsf(v) > thr;
        }
        if (!any) continue;
        const float set = zero ? 0.0f : (float)(s / T);
        for (int t = 0; t < T; t++)
            if (fabsf(h[(size_t)t * d + i]) > thr) h[(size_t)t * d + i] = set;
    }
}

void iv_residual(const Intervention *iv, int l, float *x, int B, int Ti, int e, int d) {
    if (!iv) return;
    const int mact = intervention_mact(iv->kind) && l == iv->layer;
    if (iv->kind != IV_BOS_CLIP && iv->kind != IV_BOS_MEAN && !mact) return;
    for (int b = 0; b < B; b++) {
        float *h = x + ((size_t)b * Ti + e) * d;
        if (iv->kind == IV_BOS_MEAN) bos_mean(h, Ti - e, d);
        else if (!iv->scratch) continue;
        else if (mact) mact_set(h, Ti - e, d, iv, iv->kind == IV_MACT_ZERO);
        else bos_clip(h, Ti - e, d, iv->clip_k, iv->scratch);
    }
}
