/* cmd_eval.c: `gatelab eval`, long-context and quantized evaluation of a
 * finished run or an inspected checkpoint. The work is in lceval.c and
 * quanteval.c over the run's Forward (forward_open.h); this file parses
 * flags, prints, and stores the results under /lceval and /quant in the
 * run file (nothing else is touched). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runfile_read.h"
#include "runschema.h"
#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "metrics.h" /* SINK_EPS_TEXT */
#include "cli_json.h"
#include "forward_open.h"
#include "lceval.h"
#include "quanteval.h"
#include "quant_print.h"
#include "stop.h"
#include "runfile.h"
#include "runlock.h"

/* "256,512" or "1x,2x": multiples are resolved against the training length.
 * 0 ok; -1 not a list of lengths; -2 a length given twice (out[*n] holds it). */
static int parse_lengths(const char *spec, int T, int *out, int *n) {
    char buf[512];
    if (strlen(spec) >= sizeof buf) return -1;
    strcpy(buf, spec);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (*n == LCEVAL_MAX_LENGTHS) return -1;
        size_t k = strlen(tok);
        int mult = k > 1 && (tok[k - 1] == 'x' || tok[k - 1] == 'X');
        if (mult) tok[k - 1] = '\0';
        int v;
        if (cu_parse_int(tok, 1, 1 << 20, &v) != 0) return -1;
        if (mult && (long)v * T > (1 << 20)) return -1;
        out[*n] = mult ? v * T : v;
        for (int i = 0; i < *n; i++)
            if (out[i] == out[*n]) return -2; /* the same length twice (e.g. 1x and T) */
        (*n)++;
    }
    return *n > 0 ? 0 : -1;
}

/* How the positions were encoded in a table's header. */
static const char *positions(const ForwardInfo *info, int yarn) {
    if (yarn) return "YaRN";
    if (!strcmp(info->positions, "RoPE")) return "plain RoPE";
    if (!strcmp(info->positions, "ALiBi")) return "ALiBi";
    return !strcmp(info->positions, "learned") ? "learned positions" : "no positions";
}

static void print_table(const char *run, const ForwardInfo *info, int yarn, const LcEvalResult *r,
                        int n) {
    printf("%s  variant %s  T_train %d  %s\n", run, info->variant, info->seq_len,
           positions(info, yarn));
    printf("%8s %6s %9s %9s %8s %9s %9s\n", "length", "scale", "val_loss", "ppl", "F-Attn",
           "(uniform)", "sink_rate");
    for (int i = 0; i < n; i++)
        printf("%8d %6.2f %9.4f %9.3f %8.4f %9.4f %9.3f\n", r[i].len, r[i].yarn_scale,
               r[i].val_loss, r[i].ppl, r[i].first_share, r[i].uniform_share, r[i].sink_rate);
    if (n < 1 || !r[0].n_depths) return;
    printf("needle: exact-match share of the value (%lld rows per cell) by needle depth\n%8s",
           r[0].needle_n, "length");
    for (int d = 0; d < LCEVAL_NEEDLE_DEPTHS; d++) printf(" %7.2f", LCEVAL_NEEDLE_DEPTH[d]);
    printf("\n");
    for (int i = 0; i < n; i++) {
        printf("%8d", r[i].len);
        for (int d = 0; d < r[i].n_depths; d++) printf(" %7.3f", r[i].needle_acc[d]);
        printf("\n");
    }
}

/* One mode's results as a JSON array (NaN from a diverged run: null). */
static json_t *results_json(const LcEvalResult *r, int n) {
    json_t *a = json_array();
    for (int i = 0; i < n; i++) {
        json_t *e = json_object(), *b = json_array();
        cj_set(e, "length", json_integer(r[i].len));
        cj_set(e, "yarn_scale", cj_num(r[i].yarn_scale));
        cj_set(e, "val_loss", cj_num(r[i].val_loss));
        cj_set(e, "ppl", cj_num(r[i].ppl));
        cj_set(e, "first_share", cj_num(r[i].first_share));
        cj_set(e, "uniform_share", cj_num(r[i].uniform_share));
        cj_set(e, "sink_rate", cj_num(r[i].sink_rate));
        cj_set(e, "n_seqs", json_integer(r[i].n_seqs));
        for (int k = 0; k < r[i].n_buckets; k++)
            json_array_append_new(b, cj_num(r[i].loss_by_bucket[k]));
        cj_set(e, "loss_by_bucket", b);
        if (r[i].n_depths) {
            json_t *nd = json_array(), *na = json_array();
            for (int d = 0; d < r[i].n_depths; d++) {
                json_array_append_new(nd, cj_num(LCEVAL_NEEDLE_DEPTH[d]));
                json_array_append_new(na, cj_num(r[i].needle_acc[d]));
            }
            cj_set(e, "needle_depth", nd);
            cj_set(e, "needle_acc", na);
            cj_set(e, "needle_n", json_integer(r[i].needle_n));
        }
        json_array_append_new(a, e);
    }
    return a;
}

static int store(const char *run, int yarn, const LcEvalResult *r, int n) {
    char err[512];
    for (int i = 0; i < n; i++) {
        LcEvalData d = {yarn ? RS_LC_YARN : RS_LC_PLAIN,
                        r[i].len,
                        r[i].train_len,
                        r[i].val_loss,
                        r[i].ppl,
                        r[i].first_share,
                        r[i].uniform_share,
                        r[i].sink_rate,
                        r[i].yarn_scale,
                        r[i].n_seqs,
                        r[i].n_buckets,
                        r[i].loss_by_bucket,
                        r[i].n_depths,
                        LCEVAL_NEEDLE_DEPTH,
                        r[i].needle_acc,
                        r[i].needle_n};
        if (runfile_write_lceval(run, &d, err, sizeof err) != 0) {
            fprintf(stderr, "gatelab eval: %s\n", err);
            return -1;
        }
    }
    return 0;
}

static json_t *quant_json(const QuantEvalResult *r) {
    json_t *e = json_object(), *m = json_object();
    cj_set(e, "length", json_integer(r->len));
    cj_set(e, "n_seqs", json_integer(r->n_seqs));
    cj_set(e, "calib_batches", json_integer(r->calib));
    cj_set(e, "keep_first", json_integer(r->keep_first));
    cj_set(e, "percentile", cj_num(FQ_PERCENTILE));
    cj_set(e, "val_loss", cj_num(r->val_loss));
    cj_set(e, "ppl", cj_num(r->ppl));
    cj_set(e, "inf_attn", cj_num(r->inf[FQ_OUT_ATTN]));
    cj_set(e, "inf_ffn", cj_num(r->inf[FQ_OUT_FFN]));
    cj_set(e, "inf_layer", cj_num(r->inf[FQ_OUT_LAYER]));
    cj_set(e, "kurtosis_max", cj_num(r->kurt_max));
    for (int i = 0; i < r->n_modes; i++) {
        json_t *q = json_object();
        cj_set(q, "val_loss", cj_num(r->modes[i].val_loss));
        cj_set(q, "ppl", cj_num(r->modes[i].ppl));
        cj_set(q, "dloss", cj_num(r->modes[i].dloss));
        cj_set(q, "destroyed", json_boolean(r->modes[i].destroyed));
        if (r->modes[i].source[0]) {
            json_t *s = json_object();
            cj_set(s, "tensor", json_string(r->modes[i].source));
            cj_set(s, "layer", json_integer(r->modes[i].source_layer));
            cj_set(s, "recovered", cj_num(r->modes[i].source_recovered));
            cj_set(s, "tensors_tried", json_integer(r->modes[i].n_tensors));
            cj_set(q, "source", s);
        }
        if (r->keep_first > 0) {
            cj_set(q, "val_loss_keep", cj_num(r->modes[i].val_loss_keep));
            cj_set(q, "dloss_keep", cj_num(r->modes[i].dloss_keep));
            cj_set(q, "sink_dloss", cj_num(r->modes[i].sink_dloss));
        }
        cj_set(m, fq_mode_name(r->modes[i].mode), q);
    }
    cj_set(e, "modes", m);
    return e;
}

static int store_quant(const char *run, const QuantEvalResult *r) {
    char err[512];
    QuantModeData md[QEVAL_MAX_MODES];
    for (int i = 0; i < r->n_modes; i++) {
        const QuantModeResult *m = &r->modes[i];
        md[i] = (QuantModeData){.mode = fq_mode_name(m->mode),
                                .val_loss = m->val_loss,
                                .ppl = m->ppl,
                                .dloss = m->dloss,
                                .val_loss_keep = m->val_loss_keep,
                                .dloss_keep = m->dloss_keep,
                                .sink_dloss = m->sink_dloss,
                                .destroyed = m->destroyed,
                                .source = m->source,
                                .source_layer = m->source_layer,
                                .n_tensors = m->n_tensors,
                                .source_recovered = m->source_recovered};
    }
    QuantData d = {r->len,
                   r->calib,
                   r->keep_first,
                   r->n_seqs,
                   FQ_PERCENTILE,
                   r->val_loss,
                   r->ppl,
                   r->inf[FQ_OUT_ATTN],
                   r->inf[FQ_OUT_FFN],
                   r->inf[FQ_OUT_LAYER],
                   r->kurt_max,
                   r->n_modes,
                   md};
    if (runfile_write_quant(run, &d, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab eval: %s\n", err);
        return -1;
    }
    return 0;
}

/* The quantized evaluation of f in q's modes (checked by check_all):
 * printed (or into jo) and stored unless nowrite. 0, 1 (a failed write), 2
 * (a failed evaluation) or 130 (interrupted). */
static int eval_quant(Forward *f, QuantEvalOpts *q, json_t *jo, int nowrite) {
    char err[1024];
    QuantEvalResult r;
    StopGuard guard;
    stop_arm(&guard); /* Ctrl-C stops between batches; nothing is stored */
    int failed = quanteval_run(f, q, &r, err, sizeof err) != 0;
    stop_disarm(&guard);
    if (failed) {
        fprintf(stderr, "gatelab eval: %s\n", err);
        return stop_requested() ? 130 : 2;
    }
    if (jo) cj_set(jo, "quant", quant_json(&r));
    else quant_print(stdout, f->run, &f->info, &r);
    return !nowrite && store_quant(f->run, &r) != 0 ? 1 : 0;
}

/* The long-context evaluation of f at o's lengths under plain RoPE (what
 * 0), YaRN (1) or both (2), printed (or into jo) and stored unless
 * nowrite. Both skips YaRN with one line where it is untestable
 * (lceval_yarn_check). 0, 1 (a failed write), 2 or 130 as cmd_eval. */
static int eval_lengths(Forward *f, LcEvalOpts *o, int what, json_t *jo, int nowrite) {
    char err[1024];
    int modes[2] = {what == 1, 1}, nmodes = what == 2 ? 2 : 1, rc = 0;
    if (what == 2 && f->info.yarn && lceval_yarn_check(f, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab eval: YaRN skipped: %s\n", err);
        nmodes = 1;
    }
    for (int k = 0; k < nmodes && rc == 0; k++) {
        LcEvalResult res[LCEVAL_MAX_LENGTHS];
        o->yarn = modes[k];
        StopGuard guard;
        stop_arm(&guard); /* Ctrl-C stops between batches; nothing is stored */
        int failed = lceval_run(f, o, res, err, sizeof err) != 0;
        stop_disarm(&guard);
        if (failed) {
            fprintf(stderr, "gatelab eval: %s\n", err);
            return stop_requested() ? 130 : 2;
        }
        if (jo) {
            cj_set(jo, "variant", cj_str(f->info.variant));
            cj_set(jo, "train_len", json_integer(f->info.seq_len));
            cj_set(jo, o->yarn ? "yarn" : "plain", results_json(res, o->n_lengths));
        } else {
            print_table(f->run, &f->info, o->yarn, res, o->n_lengths);
        }
        if (!nowrite && store(f->run, o->yarn, res, o->n_lengths) != 0) rc = 1;
        for (int i = 0; i < o->n_lengths; i++) lceval_result_free(&res[i]);
    }
    return rc;
}

/* --lengths spec at training length T into o: 0, or 2 with one line. */
static int lengths_into(const char *spec, int T, LcEvalOpts *o) {
    int prc = parse_lengths(spec, T, o->lengths, &o->n_lengths);
    if (prc == -2)
        fprintf(stderr, "gatelab eval: --lengths '%s' names length %d twice (T_train is %d)\n",
                spec, o->lengths[o->n_lengths], T);
    else if (prc != 0)
        fprintf(stderr,
                "gatelab eval: bad --lengths '%s' (want e.g. 256,512 or 1x,2x; at most %d)\n", spec,
                LCEVAL_MAX_LENGTHS);
    return prc ? 2 : 0;
}

/* One warning per option of the length evaluation (--yarn, --both,
 * --needle: set 1) given without --lengths, where it does nothing. */
static void warn_without_lengths(int yarn, int both, int needle) {
    const char *name[] = {"yarn", "both", "needle"};
    const int given[] = {yarn, both, needle};
    for (int i = 0; i < 3; i++)
        if (given[i])
            fprintf(stderr,
                    "gatelab eval: warning: --%s does nothing without --lengths (--quant scores "
                    "at T_train only); it is ignored\n",
                    name[i]);
}

/* --quant's modes from spec into q: 0, or 2 with one line naming it. */
static int parse_quant(const char *spec, QuantEvalOpts *q) {
    int prc = quanteval_parse_modes(spec, q->modes, &q->n_modes);
    if (prc == 0) return 0;
    fprintf(stderr, "gatelab eval: bad --quant '%s' (%s; want a list of " FQ_NAMES_TEXT ")\n", spec,
            prc == -2 ? "a mode named twice" : "an unknown mode");
    return 2;
}

/* Every evaluation asked for, checked before any runs, so that a refused
 * command stores nothing: YaRN (what 1 = --yarn, 2 = --both) only on a run
 * with RoPE, each length in each mode (lengths when o->n_lengths > 0),
 * then the --quant modes (quant when non-NULL; defaults left by the user
 * cut to the input, quanteval_fit) and their memory. 0, or 2 with one line
 * on stderr. */
static int check_all(Forward *f, LcEvalOpts *o, int what, const char *quant, QuantEvalOpts *q) {
    char err[1024];
    if (o->n_lengths > 0 && what && !f->info.yarn) {
        const char *opt = what == 2 ? "both" : "yarn";
        fprintf(stderr,
                "gatelab eval: %s: --%s evaluates YaRN, which rescales RoPE, but this run's "
                "positions are %s; drop --%s\n",
                f->run, opt, f->info.positions, opt);
        return 2;
    }
    for (int yarn = 0; o->n_lengths > 0 && yarn <= 1; yarn++) {
        if ((yarn && !what) || (!yarn && what == 1)) continue;
        /* --both skips an untestable YaRN in one line (eval_lengths) */
        if (yarn && what == 2 && lceval_yarn_check(f, err, sizeof err) != 0) continue;
        o->yarn = yarn;
        if (lceval_check(f, o, err, sizeof err) != 0) {
            fprintf(stderr, "gatelab eval: %s\n", err);
            return 2;
        }
    }
    if (quant && (parse_quant(quant, q) != 0)) return 2;
    char note[512] = "";
    if (quant && quanteval_fit(f, q, note, sizeof note, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab eval: %s\n", err);
        return 2;
    }
    if (note[0]) fprintf(stderr, "gatelab eval: %s\n", note); /* defaults cut to the input */
    if (quant && quanteval_check(f, q, err, sizeof err) != 0) {
        fprintf(stderr, "gatelab eval: %s\n", err);
        return 2;
    }
    return 0;
}

typedef struct {
    LcEvalOpts lc;
    QuantEvalOpts q;
    const char *lengths, *quant;
    int yarn, both, json, nowrite;
} EvalOpts;
/* q.fit: batches, batch size and calibration fitted to a short input
 * unless given (opt_given) */
static const EvalOpts eval_defaults = {
    .lc = {.batches = 4, .batch_size = 4},
    .q = {.calib = QEVAL_CALIB_DEFAULT,
          .fit = QEVAL_FIT_BATCHES | QEVAL_FIT_BATCH_SIZE | QEVAL_FIT_CALIB}};

static const OptRow eval_rows[] = {
    {'l', "lengths", OPT_STR, "LIST", 0, 0, NULL,
     "comma-separated lengths; Nx means N * T_train\n"
     "(e.g. 256,512 or 1x,2x,4x,8x)",
     0, 0, &eval_defaults.lengths},
    {'y', "yarn", OPT_FLAG, NULL, 0, 0, NULL,
     "YaRN: NTK-by-parts RoPE interpolation plus the attention\n"
     "temperature, scale = L / T_train (plain RoPE otherwise)",
     0, 0, &eval_defaults.yarn},
    {'b', "both", OPT_FLAG, NULL, 0, 0, NULL,
     "plain RoPE, then YaRN (YaRN skipped, in one line,\nwhere it keeps no rotary pair)", 0, 0,
     &eval_defaults.both},
    {'N', "needle", OPT_FLAG, NULL, 0, 0, NULL,
     "also the needle task at each length (byte text):\na key-value needle at evenly spaced "
     "depths of the\ntext, queried at its end; exact-match share per depth",
     0, 0, &eval_defaults.lc.needle},
    {'n', "batches", OPT_INT, "N", 1, 100000, NULL, "held-out batches per length", 0, 0,
     &eval_defaults.lc.batches},
    {'B', "batch-size", OPT_INT, "B", 1, 4096, NULL, "sequences per batch", 0, 0,
     &eval_defaults.lc.batch_size},
    {'q', "quant", OPT_STR, "LIST", 0, 0, NULL,
     "fake-quantized evaluation at T_train in these modes:\n"
     "comma-separated " FQ_NAMES_TEXT "\n(" FQ_NAME_W8A8_PCT
     ": input ranges at the " FQ_PERCENTILE_TEXT "th percentile;\n" FQ_NAME_W8A8_TOK
     ": each token's input on its own range)",
     0, 0, &eval_defaults.quant},
    {'c', "calib", OPT_INT, "N", 1, 100000, NULL,
     "held-out batches calibrating each --quant\nmode's input ranges", 0, 0,
     &eval_defaults.q.calib},
    {'K', "quant-keep-first", OPT_INT, "K", 0, 100000, NULL,
     "also score each --quant mode with the first K\npositions of every window in float (their "
     "rows\nleft out of the input ranges too) and report\nsink_dloss = dloss - dloss_keep",
     0, 0, &eval_defaults.q.keep_first},
    {'S', "quant-source", OPT_FLAG, NULL, 0, 0, NULL,
     "for each per-tensor --quant mode, score it again\nwith each input tensor of its linear "
     "layers in\nfloat alone; report the one that recovers the\nmost loss (one more pass per "
     "tensor)",
     0, 0, &eval_defaults.q.source},
    {'j', "json", OPT_FLAG, NULL, 0, 0, NULL, "print JSON instead of tables", 0, 0,
     &eval_defaults.json},
    {'w', "no-write", OPT_FLAG, NULL, 0, 0, NULL, "do not store the results in RUN.h5", 0, 0,
     &eval_defaults.nowrite},
    {0}};
const OptTable eval_options = {
    .cmd = "eval",
    .operands = "RUN.h5 (--lengths LIST | --quant LIST) [options]",
    .about =
        "Evaluate a finished run at longer contexts than it was trained on: val loss\n"
        "(overall and per bucket of T_train positions), first-token attention share\n"
        "and sink rate (alpha_0 > " SINK_EPS_TEXT "), on the same held-out text for every run.\n"
        "Results are stored in RUN.h5 under /lceval/<plain|yarn>/L_<len>.\n"
        "--quant instead (or as well) scores the run at T_train with its linear layers'\n"
        "weights and inputs fake-quantized, against float on the same windows\n"
        "(stored under /quant).\n",
    .footer = "Learned position tables cannot extrapolate: lengths above max_pos are refused.\n"
              "A run of `gatelab inspect` is evaluated through its checkpoint (the directory\n"
              "it records) on its recorded input: windows of each length, plain positions,\n"
              "Nx = N times its probe length.\n"
              "Exit codes: 0 ok, 1 failure, 2 bad input.\n",
    .rows = eval_rows,
    OPT_DEFAULTS(eval_defaults),
};

int cmd_eval(int argc, char **argv) {
    EvalOpts e = eval_defaults;
    OptParser op;
    opt_init(&op, &eval_options, argc, argv);
    int c = opt_parse(&op, &e);
    if (c != OPT_END) return opt_exit(c);
    LcEvalOpts o = e.lc;
    QuantEvalOpts qo = e.q;
    if (opt_given(&op, 'n')) qo.fit &= ~QEVAL_FIT_BATCHES;
    if (opt_given(&op, 'B')) qo.fit &= ~QEVAL_FIT_BATCH_SIZE;
    if (opt_given(&op, 'c')) qo.fit &= ~QEVAL_FIT_CALIB;
    const char *lengths = e.lengths, *quant = e.quant;
    const int yarn = e.yarn, both = e.both, json = e.json, nowrite = e.nowrite;
    json_t *jo = NULL;
    if (qo.source && !quant) {
        fprintf(stderr, "gatelab eval: --quant-source ablates the --quant passes' input tensors; "
                        "give --quant too\n");
        return 2;
    }
    if (qo.keep_first > 0 && !quant) {
        fprintf(stderr, "gatelab eval: --quant-keep-first holds positions out of the --quant "
                        "passes; give --quant too\n");
        return 2;
    }
    if (op.optind != argc - 1 || (!lengths && !quant)) {
        fprintf(stderr, "gatelab eval: need one RUN.h5 and --lengths or --quant (see --help)\n");
        return 2;
    }
    const char *run = argv[op.optind];
    if (!lengths) warn_without_lengths(yarn, both, o.needle);
    if (!nowrite && cu_check_out("eval", run, OUT_RUNFILE) < 0) return 2; /* outpath.h */
    /* one writer per run file, from before the read to the last write */
    RunLock lock = {.fd = -1};
    char lerr[1024];
    if (!nowrite && runlock_acquire(&lock, run, lerr, sizeof lerr) != 0) {
        fprintf(stderr, "gatelab eval: %s\n", lerr);
        return lock.refused ? 2 : 1;
    }
    ForwardOpen fo = {.threads = cu_online_cpus()};
    Forward *f = forward_open(run, &fo, lerr, sizeof lerr);
    if (!f) {
        fprintf(stderr, "gatelab eval: %s\n", lerr);
        runlock_release(&lock);
        return 2;
    }
    qo.batches = o.batches, qo.batch_size = o.batch_size;
    if ((lengths && lengths_into(lengths, f->info.seq_len, &o) != 0) ||
        check_all(f, &o, both ? 2 : yarn, quant, &qo) != 0) {
        forward_close(f);
        runlock_release(&lock);
        return 2;
    }
    jo = json ? cj_set(json_object(), "run", cj_str(run)) : NULL;
    int rc = lengths ? eval_lengths(f, &o, both ? 2 : yarn, jo, nowrite) : 0;
    if (rc >= 2) json_decref(jo), jo = NULL; /* no partial JSON */
    if (rc == 0 && quant) {
        if (json) cj_set(jo, "variant", cj_str(f->info.variant));
        rc = eval_quant(f, &qo, jo, nowrite);
        if (rc >= 2) json_decref(jo), jo = NULL; /* no partial JSON */
    }
    forward_close(f);
    runlock_release(&lock);
    if (jo && cj_print("eval", jo) != 0 && rc == 0) rc = 1;
    return rc;
}
