/* runstats.c: headline numbers of one probe (see runstats.h). */
#include "runstats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_derive.h"
#include "metrics.h"
#include "runschema.h"

static const float *col_of(const ProbeRecord *p, int n, int l, int h);

/* From the mean map; for truncated maps (M < T) from the per-sequence first
 * columns, which give the same mean over all T queries. */
double rs_head_share(const ProbeRecord *p, int l, int h) {
    int M = p->M > 0 ? p->M : p->T; /* a hand-built record may leave M 0 */
    if (M < p->T && p->first_col && p->N > 0 && p->T > 1) {
        double s = 0.0;
        for (int n = 0; n < p->N; n++) {
            const float *c = col_of(p, n, l, h);
            for (int t = 1; t < p->T; t++) s += c[t];
        }
        return s / ((double)p->N * (p->T - 1));
    }
    size_t TT = (size_t)M * M;
    return first_token_share(p->attention + ((size_t)l * p->H + h) * TT, M);
}

double rs_share(const ProbeRecord *p, int l) {
    int l0 = l < 0 ? 0 : l, l1 = l < 0 ? p->L : l + 1;
    double s = 0.0;
    for (int i = l0; i < l1; i++)
        for (int h = 0; h < runread_layer_heads(p, i); h++) s += rs_head_share(p, i, h);
    int n = runread_heads_in(p, l0, l1);
    return n ? s / n : 0.0;
}

static const float *col_of(const ProbeRecord *p, int n, int l, int h) {
    return p->first_col + (((size_t)n * p->L + l) * p->H + h) * p->T;
}

double rs_head_alpha0(const ProbeRecord *p, int l, int h, int len) {
    if (len > p->T) len = p->T;
    if (p->N < 1) return 0.0;
    double s = 0.0;
    for (int n = 0; n < p->N; n++) s += alpha0_from_col(col_of(p, n, l, h), len);
    return s / p->N;
}

double rs_sink_rate(const ProbeRecord *p, double eps, int len) {
    if (!p->first_col || p->N < 1) return NAN;
    if (!p->layer_heads) return sink_rate(p->first_col, (size_t)p->N * p->L * p->H, p->T, len, eps);
    double hits = 0.0; /* each layer's present heads only */
    for (int n = 0; n < p->N; n++)
        for (int l = 0; l < p->L; l++) {
            const int Hl = runread_layer_heads(p, l);
            hits += round(sink_rate(col_of(p, n, l, 0), (size_t)Hl, p->T, len, eps) * Hl);
        }
    return hits / ((double)p->N * runread_heads_in(p, 0, p->L));
}

/* Layer weights: the score count in gate_stats (equal when absent). */
static double layer_count(const ProbeRecord *p, int l) {
    double c = p->gate_stats ? p->gate_stats[l * RS_GATE_NSTATS + 3] : 0.0;
    return c > 0.0 ? c : 1.0;
}

static double channel_mean(const ProbeRecord *p, int l) {
    int C = p->gate_channels, Cl = runread_layer_channels(p, l);
    double s = 0.0;
    for (int c = 0; c < Cl; c++) s += p->gate_channel_mean[(size_t)l * C + c];
    return Cl ? s / Cl : 0.0;
}

double rs_gate_mean(const ProbeRecord *p, int l) {
    if (!p->has_gate) return 0.0;
    int l0 = l < 0 ? 0 : l, l1 = l < 0 ? p->L : l + 1;
    double s = 0.0, w = 0.0;
    for (int i = l0; i < l1; i++) {
        double m = p->gate_stats ? p->gate_stats[i * RS_GATE_NSTATS] : channel_mean(p, i);
        s += layer_count(p, i) * m;
        w += layer_count(p, i);
    }
    return w > 0.0 ? s / w : 0.0;
}

double rs_gate_head_mean(const ProbeRecord *p, int l, int g) {
    if (!p->has_gate || p->gate_heads < 1) return 0.0;
    if (p->gate_shared) return channel_mean(p, l); /* one gate for all heads */
    int per = p->gate_channels / p->gate_heads;
    const double *cm = p->gate_channel_mean + (size_t)l * p->gate_channels;
    double s = 0.0;
    for (int c = g * per; c < (g + 1) * per; c++) s += cm[c];
    return per ? s / per : 0.0;
}

double rs_gate_below(const ProbeRecord *p, int l, int k) {
    if (!p->has_gate || !p->gate_below) return 0.0;
    int l0 = l < 0 ? 0 : l, l1 = l < 0 ? p->L : l + 1;
    double s = 0.0, w = 0.0;
    for (int i = l0; i < l1; i++) {
        s += layer_count(p, i) * p->gate_below[i * RS_GATE_NBELOW + k];
        w += layer_count(p, i);
    }
    return w > 0.0 ? s / w : 0.0;
}

double rs_m_act(const ProbeRecord *p) {
    double s = 0.0;
    for (int l = 0; l < p->L; l++) s += p->h_max[l];
    return p->L ? s / p->L : 0.0;
}

/* ---- dropped mass, the sink slot, and the activation columns ---- */

/* Exact per-row counts stored by the probe (row_empty, first_nonempty):
 * every (l, h) has the same N (T - 1) rows, so the overall share of empty
 * rows is the mean and F-Attn over non-empty rows the weighted mean. */
static void mass_from_rows(const ProbeRecord *p, double *empty, double *share_nonempty) {
    double e = 0.0, w = 0.0, f = 0.0;
    int n = runread_heads_in(p, 0, p->L);
    for (int lh = 0; lh < p->L * p->H; lh++) {
        if (lh % p->H >= runread_layer_heads(p, lh / p->H)) continue; /* absent */
        e += p->row_empty[lh];
        if (isfinite(p->first_nonempty[lh]))
            f += (1.0 - p->row_empty[lh]) * p->first_nonempty[lh], w += 1.0 - p->row_empty[lh];
    }
    *empty = n ? e / n : NAN;
    *share_nonempty = w > 0 ? f / w : NAN;
}

void rs_mass(const ProbeRecord *p, double *empty, double *share_nonempty) {
    if (p->row_empty && p->first_nonempty) {
        mass_from_rows(p, empty, share_nonempty);
        return;
    }
    if (p->attention_slot) { /* the slot took the missing mass: no row is empty */
        *empty = 0.0;
        *share_nonempty = rs_share(p, -1);
        return;
    }
    /* the stored maps: M = T, or only the first maps_len < T positions of
     * an inspected model; the fallback then covers those rows */
    size_t MM = (size_t)p->M * p->M;
    double mass = 0.0, first = 0.0;
    for (int lh = 0; lh < p->L * p->H; lh++) {
        double m, f;
        if (lh % p->H >= runread_layer_heads(p, lh / p->H)) continue; /* absent */
        attention_mass_first(p->attention + (size_t)lh * MM, p->M, &m, &f);
        mass += m, first += f;
    }
    double rows = (double)runread_heads_in(p, 0, p->L) * (p->M - 1);
    *empty = rows > 0 ? fmax(0.0, 1.0 - mass / rows) : NAN; /* float sums overshoot */
    *share_nonempty = mass > 0 ? first / mass : NAN;
}

double rs_slot_share(const ProbeRecord *p, int l) {
    if (!p->attention_slot || p->T < 1) return NAN;
    int l0 = l < 0 ? 0 : l, l1 = l < 0 ? p->L : l + 1;
    double s = 0.0;
    size_t n = 0;
    for (int i = l0; i < l1; i++)
        for (int h = 0; h < runread_layer_heads(p, i); h++)
            for (int t = 0; t < p->T; t++, n++)
                s += p->attention_slot[((size_t)i * p->H + h) * p->T + t];
    return n ? s / (double)n : NAN;
}

static double layer_mean(const double *v, int L) {
    double s = 0.0;
    for (int l = 0; l < L; l++) s += v[l];
    return L ? s / L : NAN;
}

double rs_kurtosis(const ProbeRecord *p) { return layer_mean(p->h_kurtosis, p->L); }

double rs_bos_ratio(const ProbeRecord *p) { return layer_mean(p->h_norm_ratio, p->L); }

double rs_top1_median(const ProbeRecord *p) {
    double s = 0.0;
    int k = 0;
    for (int l = 0; l < p->L; l++)
        if (p->h_median[l] > 0) s += p->h_top3[l * RS_HIDDEN_TOP] / p->h_median[l], k++;
    return k ? s / k : NAN;
}

double rs_bos_act(const ProbeRecord *p) {
    if (!p->bos_max || p->L <= 0) return NAN;
    double s = 0.0;
    for (int l = 0; l < p->L; l++) s += p->bos_max[l];
    return s / p->L;
}

double rs_max_logit(const ProbeRecord *p) {
    if (!p->max_logit || p->L < 1) return NAN;
    double m = p->max_logit[0];
    for (int l = 1; l < p->L; l++) m = p->max_logit[l] > m ? p->max_logit[l] : m;
    return m;
}

int rs_rope(RunReader *r, RsRope *out, double *turns) {
    char pos[32];
    double dh, d, h, diff, T, base;
    memset(out, 0, sizeof *out);
    if (runread_config_string(r, "pos", pos, sizeof pos, NULL, 0) != 0 || strcmp(pos, "rope") ||
        runread_config_double(r, "head_dim", &dh, NULL, 0) != 0 ||
        runread_config_double(r, "d_model", &d, NULL, 0) != 0 ||
        runread_config_double(r, "n_heads", &h, NULL, 0) != 0 ||
        runread_config_double(r, "diff_attn", &diff, NULL, 0) != 0 ||
        runread_config_double(r, "rope_base", &base, NULL, 0) != 0 ||
        runread_config_double(r, RS_CFG_SEQ_LEN, &T, NULL, 0) != 0)
        return -1;
    Config c = {.head_dim = (int)dh, .d_model = (int)d, .n_heads = (int)h, .seq_len = (int)T};
    c.rope_base = (float)base;
    double share, ext_len, ext_base; /* a context extension's (absent: none) */
    if (runread_config_double(r, "extend_share", &share, NULL, 0) == 0 &&
        runread_config_double(r, "extend_seq_len", &ext_len, NULL, 0) == 0 &&
        runread_config_double(r, "extend_rope_base", &ext_base, NULL, 0) == 0) {
        c.extend_share = (float)share, c.extend_seq_len = (int)ext_len;
        c.extend_rope_base = (float)ext_base;
    }
    config_extended(&c); /* the model as eval runs it (runmodel.h) */
    out->rope_dim = config_head_dim(&c) / config_rope_split(diff != 0.0);
    if (out->rope_dim < 2 || out->rope_dim / 2 > RS_ROPE_MAX_PAIRS) return -1;
    out->T = c.seq_len;
    out->base = (double)c.rope_base; /* the model's float base */
    out->split = yarn_split(out->rope_dim, out->base, out->T, turns);
    return 0;
}

/* The val loss at length len under mode and the mean past the training
 * length; -1 when not evaluated there. */
static int lc_read(RunReader *r, const char *mode, int len, double *loss, double *beyond,
                   int *train_len) {
    RunLcEval e;
    if (runread_lceval(r, mode, len, &e, NULL, 0) != 0) return -1;
    *loss = e.val_loss;
    *beyond = loss_beyond(e.loss_by_bucket, e.n_buckets, e.len, e.train_len);
    if (train_len) *train_len = e.train_len;
    runread_lceval_free(&e);
    return 0;
}

/* The training length every /lceval result under mode records; 0: none. */
static int lc_train_len(RunReader *r, const char *mode) {
    int *lens = NULL, n = 0, T = 0;
    double loss, beyond;
    if (runread_lceval_lengths(r, mode, &lens, &n, NULL, 0) == 0 && n > 0)
        lc_read(r, mode, lens[0], &loss, &beyond, &T);
    free(lens);
    return T;
}

double rs_lc_deg_at(RunReader *r, const char *mode, int len) {
    double loss, beyond, loss_T, beyond_T;
    int T;
    if (lc_read(r, mode, len, &loss, &beyond, &T) != 0 || len <= T ||
        lc_read(r, mode, T, &loss_T, &beyond_T, NULL) != 0)
        return NAN;
    RsRope rope;
    if (!strcmp(mode, RS_LC_YARN) && (rs_rope(r, &rope, NULL) != 0 || rope.split.kept == 0))
        return NAN;
    return beyond - loss_T;
}

double rs_lc_degradation(RunReader *r, const char *mode, int mult) {
    int T = lc_train_len(r, mode);
    return T > 0 ? rs_lc_deg_at(r, mode, mult * T) : NAN;
}

double rs_needle_acc(RunReader *r, const char *mode, int mult, long long *rows) {
    *rows = 0;
    int T = lc_train_len(r, mode);
    RunLcEval e;
    if (T <= 0 || runread_lceval(r, mode, mult * T, &e, NULL, 0) != 0) return NAN;
    double s = 0.0;
    for (int d = 0; d < e.n_depths; d++) s += e.needle_acc[d];
    double acc = e.n_depths > 0 && e.needle_n > 0 ? s / e.n_depths : NAN;
    if (isfinite(acc)) *rows = (long long)e.n_depths * e.needle_n;
    runread_lceval_free(&e);
    RsRope rope;
    if (isfinite(acc) && !strcmp(mode, RS_LC_YARN) &&
        (rs_rope(r, &rope, NULL) != 0 || rope.split.kept == 0))
        acc = NAN, *rows = 0;
    return acc;
}

int rs_head_dormant(const ProbeRecord *p, int l, int h, DormantRule r, double *score) {
    *score = NAN;
    if (!p->head_out_norm || l < 0 || l >= p->L || h < 0 || h >= runread_layer_heads(p, l))
        return -1; /* a head its layer lacks is none */
    const int Hl = runread_layer_heads(p, l);
    double *s = malloc((size_t)Hl * sizeof *s);
    if (!s) return -1;
    head_norm_scores(s, p->head_out_norm + (size_t)l * p->H * p->T, Hl, p->T);
    *score = s[h];
    free(s);
    return head_dormant(r, *score, r == DORMANT_BY_SINK ? rs_head_share(p, l, h) : NAN);
}

#define ARCH_NAME(i, key) #key,
const char *const RS_ARCH_KEY[RS_N_ARCH] = {RS_ARCH_KEYS(ARCH_NAME)};
#define ARCH_ONE(i, key) +1
_Static_assert(0 RS_ARCH_KEYS(ARCH_ONE) == RS_N_ARCH, "RS_N_ARCH counts RS_ARCH_KEYS");

/* See runstats.h: an enumerated key is read as its name, the window as a
 * number, each through config_set so the run file's value is checked;
 * without a window, window_layers keeps its default (it changes nothing). */
/* The n config keys `keys` (integer or vocabulary keys) of run r set on
 * cfg; a key the run does not record keeps cfg's value. */
static void read_keys(RunReader *r, Config *cfg, const char *const *keys, int n) {
    for (int k = 0; k < n; k++) {
        char v[RS_ARCH_LEN], kv[64];
        double d;
        if (config_key_vocab(keys[k])) {
            if (runread_config_string(r, keys[k], v, sizeof v, NULL, 0) != 0) continue;
        } else {
            if (runread_config_double(r, keys[k], &d, NULL, 0) != 0 || !isfinite(d) ||
                fabs(d) > 1e9)
                continue;
            snprintf(v, sizeof v, "%d", (int)d);
        }
        snprintf(kv, sizeof kv, "%s=%s", keys[k], v);
        config_set(cfg, kv, NULL, 0);
    }
}

void rs_arch_config(RunReader *r, Config *cfg) {
    Config paper;
    config_defaults(&paper);
    *cfg = paper;
    read_keys(r, cfg, RS_ARCH_KEY, RS_N_ARCH);
    if (cfg->window <= 0) cfg->window_layers = paper.window_layers;
}

typedef struct {
    const char *key;
    char *out;
} ArchVisit;

/* config_visit's callback: the value of the key asked for. */
static void arch_visit(const char *key, const char *value, int is_int, int is_float, void *ctx) {
    ArchVisit *a = ctx;
    (void)is_int, (void)is_float;
    if (!strcmp(key, a->key)) snprintf(a->out, RS_ARCH_LEN, "%s", value);
}

/* See runstats.h. */
void rs_arch_value(const Config *cfg, int k, char *out) {
    out[0] = '\0';
    if (k < 0 || k >= RS_N_ARCH) return;
    ArchVisit a = {RS_ARCH_KEY[k], out};
    config_visit(cfg, arch_visit, &a);
}

/* The window values of the L layers' windows win[L] into v (rs_arch_values). */
static void layer_window_values(const int *win, int L, char v[][RS_ARCH_LEN]) {
    int k = 0, W = 0, differ = 0, alternate = 1;
    for (int l = 0; l < L; l++) {
        if (win[l] > 0) differ |= k && win[l] != W, k++;
        if (win[l] > W) W = win[l];
    }
    for (int l = 0; l < L; l++) alternate &= win[l] == (l % 2 ? 0 : W);
    Config c; /* a pattern a Config states: as rs_arch_value writes it */
    config_defaults(&c);
    if (k == 0 || (!differ && (k == L || (alternate && L > 1)))) {
        c.window = W;
        if (k > 0 && k < L) c.window_layers = WINLAYERS_ALTERNATE;
        rs_arch_value(&c, RS_ARCH_WINDOW, v[RS_ARCH_WINDOW]);
        rs_arch_value(&c, RS_ARCH_WINDOW_LAYERS, v[RS_ARCH_WINDOW_LAYERS]);
        return;
    }
    char t[64]; /* the longest is 2 + 3 * 11 + 5 characters */
    snprintf(t, sizeof t, "%s%d on %d/%d", differ ? "<=" : "", W, k, L);
    snprintf(v[RS_ARCH_WINDOW], RS_ARCH_LEN, "%.*s", RS_ARCH_LEN - 1, t);
    snprintf(v[RS_ARCH_WINDOW_LAYERS], RS_ARCH_LEN, "per-layer");
}

/* See runstats.h. */
void rs_arch_values(RunReader *r, char v[][RS_ARCH_LEN]) {
    Config cfg;
    rs_arch_config(r, &cfg);
    for (int k = 0; k < RS_N_ARCH; k++) rs_arch_value(&cfg, k, v[k]);
    int *win, L;
    if (runread_layer_window(r, &win, &L, NULL, 0) != 0) return;
    if (L > 0) layer_window_values(win, L, v);
    free(win);
}

/* See runstats.h: the value config_defaults gives. */
int rs_arch_is_paper(int k, const char *v) {
    Config d;
    char dv[RS_ARCH_LEN];
    config_defaults(&d);
    rs_arch_value(&d, k, dv);
    return !strcmp(dv, v);
}

/* See runstats.h. */
void rs_arch_effective(const char v[][RS_ARCH_LEN], int T, char out[][RS_ARCH_LEN]) {
    for (int k = 0; k < RS_N_ARCH; k++) snprintf(out[k], RS_ARCH_LEN, "%s", v[k]);
    char *end;
    const char *w = v[RS_ARCH_WINDOW]; /* "<=W on k/L": windows that differ, W the largest, so
                                          a smaller one may still slide at T: never full */
    const char *num = w;
    long W = strtol(num, &end, 10);
    int numeric = end != num && (!*end || !strncmp(end, " on ", 4));
    if (numeric && (W <= 0 || (T >= 1 && W >= T))) snprintf(out[RS_ARCH_WINDOW], RS_ARCH_LEN, "0");
    if (strcmp(out[RS_ARCH_WINDOW], "0")) return;
    Config d;
    config_defaults(&d);
    rs_arch_value(&d, RS_ARCH_WINDOW_LAYERS, out[RS_ARCH_WINDOW_LAYERS]);
}

/* See runstats.h. */
void rs_arch_note(const char v[][RS_ARCH_LEN], int T, char *out, size_t n) {
    char e[RS_N_ARCH][RS_ARCH_LEN];
    rs_arch_effective(v, T, e);
    size_t at = 0;
    out[0] = '\0';
    for (int k = 0; k < RS_N_ARCH && at < n; k++)
        if (!rs_arch_is_paper(k, e[k]))
            at +=
                (size_t)snprintf(out + at, n - at, "%s%s %s", at ? ", " : "", RS_ARCH_KEY[k], e[k]);
}

/* See runstats.h. */
int rs_arch_paper_at(const char v[][RS_ARCH_LEN], int T) {
    char note[RS_N_ARCH * 2 * RS_ARCH_LEN];
    rs_arch_note(v, T, note, sizeof note);
    return !*note;
}

/* See runstats.h: the keys config_max_len reads, each where the run file
 * has it. */
int rs_train_len(RunReader *r) {
    double T, share, ext;
    if (runread_config_double(r, RS_CFG_SEQ_LEN, &T, NULL, 0) != 0 || !(T >= 1 && T <= 1e9))
        return 0;
    Config c = {.seq_len = (int)T};
    if (runread_config_double(r, "extend_share", &share, NULL, 0) == 0 &&
        runread_config_double(r, "extend_seq_len", &ext, NULL, 0) == 0 && ext >= 0 && ext <= 1e9)
        c.extend_share = (float)share, c.extend_seq_len = (int)ext;
    return config_max_len(&c);
}

/* See runstats.h: a table that does not cover l (another shape) reads
 * as absent. */
int rs_layer_window(RunReader *r, const Config *cfg, int l) {
    int *win, n, W = config_layer_window(cfg, l);
    if (r && runread_layer_window(r, &win, &n, NULL, 0) == 0) {
        if (l >= 0 && l < n) W = win[l];
        free(win);
    }
    return W;
}

/* See runstats.h. */
int *rs_layer_windows(RunReader *r, const Config *cfg, int L) {
    int *win = malloc((size_t)(L > 0 ? L : 1) * sizeof *win);
    for (int l = 0; win && l < L; l++) win[l] = rs_layer_window(r, cfg, l);
    return win;
}

/* See runstats.h. */
int rs_uniform_slots(RunReader *r, const ProbeRecord *p, int l) {
    static const char *const SLOT_KEYS[] = {"sink_token", "kv_bias", "normaliser"};
    if (!p->attention_slot) return 0; /* no slot's share kept apart */
    const int s = runread_layer_slots(p, l);
    if (s >= 0) return uniform_slots(s, p->proxy); /* as the writer recorded */
    /* a file written before probes recorded their slots: the run's /config */
    Config c;
    config_defaults(&c);
    read_keys(r, &c, SLOT_KEYS, 3);
    const int n = config_attention_slots(&c);
    return uniform_slots(n > 0 ? n : 1, p->proxy); /* none in /config: a checkpoint's sink logits */
}

/* See runstats.h. */
int *rs_uniform_layer_slots(RunReader *r, const ProbeRecord *p) {
    int *slots = malloc((size_t)(p->L > 0 ? p->L : 1) * sizeof *slots);
    for (int l = 0; slots && l < p->L; l++) slots[l] = rs_uniform_slots(r, p, l);
    return slots;
}

/* Layer l's reference f at length T under its window and its slots, or
 * for l < 0 the mean over p's layers, each weighted by its present heads
 * (metrics.h uniform_*_layers). */
static double layer_reference(double (*f)(const int *, const int *, const int *, int, int),
                              RunReader *r, const Config *cfg, const ProbeRecord *p, int T, int l) {
    if (l >= 0) {
        const int W = rs_layer_window(r, cfg, l), s = rs_uniform_slots(r, p, l);
        return f(&W, &s, NULL, 1, T);
    }
    int *win = rs_layer_windows(r, cfg, p->L), *slots = rs_uniform_layer_slots(r, p);
    double u = win && slots ? f(win, slots, p->layer_heads, p->L, T) : NAN;
    free(win), free(slots);
    return u;
}

/* See runstats.h. */
double rs_uniform_share(RunReader *r, const Config *cfg, const ProbeRecord *p, int l) {
    return layer_reference(uniform_share_layers, r, cfg, p, p->T, l);
}

/* See runstats.h. */
double rs_uniform_alpha0(RunReader *r, const Config *cfg, const ProbeRecord *p, int len, int l) {
    return layer_reference(uniform_alpha0_layers, r, cfg, p, len, l);
}

/* See runstats.h. */
int rs_run_spikes(RunReader *r, const RunTrain *t, long long *idx, int max) {
    Config d;
    config_defaults(&d);
    double warm = d.warmup, factor = d.spike_factor;
    runread_config_double(r, RS_CFG_WARMUP, &warm, NULL, 0);
    runread_config_double(r, RS_CFG_SPIKE_FACTOR, &factor, NULL, 0);
    return count_spikes(t->loss, t->step, t->n, (long long)warm, SPIKE_WINDOW, factor, idx, max);
}
