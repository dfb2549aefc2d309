/* report_rows.c: one run file -> one Row of headline numbers
 * (runstats.h, the same code the text tools print); the directory scan;
 * rows grouped by run name (runname.h) and each group's ΔPPL against the
 * matching baseline group. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"    /* variant_key */
#include "fakequant.h" /* fq_mode_name, fq_destroyed */
#include "metric_table.h"
#include "heatmap.h"
#include "metrics.h"
#include "plot.h"
#include "report.h"
#include "report_priv.h"
#include "runfile_read.h"
#include "runschema.h"
#include "runname.h"
#include "figlabel.h" /* fig_is_pretrained */
#include "flops.h"
#include "massive.h"
#include "runstats.h"
#include "sinkstats.h"
#include "util.h"

const char *const CFG_KEYS[N_CFG] = {"n_layers", "d_model", "n_heads", "seq_len",     "batch_size",
                                     "steps",    "lr",      "warmup",  "spike_factor"};

/* ---- one run -> one Row ---- */

static double cfg_or(RunReader *r, const char *key, double dflt) {
    double v;
    return runread_config_double(r, key, &v, NULL, 0) == 0 ? v : dflt;
}

static double summ_or(RunReader *r, const char *key, double dflt) {
    double v;
    return runread_summary(r, key, &v, NULL, 0) == 0 ? v : dflt;
}

static void row_series(RunReader *r, Row *w) {
    RunTrain t;
    if (runread_train(r, &t, NULL, 0) == 0) {
        if (t.n && isnan(w->steps)) w->steps = (double)t.step[t.n - 1];
        if (t.n) w->loss0 = t.loss[0];
        long long idx[MAX_SPIKE_STEPS];
        int n = rs_run_spikes(r, &t, idx, MAX_SPIKE_STEPS);
        if (t.n) w->spikes = n; /* no training rows: no spike count */
        for (int i = 0; i < n && i < MAX_SPIKE_STEPS; i++) w->spike_steps[i] = t.step[idx[i]];
        runread_train_free(&t);
    }
    RunEval e;
    if (runread_eval(r, &e, NULL, 0) == 0) {
        if (e.n) {
            if (isnan(w->val_loss)) w->val_loss = e.val_loss[e.n - 1];
            w->bpb = e.val_bpb[e.n - 1];
        }
        runread_eval_free(&e);
    }
}

/* The last probe of r into w; its uniform references are those of the
 * run's own attention pattern cfg (rs_arch_config, rs_uniform_share). */
static void row_probe(RunReader *r, Row *w, const Config *cfg) {
    ProbeRecord p;
    long long *steps = NULL;
    int ns = 0;
    if (runread_probe_steps(r, &steps, &ns, w->probe_err, sizeof w->probe_err) < 0) return;
    free(steps);
    if (ns == 0) return; /* no probes yet: blank, and not an error */
    if (runread_probe(r, -1, &p, w->probe_err, sizeof w->probe_err) < 0) return;
    w->has_probe = 1;
    w->probe_T = p.T;
    w->probe_N = p.N;
    w->proxy = p.proxy;
    snprintf(w->normaliser, sizeof w->normaliser, "%s", p.normaliser);
    w->f_attn = rs_share(&p, -1);
    w->f_attn_uniform = rs_uniform_share(r, cfg, &p, -1);
    w->sink_formed = sink_formed(w->f_attn, w->f_attn_uniform);
    w->max_logit = rs_max_logit(&p);
    w->slot = rs_slot_share(&p, -1);
    rs_mass(&p, &w->empty, &w->f_attn_ne);
    if (p.has_gate) {
        w->gate_mean = rs_gate_mean(&p, -1);
        w->gate_unbounded = !p.gate_bounded;
        if (isfinite(w->gate_mean)) w->gate_bounded = p.gate_bounded;
    }
    /* the metrics the table says how to get, at the table's thresholds */
    for (int k = 0; metric_at(k); k++) {
        const MetricCol *m = metric_at(k);
        double *v = (double *)((char *)w + m->off);
        if (m->src == MS_SINK_RATE) *v = rs_sink_rate(&p, m->threshold, SINK_LEN);
        /* below a threshold is sparsity only for scores in [0,1] */
        else if (m->src == MS_GATE_BELOW && p.has_gate && p.gate_bounded)
            for (int t = 0; t < RS_GATE_NBELOW; t++)
                if (RS_GATE_BELOW_THR[t] == m->threshold) *v = rs_gate_below(&p, -1, t);
    }
    w->m_act = rs_m_act(&p);
    w->kurt = rs_kurtosis(&p);
    w->top1_med = rs_top1_median(&p);
    w->bos_ratio = rs_bos_ratio(&p);
    w->massive_sun = massive_peak(&p, &w->top1_peak, &w->top1_peak_ratio);
    ss_lh_first_rest(&p, p.key_norm, &w->knorm_first, &w->knorm_rest);
    ss_lh_first_rest(&p, p.value_norm, &w->vnorm_first, &w->vnorm_rest);
    w->dormant = ss_dormant_count(&p, DORMANT_BY_SINK);
    w->dormant_norm = ss_dormant_count(&p, DORMANT_BY_NORM);
    w->secondary = ss_secondary_mean(&p);
    w->resid_sinks = ss_resid_count(&p);
    ss_gate_first_rest(&p, &w->gate_first, &w->gate_rest);
    w->knorm_ratio = ss_lh_first_over_median(&p, p.key_norm, -1);
    w->vnorm_ratio = ss_lh_first_over_median(&p, p.value_norm, -1);
    w->grad_ratio = ss_grad_first_over_median(&p);
    if (isfinite(w->gate_rest) && w->gate_rest != 0.0) w->gate_ratio = w->gate_first / w->gate_rest;
    w->dist_near = ss_distance_mass_near(&p, SS_NEAR_DIST);
    w->ov_rank = ss_ov_erank_mean(&p);
    runread_probe_free(&p);
}

/* an X of LC_MULTS and LC_DEPTHS: the value, and one to count them */
#define LIST_VALUE(i, value, unused) value,
#define LIST_ONE(i, value, unused) +1
const int LC_MULT[LC_NMULT] = {LC_MULTS(LIST_VALUE, 0)};
_Static_assert(0 LC_MULTS(LIST_ONE, 0) == LC_NMULT, "LC_NMULT counts LC_MULTS");
const double LC_DEPTH[LC_NDEPTH] = {LC_DEPTHS(LIST_VALUE, 0)};
_Static_assert(0 LC_DEPTHS(LIST_ONE, 0) == LC_NDEPTH, "LC_NDEPTH counts LC_DEPTHS");

/* The index k of LC_MULT with LC_MULT[k] * T == len; -1 when none. */
static int lc_mult_index(int len, int T) {
    for (int k = 0; T > 0 && k < LC_NMULT; k++)
        if ((long long)LC_MULT[k] * T == len) return k;
    return -1;
}

/* One /lceval result e under mode m into w: its val loss and needle
 * shares by depth, when its length is an LC_MULT multiple of the
 * training length (the first result's sets w->lc_T). */
static void row_lc_result(Row *w, int m, const RunLcEval *e) {
    if (w->lc_T < 0 && e->train_len > 0) w->lc_T = e->train_len;
    int k = e->train_len == w->lc_T ? lc_mult_index(e->len, w->lc_T) : -1;
    if (k < 0) return;
    w->lc_loss[m][k] = e->val_loss;
    for (int j = 0; j < e->n_depths; j++)
        for (int d = 0; d < LC_NDEPTH; d++)
            if (e->needle_depth[j] == LC_DEPTH[d]) w->lc_needle[m][k][d] = e->needle_acc[j];
}

/* The long-context results at the LC_MULT multiples, plain and YaRN:
 * val loss, degradation (rs_lc_degradation) and needle shares by depth;
 * and the run's RoPE as rs_rope gives it. */
static void row_lceval(RunReader *r, Row *w) {
    static const char *const mode[2] = {RS_LC_PLAIN, RS_LC_YARN};
    for (int m = 0; m < 2; m++) {
        int *lens = NULL, nl = 0;
        if (runread_lceval_lengths(r, mode[m], &lens, &nl, NULL, 0) != 0) nl = 0;
        for (int i = 0; i < nl; i++) {
            RunLcEval e;
            if (runread_lceval(r, mode[m], lens[i], &e, NULL, 0) != 0) continue;
            row_lc_result(w, m, &e);
            runread_lceval_free(&e);
        }
        free(lens);
        for (int k = 0; k < LC_NMULT; k++)
            w->lc_deg[m][k] = rs_lc_degradation(r, mode[m], LC_MULT[k]);
    }
    RsRope rope;
    if (rs_rope(r, &rope, NULL) == 0)
        w->rope_dim = rope.rope_dim, w->rope_len = rope.T, w->rope_base = rope.base;
}

/* The needle task's shares at LC_MULT, plain and YaRN, and the rows
 * behind them (-1 when lengths were scored over different rows). */
static void row_needle(RunReader *r, Row *w) {
    static const char *const mode[2] = {RS_LC_PLAIN, RS_LC_YARN};
    long long rows = 0;
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < LC_NMULT; k++) {
            long long n;
            w->needle[m][k] = rs_needle_acc(r, mode[m], LC_MULT[k], &n);
            if (n > 0 && rows == 0) rows = n;
            else if (n > 0 && n != rows) rows = -1;
        }
    w->needle_rows = rows > 0 && rows <= INT_MAX ? (int)rows : -1;
}

/* See report_priv.h. */
int q_destroyed_flag(int stored, double dloss) {
    if (stored >= 0) return stored;
    return isnan(dloss) ? -1 : fq_destroyed(dloss);
}

/* The /quant results, when the run has them; absent or malformed ones
 * stay NaN (blank). */
_Static_assert(sizeof((RunQuantMode *)0)->source == Q_SOURCE_LEN, "Row.q_source holds a source");
static void row_quant(RunReader *r, Row *w) {
    char err[512];
    RunQuant q;
    if (runread_quant(r, &q, err, sizeof err) != 0) return;
    w->q_inf_attn = q.inf_attn, w->q_inf_ffn = q.inf_ffn;
    w->q_inf_layer = q.inf_layer, w->q_kurt = q.kurtosis_max;
    w->q_keep = q.keep_first;
    for (int i = 0; i < Q_NMODES; i++) {
        RunQuantMode m;
        if (runread_quant_mode(r, fq_mode_name((FqMode)(i + 1)), &m, err, sizeof err) != 0)
            continue;
        w->q_dloss[i] = m.dloss, w->q_sink[i] = m.sink_dloss;
        w->q_destroyed[i] = q_destroyed_flag(m.destroyed, m.dloss);
        snprintf(w->q_source[i], sizeof w->q_source[i], "%s", m.source);
        w->q_source_rec[i] = m.source[0] ? m.source_recovered : NAN;
    }
}

void row_blank(Row *w) {
    metric_blank(w); /* every metric of the table unknown (metric_table.h MetricBlank) */
    w->pretrained = 0;
    w->base = -1;
    w->lc_deg[0][0] = w->lc_deg[1][0] = NAN; /* at 1x: no column, never a number */
    w->protocol_hash[0] = '\0';
    for (int i = 0; i < Q_NMODES; i++) w->q_source[i][0] = '\0';
    Config paper;
    config_defaults(&paper);
    for (int k = 0; k < RS_N_ARCH; k++) rs_arch_value(&paper, k, w->arch[k]);
}

void row_read(Row *w) {
    row_blank(w);
    run_name(w->run, sizeof w->run, w->path);
    RunReader *r = runread_open(w->path, w->err, sizeof w->err);
    if (!r) return;
    const RunMeta *m = runread_meta(r);
    w->ok = 1;
    w->pretrained = fig_is_pretrained(r);
    run_data_label(r, w->data, sizeof w->data);
    for (size_t k = 0; k < N_CFG; k++) w->cfg[k] = cfg_or(r, CFG_KEYS[k], NAN);
    Config arch;
    rs_arch_config(r, &arch);
    rs_arch_values(r, w->arch);
    table_name(w->variant, sizeof w->variant, m->variant);
    snprintf(w->status, sizeof w->status, "%s", m->status);
    w->seed = m->seed;
    w->n_params = m->n_params;
    w->n_params_added = m->n_params_added;
    w->steps = summ_or(r, RS_SUM_STEPS_DONE, NAN);
    run_train_scale(r, w->steps, &w->tokens, &w->flops);
    double fv = summ_or(r, RS_SUM_FINAL_VAL_LOSS, NAN);
    if (isfinite(fv)) w->val_loss = fv;
    w->tokens_per_sec = summ_or(r, RS_SUM_TOKENS_PER_SEC, NAN);
    w->diverged_step = (long long)summ_or(r, RS_SUM_DIVERGED_STEP, -1);
    w->task_floor = summ_or(r, RS_SUM_TASK_FLOOR, NAN);
    if (runread_protocol_string(r, RS_PR_HASH, w->protocol_hash, sizeof w->protocol_hash, NULL,
                                0) != 0)
        w->protocol_hash[0] = '\0';
    row_series(r, w);
    w->ppl = exp(w->val_loss);
    row_probe(r, w, &arch);
    row_lceval(r, w);
    row_needle(r, w);
    row_quant(r, w);
    runread_close(r);
}

/* ---- directory scan ---- */

static int ends_with(const char *s, const char *suf) {
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && !strcmp(s + n - k, suf);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* See report_priv.h (checkpoints end in .ckpt and are skipped). */
int list_runs(const char *dir, char ***out, int *n, char *err, size_t errlen) {
    *n = 0;
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d) {
        seterr(err, errlen, "%s: %s", dir, strerror(errno));
        return errno == ENOENT || errno == ENOTDIR ? REPORT_BADINPUT : -1;
    }
    char **names = NULL;
    int cap = 0, bad = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!ends_with(e->d_name, ".h5") || e->d_name[0] == '.') continue;
        if (!name_plain(e->d_name)) { /* the name rule, where names enter */
            char shown[256];
            table_name(shown, sizeof shown, e->d_name);
            seterr(err, errlen,
                   "%s/%s: a run file's name may hold only " NAME_RULE "; rename it to report it",
                   dir, shown);
            bad = 1;
            break;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **p = realloc(names, (size_t)cap * sizeof *p);
            if (!p) break;
            names = p;
        }
        if (!(names[*n] = strdup(e->d_name))) break;
        (*n)++;
    }
    closedir(d);
    if (bad) {
        for (int i = 0; i < *n; i++) free(names[i]);
        free(names);
        *n = 0;
        return REPORT_BADINPUT;
    }
    if (*n) qsort(names, (size_t)*n, sizeof *names, cmp_str);
    *out = names;
    return 0;
}

/* Group order: baseline-variant groups first, then by run name, variant
 * and data; seeds ascending within a group. */
int cmp_row(const void *a, const void *b) {
    const Row *x = a, *y = b;
    if (x->ok != y->ok) return y->ok - x->ok;
    int xb = variant_key(x->variant) == VARIANT_KEY_BASELINE,
        yb = variant_key(y->variant) == VARIANT_KEY_BASELINE;
    if (xb != yb) return yb - xb;
    int c = strcmp(x->run, y->run);
    if (!c) c = strcmp(x->variant, y->variant);
    if (!c) c = strcmp(x->data, y->data);
    if (c) return c;
    return (x->seed > y->seed) - (x->seed < y->seed);
}

int same_group(const Row *x, const Row *y) {
    return x->ok && y->ok && !strcmp(x->run, y->run) && !strcmp(x->variant, y->variant) &&
           !strcmp(x->data, y->data);
}

/* End (exclusive) of the group that starts at row a. */
int group_end(const Row *rows, int n, int a) {
    int b = a + 1;
    while (b < n && same_group(&rows[a], &rows[b])) b++;
    return b;
}

/* Equal, or both absent from the config. */
int cfg_eq(double x, double y) {
    if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
    return fabs(x - y) <= 1e-9 * fmax(fabs(x), fabs(y));
}

/* See report_priv.h. */
int rows_trained(const Row *rows, int n) {
    int k = 0;
    for (int i = 0; i < n; i++) k += rows[i].ok && !rows[i].pretrained;
    return k;
}

/* See report_priv.h. */
int row_train_len(const Row *w) {
    double T = isfinite(w->cfg[CFG_SEQ_LEN]) ? w->cfg[CFG_SEQ_LEN] : 0;
    T = fmax(T, fmax(w->rope_len, w->lc_T));
    if (T < 1 && w->pretrained) T = w->probe_T;
    return T >= 1 && T <= 1e9 ? (int)T : 0;
}

/* See report_priv.h. */
void row_arch_note(const Row *w, char *out, size_t n) {
    rs_arch_note((const char(*)[RS_ARCH_LEN])w->arch, row_train_len(w), out, n);
}

/* See report_priv.h. */
int row_paper_arch_at(const Row *w, int T) {
    return rs_arch_paper_at((const char(*)[RS_ARCH_LEN])w->arch, T > 0 ? T : row_train_len(w));
}

int row_paper_arch(const Row *w) { return row_paper_arch_at(w, 0); }

/* See report_priv.h. */
void put_other_arch(FILE *f, int other, const char *unit, const char *why_one,
                    const char *why_many) {
    if (other)
        fprintf(f,
                "\n%d %s%s of another architecture than the paper's (RoPE, full causal "
                "attention, pre-norm; see Settings) %s left out%s\n",
                other, unit, other == 1 ? "" : "s", other == 1 ? "is" : "are",
                other == 1 ? why_one : why_many);
}

/* How well baseline group starting at row bg fits group g (higher is
 * better, -1 no match): same data, seq_len, lr, steps and architecture
 * keys as they attend at the training length (row_arch_note) are required;
 * the group itself beats "baseline-<suffix>" sharing g's run-name suffix
 * (g1-elem-brown -> baseline-brown), which beats plain "baseline". */
static int base_score(const Row *bg, const Row *g, int self) {
    if (variant_key(bg->variant) != VARIANT_KEY_BASELINE || strcmp(bg->data, g->data)) return -1;
    static const int keys[] = {CFG_SEQ_LEN, CFG_LR, CFG_STEPS};
    for (int k = 0; k < 3; k++)
        if (!cfg_eq(bg->cfg[keys[k]], g->cfg[keys[k]])) return -1;
    char nb[RS_N_ARCH * 2 * RS_ARCH_LEN], ng[sizeof nb];
    row_arch_note(bg, nb, sizeof nb);
    row_arch_note(g, ng, sizeof ng);
    if (strcmp(nb, ng)) return -1;
    if (self) return 3;
    size_t nv = strlen(g->variant);
    const char *suffix =
        !strncmp(g->run, g->variant, nv) && g->run[nv] == '-' ? g->run + nv + 1 : NULL;
    if (suffix && !strncmp(bg->run, "baseline-", 9) && !strcmp(bg->run + 9, suffix)) return 2;
    return !strcmp(bg->run, variant_key_id(VARIANT_KEY_BASELINE));
}

static double group_ppl(const Row *rows, int a, int b) {
    double s = 0.0;
    int k = 0;
    for (int i = a; i < b; i++)
        if (isfinite(rows[i].ppl)) s += rows[i].ppl, k++;
    return k ? s / k : NAN;
}

/* See report_priv.h. */
void fill_dppl(Row *rows, int n) {
    for (int a = 0; a < n && rows[a].ok;) {
        int b = group_end(rows, n, a), best = -1, best_score = -1;
        for (int c = 0; c < n && rows[c].ok; c = group_end(rows, n, c)) {
            int sc = base_score(&rows[c], &rows[a], c == a);
            if (sc > best_score) best = c, best_score = sc;
        }
        double ref = best < 0 ? NAN : group_ppl(rows, best, group_end(rows, n, best));
        for (int i = a; i < b; i++) {
            rows[i].base = best;
            rows[i].dppl = rows[i].ppl - ref;
            rows[i].dppl_rel = 100.0 * (rows[i].ppl / ref - 1.0);
        }
        a = b;
    }
}
