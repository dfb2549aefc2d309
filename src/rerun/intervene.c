/* intervene.c: a run's probe rerun under interventions (intervene.h). */
#include "intervene.h"
#include "runstats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h" /* parse_ll_range */
#include "runfile_read.h"
#include "util.h"

#define IV_BATCH 8 /* probe sequences per forward */

void intervene_targets(int *tg, const int *tok, int N, int T, int first) {
    for (int b = 0; b < N; b++)
        for (int t = 0; t < T; t++)
            tg[(size_t)b * T + t] = t + 1 < T && t + 1 >= first ? tok[(size_t)b * T + t + 1] : -1;
}

void intervene_free(IntervResult *r, int n) {
    for (int i = 0; r && i < n; i++) runread_probe_free(&r[i].probe);
}

/* One number of a LAYER.HEAD piece, s[0..n): 0 with *v when it is in
 * 0..max (checked on the 64-bit value, before any narrowing); 1 when it
 * is an integer outside that range (or too large for 64 bits); -1 when it
 * is no integer. */
static int head_part(const char *s, size_t n, long long max, long long *v) {
    size_t sign = n > 0 && s[0] == '-';
    if (n == sign || strspn(s + sign, "0123456789") < n - sign) return -1;
    char buf[32];
    if (n >= sizeof buf) return 1; /* over 30 digits: past any range */
    memcpy(buf, s, n);
    buf[n] = '\0';
    return parse_ll_range(buf, 0, max, v) == 0 ? 0 : 1;
}

int intervene_parse_heads(const char *text, int L, int H, unsigned char *mask, char *err,
                          size_t errlen) {
    if (!text || !*text) return seterr(err, errlen, "head-zero needs --heads L.H,...");
    if (!strcmp(text, "dormant"))
        return seterr(err, errlen,
                      "--heads dormant: the run file's dormant heads are read by "
                      "intervene_run, not here");
    memset(mask, 0, (size_t)L * H);
    for (const char *q = text; *q;) {
        const char *end = strchr(q, ',');
        int len = end ? (int)(end - q) : (int)strlen(q);
        const char *dot = memchr(q, '.', (size_t)len);
        long long l = -1, h = -1;
        int rl = dot ? head_part(q, (size_t)(dot - q), L - 1, &l) : -1;
        int rh = dot ? head_part(dot + 1, (size_t)(q + len - dot - 1), H - 1, &h) : -1;
        if (rl < 0 || rh < 0)
            return seterr(err, errlen, "--heads: '%.*s' is not LAYER.HEAD", len, q);
        if (rl > 0)
            return seterr(err, errlen, "--heads: %.*s: layer %.*s is not in 0..%d", len, q,
                          (int)(dot - q), q, L - 1);
        if (rh > 0)
            return seterr(err, errlen, "--heads: %.*s: head %.*s is not in 0..%d", len, q,
                          (int)(q + len - dot - 1), dot + 1, H - 1);
        if (mask[(size_t)l * H + h])
            return seterr(err, errlen, "--heads: head %lld.%lld given twice", l, h);
        mask[(size_t)l * H + h] = 1;
        q = end ? end + 1 : q + len;
        if (end && !*q) return seterr(err, errlen, "--heads: '%s' ends with a comma", text);
    }
    return 0;
}

int intervene_parse_consts(const char *text, double *c, int max, int *n, char *err, size_t errlen) {
    *n = 0;
    if (!text || !*text) return seterr(err, errlen, "--gate-const: empty list");
    for (const char *q = text; *q;) {
        const char *end = strchr(q, ',');
        int len = end ? (int)(end - q) : (int)strlen(q);
        char buf[64], *stop;
        snprintf(buf, sizeof buf, "%.*s", len < 63 ? len : 63, q);
        double v = strtod(buf, &stop);
        if (!len || len > 63 || *stop || stop == buf)
            return seterr(err, errlen, "--gate-const: '%.*s' is not a number", len, q);
        if (!(v >= 0.0 && v <= 1.0))
            return seterr(err, errlen, "--gate-const: %s is outside [0, 1]", buf);
        for (int i = 0; i < *n; i++)
            if (c[i] == v) return seterr(err, errlen, "--gate-const: %s given twice", buf);
        if (*n == max) return seterr(err, errlen, "--gate-const: more than %d values", max);
        c[(*n)++] = v;
        q = end ? end + 1 : q + len;
        if (end && !*q) return seterr(err, errlen, "--gate-const: '%s' ends with a comma", text);
    }
    return 0;
}

static int has_kind(const InterventionKind *kinds, int n, InterventionKind k) {
    for (int i = 0; i < n; i++)
        if (kinds[i] == k) return 1;
    return 0;
}

#define IV_CONSTS_MAX 64 /* gate-const values in one call */

int intervene_check(const InterventionKind *kinds, int n, const IvParams *p, int L, int H, int d,
                    char *err, size_t errlen) {
    for (int i = 0; i < n; i++) {
        if (kinds[i] < 0 || kinds[i] >= IV_COUNT)
            return seterr(err, errlen, "intervention kind %d is not known", (int)kinds[i]);
        for (int j = 0; j < i; j++)
            if (kinds[j] == kinds[i])
                return seterr(err, errlen, "intervention '%s' given twice",
                              intervention_name(kinds[i]));
    }
    if (p->clip_k < 1 || p->clip_k > d)
        return seterr(err, errlen, "bos-clip k %d is not in 1..%d (d_model)", p->clip_k, d);
    if (p->layer < -1 || p->layer >= L)
        return seterr(err, errlen, "--layer %d is not in 0..%d", p->layer, L - 1);
    if ((has_kind(kinds, n, IV_MACT_MEAN) || has_kind(kinds, n, IV_MACT_ZERO)) &&
        (!(p->mact_abs >= 0) || !(p->mact_ratio >= 0)))
        return seterr(err, errlen, "massive-activation threshold %g, ratio %g: both must be >= 0",
                      p->mact_abs, p->mact_ratio);
    double c[IV_CONSTS_MAX];
    int nc;
    if (has_kind(kinds, n, IV_GATE_CONST) &&
        intervene_parse_consts(p->consts, c, IV_CONSTS_MAX, &nc, err, errlen) != 0)
        return -1;
    if (has_kind(kinds, n, IV_HEAD_ZERO) && (!p->heads || strcmp(p->heads, "dormant"))) {
        unsigned char *mask = malloc((size_t)L * H);
        int rc = mask ? intervene_parse_heads(p->heads, L, H, mask, err, errlen)
                      : seterr(err, errlen, "out of memory for the head list");
        free(mask);
        return rc;
    }
    return 0;
}

/* `--heads dormant`: the heads the run file's last probe classifies as
 * dormant by the sink rule (rs_head_dormant, runstats.h), into mask[L * H] and their list
 * ("L.H,...") into text. Refused, naming the run, when the probe has no
 * head output norms or no head is dormant (zeroing none is `none`). */
static int dormant_heads(Forward *f, unsigned char *mask, char *text, size_t len, char *err,
                         size_t errlen) {
    char why[512];
    RunReader *r = runread_open(f->run, why, sizeof why);
    ProbeRecord p;
    if (!r) return seterr(err, errlen, "--heads dormant: %s", why);
    int rc = runread_probe(r, -1, &p, why, sizeof why);
    runread_close(r);
    if (rc != 0) return seterr(err, errlen, "--heads dormant: %s", why);
    int n = 0, bad = p.L != f->info.L || p.H != f->info.H || !p.head_out_norm;
    size_t k = 0;
    memset(mask, 0, (size_t)f->info.L * f->info.H);
    text[0] = '\0';
    for (int l = 0; !bad && l < p.L; l++)
        for (int h = 0; h < p.H; h++) {
            double score;
            if (rs_head_dormant(&p, l, h, DORMANT_BY_SINK, &score) != 1) continue;
            mask[l * p.H + h] = 1, n++;
            if (k < len)
                k += (size_t)snprintf(text + k, len - k, "%s%d.%d", n > 1 ? "," : "", l, h);
        }
    runread_probe_free(&p);
    if (bad)
        return seterr(err, errlen,
                      "%s: --heads dormant: the last probe has no head output norms for "
                      "this model",
                      f->run);
    if (n == 0)
        return seterr(err, errlen,
                      "%s: --heads dormant: no head is dormant by the rule of docs/metrics.md",
                      f->run);
    return 0;
}

/* The head-zero mask [L * H] of p into *mask (malloc'd) and its list into
 * text; *mask NULL when head-zero is not asked for. */
static int head_mask(Forward *f, const InterventionKind *kinds, int n, const IvParams *p,
                     unsigned char **mask, char *text, size_t len, char *err, size_t errlen) {
    const int L = f->info.L, H = f->info.H;
    *mask = NULL;
    if (!has_kind(kinds, n, IV_HEAD_ZERO)) return 0;
    if (!(*mask = malloc((size_t)L * H))) return seterr(err, errlen, "out of memory for the heads");
    int rc = !strcmp(p->heads, "dormant")
                 ? dormant_heads(f, *mask, text, len, err, errlen)
                 : intervene_parse_heads(p->heads, L, H, *mask, err, errlen);
    for (int i = 0; rc == 0 && i < L * H; i++)
        if ((*mask)[i] && i % H >= forward_layer_heads(&f->info, i / H))
            rc = seterr(err, errlen, "%s: --heads %d.%d: layer %d has %d query heads", f->run,
                        i / H, i % H, i / H, forward_layer_heads(&f->info, i / H));
    if (rc == 0 && strcmp(p->heads, "dormant")) snprintf(text, len, "%s", p->heads);
    if (rc != 0) free(*mask), *mask = NULL;
    return rc;
}

/* The results kinds[n] expand to, their kind, name, layer and c filled:
 * into r[] (NULL: only counted). Returns the count. */
static int expand(const InterventionKind *kinds, int n, const IvParams *p, const double *c, int nc,
                  int L, IntervResult *r) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        const InterventionKind kd = kinds[i];
        const char *nm = intervention_name(kd);
        int reps = kd == IV_GATE_CONST ? nc : intervention_per_layer(kd) && p->layer < 0 ? L : 1;
        for (int j = 0; j < reps; j++, k++) {
            if (!r) continue;
            IntervResult *o = &r[k];
            memset(o, 0, sizeof *o);
            o->kind = kd, o->layer = -1, o->gate_const = NAN;
            o->mact_abs = intervention_mact(kd) ? p->mact_abs : NAN;
            o->mact_ratio = intervention_mact(kd) ? p->mact_ratio : NAN;
            snprintf(o->name, sizeof o->name, "%s", nm);
            if (intervention_per_layer(kd)) {
                o->layer = p->layer < 0 ? j : p->layer;
                snprintf(o->name, sizeof o->name, "%s-L%d", nm, o->layer);
            } else if (kd == IV_GATE_CONST) {
                o->gate_const = c[j];
                snprintf(o->name, sizeof o->name, "%s-c%g", nm, c[j]);
            }
        }
    }
    return k;
}

/* The run's last probe: its tokens [N, T], 3 <= T <= the model's length. */
static int load_probe(Forward *f, ProbeRecord *p, char *err, size_t errlen) {
    RunReader *rr = runread_open(f->run, err, errlen);
    if (!rr) return -1;
    int rc = runread_probe(rr, -1, p, err, errlen);
    runread_close(rr);
    if (rc == 0 && (p->T < 3 || p->T > f->info.seq_len || !p->tokens)) {
        rc = seterr(err, errlen, "%s: probe tokens are %d long (need 3..%d)", f->run, p->T,
                    f->info.seq_len);
        runread_probe_free(p);
    }
    return rc;
}

/* Tokens (and targets) one kind sees: no-bos drops each sequence's first. */
static void kind_tokens(int *tok, int *tg, const ProbeRecord *p, InterventionKind k, int *T) {
    const int N = p->N, T0 = p->T, drop = k == IV_NO_BOS;
    *T = T0 - drop;
    for (int b = 0; b < N; b++)
        memcpy(tok + (size_t)b * *T, p->tokens + (size_t)b * T0 + drop, (size_t)*T * sizeof(int));
    intervene_targets(tg, tok, N, *T, drop ? 1 : 2);
}

/* The probe under o's change (kind, layer, c; the head mask and the
 * thresholds from the call) into o. */
static int run_one(Forward *f, const ProbeRecord *src, const IvParams *p, const unsigned char *mask,
                   float *scratch, IntervResult *o, char *err, size_t errlen) {
    int *tok = malloc((size_t)src->N * src->T * sizeof(int));
    int *tg = malloc((size_t)src->N * src->T * sizeof(int));
    int rc = tok && tg ? 0 : seterr(err, errlen, "out of memory for the probe tokens");
    Intervention iv = {.kind = o->kind,
                       .clip_k = p->clip_k,
                       .scratch = scratch,
                       .layer = o->layer,
                       .gate_const = (float)o->gate_const,
                       .head_zero = mask,
                       .mact_abs = p->mact_abs,
                       .mact_ratio = p->mact_ratio};
    int T = 0;
    if (rc == 0) kind_tokens(tok, tg, src, o->kind, &T);
    ForwardProbeIn in = {.tokens = tok,
                         .targets = tg,
                         .N = src->N,
                         .T = T,
                         .M = src->M < T ? src->M : T,
                         .iv = &iv,
                         .step = src->step};
    if (rc == 0) rc = f->ops->probe(f, &in, &o->probe, &o->loss, &o->loss_n, err, errlen);
    o->clip_k = o->kind == IV_BOS_CLIP ? p->clip_k : 0;
    free(tok);
    free(tg);
    return rc;
}

/* Every result of r[nr] in turn on the loaded probe src. */
static int run_all(Forward *f, const ProbeRecord *src, const IvParams *p, const unsigned char *mask,
                   const char *heads, IntervResult *r, int nr,
                   void (*progress)(const char *name, int i, int n), char *err, size_t errlen) {
    float *scratch = falloc((size_t)src->T * f->info.d);
    if (!scratch) return seterr(err, errlen, "%s: out of memory for the probe", f->run);
    int rc = 0, done = 0;
    for (; rc == 0 && done < nr; done++) {
        if (progress) progress(r[done].name, done, nr);
        if (r[done].kind == IV_HEAD_ZERO)
            snprintf(r[done].heads, sizeof r[done].heads, "%s", heads);
        rc = run_one(f, src, p, mask, scratch, &r[done], err, errlen);
    }
    if (rc != 0) intervene_free(r, done);
    free(scratch);
    return rc;
}

IntervResult *intervene_run(Forward *f, const InterventionKind *kinds, int n, const IvParams *p,
                            int *nr, void (*progress)(const char *name, int i, int n), char *err,
                            size_t errlen) {
    const ForwardInfo *fi = &f->info;
    double c[IV_CONSTS_MAX];
    int nc = 0;
    char heads[IV_HEADS_MAX] = "";
    unsigned char *mask = NULL;
    if (intervene_check(kinds, n, p, fi->L, fi->H, fi->d, err, errlen) != 0) return NULL;
    for (int i = 0; i < n; i++)
        if (intervention_has(kinds[i], IVP_NEEDS_GATES) && !fi->gated) {
            seterr(err, errlen,
                   "%s: %s sets the gate scores, but this run (%s) has no gate to set; give it "
                   "a gated run",
                   f->run, intervention_name(kinds[i]), fi->variant);
            return NULL;
        }
    if (has_kind(kinds, n, IV_GATE_CONST))
        intervene_parse_consts(p->consts, c, IV_CONSTS_MAX, &nc, err, errlen);
    if (head_mask(f, kinds, n, p, &mask, heads, sizeof heads, err, errlen) != 0) return NULL;
    *nr = expand(kinds, n, p, c, nc, fi->L, NULL);
    IntervResult *r = calloc((size_t)(*nr ? *nr : 1), sizeof *r);
    ProbeRecord src;
    int rc = r ? load_probe(f, &src, err, errlen) : seterr(err, errlen, "out of memory");
    if (rc == 0) {
        expand(kinds, n, p, c, nc, fi->L, r);
        int B = src.N < IV_BATCH ? src.N : IV_BATCH;
        /* the forward state and one probe's accumulators against the
         * machine's memory (memplan.h), before they are allocated */
        rc = forward_check_memory(f, B, src.T, src.M, src.N, f->run, err, errlen);
        if (rc == 0) rc = f->ops->prepare(f, B, src.T, 1.0, err, errlen);
        if (rc == 0) rc = run_all(f, &src, p, mask, heads, r, *nr, progress, err, errlen);
        runread_probe_free(&src);
    }
    free(mask);
    if (rc != 0) free(r), r = NULL;
    return r;
}
