/* cmd_probe.c: `gatelab probe RUN.h5 --text TEXT` (or --tokens ID,...):
 * the user's own prompt through the run's model (its final weights, or an
 * inspected run's checkpoint: forward_open.h; prompt.h), every probe
 * measure of it printed (per layer: first-token share, sink rate, gates),
 * stored under /prompt/NAME in the run file (runfile_write_prompt), and
 * its attention maps as a heatmap whose axes are the tokens. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_json.h"
#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "figlabel.h"
#include "figstyle.h"
#include "forward_open.h"
#include "heatmap.h"
#include "prompt.h"
#include "runfile.h"
#include "runlock.h"
#include "runstats.h"

#define PROBE_ALL_HEADS_MAX 16 /* up to this many layer x head panels: every head */

typedef struct {
    const char *run, *text, *tokens, *name, *out, *model;
    int json, force, nowrite, nofig, log_scale, threads;
    int layer, head; /* -1: all */
} ProbeArgs;         /* threads 0: the online CPUs */
static const ProbeArgs probe_defaults = {.layer = -1, .head = -1};

/* ---- the figure ---- */

/* Columns of a grid of n panels: all of them up to 8, else 4, 3 or 2
 * when that divides n, else one. */
static int grid_cols(int n) {
    if (n <= 8) return n;
    for (int c = 4; c >= 2; c--)
        if (n % c == 0) return c;
    return 1;
}

/* The maps to draw: every head (few), one head's or one layer's, or each
 * layer's mean over heads; into pan (and the means into *mean). */
static int figure_panels(const ProbeRecord *p, const ProbeArgs *a, HeatPanel *pan,
                         char (*titles)[64], float **mean, int *rows, int *cols) {
    const int L = p->L, H = p->H, T = p->M;
    const size_t TT = (size_t)T * T;
    int n = 0;
    *mean = NULL;
    if (a->layer < 0 && a->head < 0 && L * H > PROBE_ALL_HEADS_MAX) {
        if (!(*mean = calloc((size_t)L * TT, sizeof **mean))) return -1;
        for (int l = 0; l < L; l++) {
            float *m = *mean + (size_t)l * TT;
            const int Hl = runread_layer_heads(p, l); /* the layer's own heads */
            for (int h = 0; h < Hl; h++) {
                const float *A = p->attention + ((size_t)l * H + h) * TT;
                for (size_t i = 0; i < TT; i++) m[i] += A[i] / (float)Hl;
            }
            snprintf(titles[n], 64, "L%d mean of %d heads", l, Hl);
            pan[n++] = (HeatPanel){m, T, titles[n - 1], 0};
        }
        *cols = grid_cols(L), *rows = L / *cols;
        return n;
    }
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            if ((a->layer >= 0 && l != a->layer) || (a->head >= 0 && h != a->head)) continue;
            const int absent = h >= runread_layer_heads(p, l); /* blank, titled so */
            snprintf(titles[n], 64, "L%d H%d%s", l, h, absent ? " absent" : "");
            pan[n] = (HeatPanel){absent ? NULL : p->attention + ((size_t)l * H + h) * TT, T,
                                 titles[n], 0};
            n++;
        }
    if (a->layer < 0 && a->head < 0) *rows = L, *cols = H;
    else *cols = grid_cols(n), *rows = n / *cols;
    return n;
}

static int write_figure(const char *out, RunReader *r, const ProbeRecord *p, const ProbeArgs *a,
                        const char *name, const char *const *labels) {
    int n = p->L * p->H, rows = 0, cols = 0;
    HeatPanel *pan = calloc((size_t)n, sizeof *pan);
    char(*titles)[64] = calloc((size_t)n, sizeof *titles);
    float *mean = NULL;
    int k = pan && titles ? figure_panels(p, a, pan, titles, &mean, &rows, &cols) : -1;
    if (k < 0) {
        free(pan), free(titles);
        fprintf(stderr, "gatelab probe: out of memory for the figure\n");
        return 1;
    }
    Config cfg;
    rs_arch_config(r, &cfg);
    for (int i = 0; i < k; i++) {
        int l = 0;
        sscanf(pan[i].title, "L%d", &l);
        pan[i].window = rs_layer_window(r, &cfg, l);
    }
    char title[600], run[200];
    fig_run_label(r, run, sizeof run);
    snprintf(title, sizeof title, "%s, prompt %s (%d tokens), %s%s", run, name, p->T,
             fig_map_kind(p), a->log_scale ? ", log10" : "");
    HeatmapStyle st = {a->log_scale, 0, 0.0f, 0.0f, 1, title, 1, labels};
    char err[1024];
    int rc = heatmap_write(out, pan, rows, cols, &st, err, sizeof err);
    if (rc < 0) fprintf(stderr, "gatelab probe: %s\n", err);
    else if (!a->json) printf("wrote %s (%d x %d panels)\n", out, rows, cols);
    free(pan), free(titles), free(mean);
    return rc < 0 ? 1 : 0;
}

/* ---- the numbers ---- */

/* Sink rate of layer l: the share of its heads (runread_layer_heads)
 * whose alpha_0 > SINK_EPS. */
static double layer_sink_rate(const ProbeRecord *p, int l) {
    int k = 0;
    const int Hl = runread_layer_heads(p, l);
    for (int h = 0; h < Hl; h++) k += rs_head_alpha0(p, l, h, p->T) > SINK_EPS;
    return (double)k / Hl;
}

/* Mean gate score at position t of layer l (over the layer's channels,
 * runread_layer_channels; the sampled sequence is the prompt), NaN without the
 * scores. */
static double gate_at(const ProbeRecord *p, int l, int t) {
    if (!p->has_gate || !p->gate_sample || p->gate_sample_n < 1 || p->gate_channels < 1) return NAN;
    const int C = p->gate_channels, Cl = runread_layer_channels(p, l);
    const float *g = p->gate_sample + (((size_t)l * p->gate_sample_n) * p->T + t) * C;
    double s = 0;
    for (int c = 0; c < Cl; c++) s += g[c];
    return s / Cl;
}

static void print_text(const char *run, const char *name, const ProbeArgs *a,
                       const PromptResult *res, const int *ids, char **labels, int stored) {
    const ProbeRecord *p = &res->probe;
    printf("%s  prompt %s: %d tokens (%s)%s\n", run, name, p->T,
           a->text ? "text through the run's tokenizer" : "token ids as given",
           stored ? "" : ", not stored");
    printf("tokens:");
    for (int t = 0; t < p->T; t++) printf(" %s", labels[t]);
    printf("\nids:   ");
    for (int t = 0; t < p->T; t++) printf(" %d", ids[t]);
    printf("\nloss %.4f over %lld predictions\n", res->loss, res->loss_n);
    printf("\n%-6s %11s %10s %11s", "layer", "first-share", "sink-rate", "max|h|");
    if (p->has_gate) printf(" %10s %10s %10s %10s", "gate-mean", "gate<0.1", "gate@0", "gate@t>0");
    printf("\n");
    for (int l = 0; l < p->L; l++) {
        printf("%-6d %11.4f %10.2f %11.3f", l, rs_share(p, l), layer_sink_rate(p, l),
               p->h_max ? p->h_max[l] : NAN);
        if (p->has_gate) {
            double g0 = gate_at(p, l, 0), gr = 0;
            for (int t = 1; t < p->T; t++) gr += gate_at(p, l, t) / (p->T - 1);
            printf(" %10.4f %10.4f %10.4f %10.4f", rs_gate_mean(p, l), rs_gate_below(p, l, 1), g0,
                   gr);
        }
        printf("\n");
    }
    printf("all    %11.4f %10.2f %11.3f\n", rs_share(p, -1), rs_sink_rate(p, SINK_EPS, p->T),
           rs_m_act(p));
    printf("first-share: mean over heads and queries t >= 1 of A[t, 0]; sink-rate: heads with "
           "alpha_0 > %g\n",
           SINK_EPS);
    if (res->over_train)
        printf("note: %d tokens is past the run's training length; positions beyond it "
               "extrapolate\n",
               p->T);
}

static int print_json(const char *run, const char *name, const ProbeArgs *a,
                      const PromptResult *res, const int *ids, char **labels, char **pieces,
                      int stored, const char *figure) {
    const ProbeRecord *p = &res->probe;
    const int L = p->L, H = p->H, T = p->T;
    json_t *o = cj_set(json_object(), "run", cj_str(run));
    cj_set(o, "name", cj_str(name));
    cj_set(o, "group", stored ? json_sprintf("/%s/%s", RS_G_PROMPT, name) : json_null());
    cj_set(o, "input", cj_str(a->text ? RS_PM_INPUT_TEXT : RS_PM_INPUT_TOKENS));
    cj_set(o, "text", a->text ? cj_str(a->text) : json_null());
    cj_set(o, "T", json_integer(T));
    cj_set(o, "step", json_integer(p->step));
    json_t *ti = json_array(), *tl = json_array(), *tp = json_array();
    for (int t = 0; t < T; t++) {
        json_array_append_new(ti, json_integer(ids[t]));
        json_array_append_new(tl, cj_str(labels[t]));
        json_array_append_new(tp, pieces[t] ? cj_str(pieces[t]) : json_null());
    }
    cj_set(o, "tokens", ti), cj_set(o, "labels", tl), cj_set(o, "pieces", tp);
    cj_set(o, "loss", cj_num(res->loss));
    cj_set(o, "loss_n", json_integer(res->loss_n));
    cj_set(o, "first_share", cj_num(rs_share(p, -1)));
    cj_set(o, "sink_rate", cj_num(rs_sink_rate(p, SINK_EPS, T)));
    cj_set(o, "sink_eps", cj_num(SINK_EPS));
    cj_set(o, "m_act", cj_num(rs_m_act(p)));
    cj_set(o, "gated", json_boolean(p->has_gate));
    cj_set(o, "past_train_len", json_boolean(res->over_train));
    json_t *ls = json_array(), *maps = json_array();
    for (int l = 0; l < L; l++) {
        json_t *e = cj_set(json_object(), "layer", json_integer(l));
        cj_set(e, "first_share", cj_num(rs_share(p, l)));
        cj_set(e, "sink_rate", cj_num(layer_sink_rate(p, l)));
        cj_set(e, "h_max", cj_num(p->h_max ? p->h_max[l] : NAN));
        json_t *hs = json_array(), *alpha = json_array(), *lm = json_array();
        for (int h = 0; h < runread_layer_heads(p, l); h++) { /* the layer's own heads */
            json_array_append_new(hs, cj_num(rs_head_share(p, l, h)));
            json_array_append_new(alpha, cj_num(rs_head_alpha0(p, l, h, T)));
            json_t *hm = json_array();
            const float *A = p->attention + ((size_t)l * H + h) * T * T;
            for (int q = 0; q < T; q++) {
                json_t *row = json_array();
                for (int k = 0; k <= q; k++)
                    json_array_append_new(row, cj_num(A[(size_t)q * T + k]));
                json_array_append_new(hm, row);
            }
            json_array_append_new(lm, hm);
        }
        cj_set(e, "head_first_share", hs), cj_set(e, "head_alpha0", alpha);
        if (p->has_gate) {
            cj_set(e, "gate_mean", cj_num(rs_gate_mean(p, l)));
            cj_set(e, "gate_below_0.1", cj_num(rs_gate_below(p, l, 1)));
            json_t *gp = json_array();
            for (int t = 0; t < T; t++) json_array_append_new(gp, cj_num(gate_at(p, l, t)));
            cj_set(e, "gate_by_position", gp);
        }
        json_array_append_new(ls, e);
        json_array_append_new(maps, lm);
    }
    cj_set(o, "layers", ls);
    cj_set(o, "attention", maps); /* [layer][head][query][key <= query] */
    cj_set(o, "figure", figure ? cj_str(figure) : json_null());
    return cj_print("probe", o);
}

/* ---- the command ---- */

static const OptRow probe_rows[] = {
    {'x', "text", OPT_STR, "TEXT", 0, 0, NULL,
     "the prompt, through the run's own tokenizer (bytes\n"
     "for a byte-level run, tokenizer.json for a checkpoint;\n"
     "the BOS the run's windows begin with first)",
     0, 0, &probe_defaults.text},
    {'k', "tokens", OPT_STR, "ID,ID,...", 0, 0, NULL,
     "the prompt as token ids, as given (no BOS added)", 0, 0, &probe_defaults.tokens},
    {'n', "name", OPT_STR, "NAME", 0, 0, "made from the text", "store it as /prompt/NAME", 0, 0,
     &probe_defaults.name},
    {'f', "force", OPT_FLAG, NULL, 0, 0, NULL, "replace an existing /prompt/NAME and its figure", 0,
     0, &probe_defaults.force},
    {'o', "out", OPT_STR, "FILE", 0, 0, "RUN.prompt-NAME.png",
     "the heatmap: STEM.png, .svg or .pdf (a new path or\na figure of that format)", 0, 0,
     &probe_defaults.out},
    {OPT_LONG, "no-figure", OPT_FLAG, NULL, 0, 0, NULL, "write no heatmap", 0, 0,
     &probe_defaults.nofig},
    {'l', "layer", OPT_INT, "L", 0, 1 << 20, OPT_NO_DEF, "figure: only layer L's heads", 0, 0,
     &probe_defaults.layer},
    {'H', "head", OPT_INT, "H", 0, 1 << 20, OPT_NO_DEF, "figure: only head H of each layer", 0, 0,
     &probe_defaults.head},
    {'g', "log", OPT_FLAG, NULL, 0, 0, NULL, "figure: colour by log10(a + 1e-4)", 0, 0,
     &probe_defaults.log_scale},
    {'j', "json", OPT_FLAG, NULL, 0, 0, NULL,
     "print JSON (tokens, labels, per-layer measures,\nevery map) instead of a table", 0, 0,
     &probe_defaults.json},
    {'w', "no-write", OPT_FLAG, NULL, 0, 0, NULL, "do not store the result in RUN.h5", 0, 0,
     &probe_defaults.nowrite},
    {'m', "model", OPT_STR, "DIR", 0, 0, "the one it records", "checkpoint of an inspected run", 0,
     0, &probe_defaults.model},
    {'t', "threads", OPT_INT, "N", 1, 64, "the online CPUs", "threads for a checkpoint", 0, 0,
     &probe_defaults.threads},
    FIGSTYLE_OPT_ROWS,
    {0}};
const OptTable probe_options = {
    .cmd = "probe",
    .operands = "RUN.h5 (--text TEXT | --tokens ID,...) [options]",
    .about = "Run a prompt of your own through a finished run's model (its final\n"
             "weights, or an inspected run's checkpoint), with the probe code of the\n"
             "run's own probes: print each layer's first-token share, sink rate and\n"
             "gate scores, store the maps and every probe measure under /prompt/NAME\n"
             "in RUN.h5 with the text, and draw the maps with the tokens on the axes\n"
             "(every head when there are at most 16, else each layer's mean over\n"
             "heads; --layer, --head pick).\n",
    .footer = "A token on an axis is cut to 8 characters: a space shows as an open box\n"
              "(U+2423), control bytes and bytes that are not UTF-8 as \\n, \\t, \\xNN.\n"
              "Definitions: docs/metrics.md. Exit codes: 0 ok, 1 failure, 2 bad input.\n",
    .rows = probe_rows,
    OPT_DEFAULTS(probe_defaults),
};

static int parse_args(int argc, char **argv, ProbeArgs *a, int *done) {
    FigStyle fs = {0};
    OptParser op;
    *done = 0;
    *a = probe_defaults;
    opt_init(&op, &probe_options, argc, argv);
    for (int c; (c = opt_parse(&op, a)) != OPT_END;) {
        if (c == OPT_HELP) *done = 1;
        if (c < 0) return c == OPT_HELP ? 0 : 2;
        if (figstyle_option(&fs, "probe", c, op.str) != 0) return 2;
    }
    if (!a->threads) a->threads = cu_online_cpus();
    figstyle_set(&fs);
    if (op.optind != argc - 1) {
        fprintf(stderr, "gatelab probe: want one RUN.h5 (gatelab probe --help)\n");
        return 2;
    }
    a->run = argv[op.optind];
    if (!a->text == !a->tokens) {
        fprintf(stderr, "gatelab probe: give the prompt as --text TEXT or --tokens ID,ID,... "
                        "(one of them)\n");
        return 2;
    }
    if (a->text && !*a->text) {
        fprintf(stderr, "gatelab probe: --text is empty; give a prompt\n");
        return 2;
    }
    if (a->text && strlen(a->text) > PROMPT_TEXT_MAX) {
        fprintf(stderr, "gatelab probe: --text is longer than %d bytes\n", PROMPT_TEXT_MAX);
        return 2;
    }
    if (a->nofig && (a->out || a->layer >= 0 || a->head >= 0 || a->log_scale)) {
        fprintf(stderr, "gatelab probe: --no-figure with --%s, which only the figure takes\n",
                a->out          ? "out"
                : a->layer >= 0 ? "layer"
                : a->head >= 0  ? "head"
                                : "log");
        return 2;
    }
    char err[256];
    if (a->name && prompt_check_name(a->name, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab probe: %s\n", err);
        return 2;
    }
    return 0;
}

/* The run's last probe step (the record's step), and whether
 * /prompt/name is there already. */
static int read_run(const char *run, const char *name, long long *step, int *exists) {
    char err[1024];
    RunReader *r = runread_open(run, err, sizeof err);
    if (!r) {
        fprintf(stderr, "gatelab probe: %s\n", err);
        return -1;
    }
    long long *steps = NULL;
    int n = 0;
    *step = runread_probe_steps(r, &steps, &n, NULL, 0) == 0 && n > 0 ? steps[n - 1] : 0;
    free(steps);
    *exists = runread_has_prompt(r, name);
    runread_close(r);
    return 0;
}

/* The labels and pieces of ids[T] (malloc'd strings). */
static int make_labels(Forward *f, const int *ids, int T, char ***labels, char ***pieces) {
    *labels = calloc((size_t)T, sizeof **labels);
    *pieces = calloc((size_t)T, sizeof **pieces);
    if (!*labels || !*pieces) return -1;
    for (int t = 0; t < T; t++) {
        char full[4 * PROMPT_LABEL_MAX + 16], cut[64];
        prompt_label(f, ids[t], PROMPT_LABEL_WIDTH, cut, sizeof cut);
        prompt_label(f, ids[t], 0, full, sizeof full);
        (*labels)[t] = strdup(cut);
        (*pieces)[t] = strdup(full);
        if (!(*labels)[t] || !(*pieces)[t]) return -1;
    }
    return 0;
}

static void free_strs(char **s, int n) {
    for (int i = 0; s && i < n; i++) free(s[i]);
    free(s);
}

/* The figure's path: --out, or the run's path with .h5 replaced by
 * .prompt-NAME.png. */
static void figure_path(const ProbeArgs *a, const char *name, char *out, size_t len) {
    if (a->out) {
        snprintf(out, len, "%s", a->out);
        return;
    }
    size_t n = strlen(a->run);
    if (n > 3 && !strcmp(a->run + n - 3, ".h5")) n -= 3;
    snprintf(out, len, "%.*s.prompt-%s.png", (int)n, a->run, name);
}

/* The figure is ours to write: a new path, or with --force (or --out,
 * given outright) a figure of that format. */
static int check_figure(const ProbeArgs *a, const char *path) {
    char why[1024];
    FILE *fp = a->out || a->force ? NULL : fopen(path, "rb");
    if (fp) {
        fclose(fp);
        fprintf(stderr, "gatelab probe: %s exists; --force replaces it, --out names another\n",
                path);
        return -1;
    }
    if (heatmap_check_out(path, why, sizeof why) < 0) {
        fprintf(stderr, "gatelab probe: %s\n", why);
        return -1;
    }
    return 0;
}

static int run_probe(ProbeArgs *a, Forward *f, const int *ids, int T, const char *name,
                     long long step, const char *fig) {
    char err[1024];
    PromptResult res;
    if (a->layer >= f->info.L || a->head >= f->info.H) {
        fprintf(stderr, "gatelab probe: %s has %d layers x %d heads; --%s %d is out of range\n",
                a->run, f->info.L, f->info.H, a->layer >= f->info.L ? "layer" : "head",
                a->layer >= f->info.L ? a->layer : a->head);
        return 2;
    }
    if (prompt_run(f, ids, T, step, a->text ? "--text" : "--tokens", &res, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab probe: %s\n", err);
        prompt_free(&res);
        return 2;
    }
    char **labels = NULL, **pieces = NULL;
    int rc = make_labels(f, ids, T, &labels, &pieces) == 0 ? 0 : 1;
    if (rc) fprintf(stderr, "gatelab probe: out of memory for the labels\n");
    if (rc == 0 && !a->nowrite) {
        PromptOut po = {name, &res.probe, a->text, res.loss, res.loss_n, a->force};
        if (runfile_write_prompt(a->run, &po, err, sizeof err) != 0) {
            fprintf(stderr, "gatelab probe: %s: %s\n", a->run, err);
            rc = 1;
        }
    }
    if (rc == 0 && !a->json) print_text(a->run, name, a, &res, ids, labels, !a->nowrite);
    if (rc == 0 && fig) {
        RunReader *r = runread_open(a->run, err, sizeof err);
        if (!r) fprintf(stderr, "gatelab probe: %s\n", err), rc = 1;
        else {
            rc = write_figure(fig, r, &res.probe, a, name, (const char *const *)labels);
            runread_close(r);
        }
    }
    if (rc == 0 && a->json &&
        print_json(a->run, name, a, &res, ids, labels, pieces, !a->nowrite, fig) != 0)
        rc = 1;
    free_strs(labels, T), free_strs(pieces, T);
    prompt_free(&res);
    return rc;
}

int cmd_probe(int argc, char **argv) {
    ProbeArgs a;
    int done, rc = parse_args(argc, argv, &a, &done);
    if (rc != 0 || done) return rc;
    RunLock lock = {.fd = -1};
    char err[1024], name[PROMPT_NAME_MAX], fig[4200];
    if (!a.nowrite && cu_check_out("probe", a.run, OUT_RUNFILE) < 0) return 2;
    if (!a.nowrite && runlock_acquire(&lock, a.run, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab probe: %s\n", err);
        return lock.refused ? 2 : 1;
    }
    ForwardOpen fo = {.model = a.model, .threads = a.threads};
    Forward *f = forward_open(a.run, &fo, err, sizeof err);
    int *ids = NULL, T = 0;
    if (!f) {
        fprintf(stderr, "gatelab probe: %s\n", err);
        rc = 2;
    } else if (a.text) {
        if (!f->ops->encode) {
            fprintf(stderr, "gatelab probe: %s: no text tokenizer; give token ids with --tokens\n",
                    a.run);
            rc = 2;
        } else if (f->ops->encode(f, a.text, strlen(a.text), &ids, &T, err, sizeof err) != 0) {
            fprintf(stderr, "gatelab probe: %s\n", err);
            rc = 2;
        }
    } else if (prompt_parse_ids(a.tokens, &ids, &T, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab probe: %s\n", err);
        rc = 2;
    }
    if (rc == 0) {
        if (a.name) snprintf(name, sizeof name, "%s", a.name);
        else prompt_default_name(a.text, ids, T, name, sizeof name);
        long long step = 0;
        int exists = 0;
        if (read_run(a.run, name, &step, &exists) != 0) rc = 2;
        else if (exists && !a.force && !a.nowrite) {
            fprintf(stderr,
                    "gatelab probe: %s: /%s/%s exists; --force replaces it, --name "
                    "stores it under another name\n",
                    a.run, RS_G_PROMPT, name);
            rc = 2;
        }
        if (rc == 0 && !a.nofig) figure_path(&a, name, fig, sizeof fig);
        if (rc == 0 && !a.nofig && check_figure(&a, fig) != 0) rc = 2;
        if (rc == 0) rc = run_probe(&a, f, ids, T, name, step, a.nofig ? NULL : fig);
    }
    free(ids);
    forward_close(f);
    runlock_release(&lock);
    return rc;
}
