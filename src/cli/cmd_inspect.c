/* cmd_inspect.c: `gatelab inspect MODEL_DIR`: run a Hugging Face checkpoint
 * on N windows of T tokens and write a run file (one probe at step 0) that
 * sinks, gates, acts, heatmap, plot and report read like a trained run.
 * Flags and output here; the forward pass is hf_model.c, the windows
 * through it hf_pass.c (reduced by probe_reduce.c, the trainer's too), the
 * file hf_runwrite.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "hf_identity.h"
#include "hf_model.h"
#include "hf_pass.h"
#include "hf_runwrite.h"
#include "hf_steps.h" /* hf_layer_window */
#include "inspect_input.h"
#include "mapguard.h"
#include "memplan.h"
#include "safetensors.h"
#include "cliopts.h"
#include "cmdutil.h"
#include "util.h"

#define DEFAULT_TEXT_LEN 512
#define DEFAULT_TEXT_SEQS 8
#define DEFAULT_MAPS 128

typedef struct {
    const char *model, *text, *tokens, *out;
    int seq_len, n_seq, maps_len, bos, threads, force, quiet;
} Opts; /* seq_len, n_seq 0: the text's own; bos -1: auto; threads 0: the online CPUs */
static const Opts inspect_defaults = {.maps_len = DEFAULT_MAPS, .bos = -1};

static int bad(const char *fmt, const char *arg) {
    fprintf(stderr, "gatelab inspect: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see gatelab inspect --help)\n");
    return 2;
}

static const OptRow inspect_rows[] = {
    {'x', "text", OPT_STR, "FILE", 0, 0, NULL,
     "text, encoded with MODEL_DIR/tokenizer.json (byte-level\n"
     "BPE) and cut into consecutive windows",
     0, 0, &inspect_defaults.text},
    {'k', "tokens", OPT_STR, "FILE", 0, 0, NULL,
     "one window per line, whitespace-separated token ids", 0, 0, &inspect_defaults.tokens},
    {'o', "out", OPT_STR, "RUN.h5", 0, 0, NULL, "the run file to write (refused if it exists)", 0,
     0, &inspect_defaults.out},
    {'T', "seq-len", OPT_INT, "T", 1, 1 << 20,
     "text: " OPT_DEF(DEFAULT_TEXT_LEN) "; tokens: the shortest line", "window length", 0, 0,
     &inspect_defaults.seq_len},
    {'n', "n-seq", OPT_INT, "N", 1, 1 << 20,
     "text: " OPT_DEF(DEFAULT_TEXT_SEQS) "; tokens: every line", "windows", 0, 0,
     &inspect_defaults.n_seq},
    {'m', "maps-len", OPT_INT, "M", 1, 1 << 16, NULL, "positions with full attention maps", 0, 0,
     &inspect_defaults.maps_len},
    {'b', "bos", OPT_STR, "MODE", 0, 0, NULL,
     "auto: the BOS the tokenizer adds (none for --tokens);\n"
     "yes: put the BOS first in each window; no: never",
     0, 0, OPT_SPECIAL},
    {'t', "threads", OPT_INT, "N", 1, 64, "the online CPUs", "threads", 0, 0,
     &inspect_defaults.threads},
    {'f', "force", OPT_FLAG, NULL, 0, 0, NULL, "replace an existing RUN.h5", 0, 0,
     &inspect_defaults.force},
    {'q', "quiet", OPT_FLAG, NULL, 0, 0, NULL, "no progress lines", 0, 0, &inspect_defaults.quiet},
    {0}};
/* --help's list of the architectures read: the family table's
 * (hf_family_list, which the refusal of another architecture prints). */
static void list_archs(FILE *f) {
    char list[512];
    hf_family_list(list, sizeof list);
    fprintf(f, "Architectures (config.json's \"architectures\"):\n ");
    int col = 1;
    for (char *w = strtok(list, " "); w; w = strtok(NULL, " ")) {
        if (col + 1 + (int)strlen(w) > 79) fprintf(f, "\n "), col = 1;
        col += fprintf(f, " %s", w);
    }
    fprintf(f, "\n");
}

const OptTable inspect_options = {
    .cmd = "inspect",
    .operands = "MODEL_DIR (--text FILE | --tokens FILE) --out RUN.h5 [options]",
    .about = "Run a Hugging Face checkpoint (config.json + model.safetensors, or shards with\n"
             "model.safetensors.index.json; F32, F16 or BF16) on N windows of T tokens and\n"
             "write a run file with one probe (step 0): tokens, attention maps of the first\n"
             "M positions, the first-token column of every layer, head and query, alpha0,\n"
             "hidden-state statistics and, for gated models, gate scores. Then `gatelab\n"
             "sinks|gates|acts|heatmap|plot|report` read it like a trained run.\n"
             "Qwen3 reads the gated-attention flags headwise_/elementwise_attn_output_gate;\n"
             "Mistral and Phi-3 slide every layer (Phi-3's longrope scaling is refused);\n"
             "Gemma 2 and 3 (text) soft-cap logits and norm by (1 + w); Gemma, Qwen's\n"
             "layer_types and gpt-oss slide only some layers, each masked by its own\n"
             "window, recorded per layer in the run file; gpt-oss's per-head sink logits\n"
             "join every softmax, their share kept as attention_slot, and its MXFP4\n"
             "experts are dequantized on load. AFMoE gates each head's output by\n"
             "sigmoid(gate_proj), RoPE on its sliding layers only; its MoE layers route\n"
             "by sigmoid scores (expert_bias to choose) beside shared experts. Laguna\n"
             "scales each head's output by softplus(g_proj), one score a head (recorded\n"
             "as unbounded), its sliding and full layers on RoPE of their own; its MoE\n"
             "layers route by sigmoid scores with a score-correction bias, beside a\n"
             "shared expert; layers of differing head counts run at their own (absent\n"
             "heads NaN in the run file, each layer's count kept as layer_heads).\n"
             "Step-3.5 scales each head's output by sigmoid(g_proj), one score a head,\n"
             "its sliding layers at their own head count; its MoE and dense SwiGLUs\n"
             "are clamped at each layer's limits.\n"
             "MiMo-V2-Flash gives its sliding layers query and KV heads of their own,\n"
             "values a smaller head dim than queries and keys, and a learned sink bias\n"
             "per head whose share is kept as attention_slot; its MoE layers route as\n"
             "Laguna's, with no shared expert.\n",
    .footer = "Exit codes: 0 ok, 1 failure, 2 bad input.\n",
    .rows = inspect_rows,
    .more = list_archs,
    OPT_DEFAULTS(inspect_defaults),
};

/* 0 ok, 1 --help printed, 2 bad usage (message printed). */
static int parse(int argc, char **argv, Opts *o) {
    *o = inspect_defaults;
    OptParser op;
    opt_init(&op, &inspect_options, argc, argv);
    for (int c; (c = opt_parse(&op, o)) != OPT_END;) {
        if (c < 0) return c == OPT_HELP ? 1 : 2;
        if (c != 'b') continue;
        if (!strcmp(op.str, "auto")) o->bos = -1;
        else if (!strcmp(op.str, "yes")) o->bos = 1;
        else if (!strcmp(op.str, "no")) o->bos = 0;
        else return bad("--bos '%s' is not auto, yes or no", op.str);
    }
    if (!o->threads) o->threads = cu_online_cpus();
    if (op.optind != argc - 1)
        return bad("%s", op.optind >= argc ? "no MODEL_DIR" : "more than one MODEL_DIR");
    o->model = argv[op.optind];
    if (!o->text == !o->tokens)
        return bad("%s", "give exactly one of --text FILE and --tokens FILE");
    if (!o->out) return bad("%s", "no --out RUN.h5");
    return 0;
}

static int windows(const Opts *o, const HfModel *m, HfWindows *w, int *bos_used, char *err,
                   size_t errlen) {
    const HfArch *a = hf_model_arch(m);
    if (o->tokens) {
        *bos_used = o->bos == 1 ? a->bos_id : -1;
        if (o->bos == 1 && a->bos_id < 0)
            return seterr(err, errlen, "--bos yes: %s/config.json names no bos_token_id", o->model);
        return hf_windows_from_token_file(w, o->tokens, o->seq_len, o->n_seq, *bos_used, a->V, err,
                                          errlen);
    }
    int T = o->seq_len ? o->seq_len : DEFAULT_TEXT_LEN;
    if (!o->seq_len && a->family == HF_GPT2 && T > a->max_pos) T = a->max_pos;
    return hf_windows_from_text(w, o->text, o->model, T, o->n_seq ? o->n_seq : DEFAULT_TEXT_SEQS,
                                o->bos, a->bos_id, a->V, bos_used, err, errlen);
}

static long long count_params(const char *dir) {
    SafeTensors *st;
    char err[256];
    if (st_open_dir(&st, dir, err, sizeof err) < 0) return 0;
    long long n = 0;
    for (size_t i = 0; i < st_count(st); i++) n += (long long)st_at(st, i)->numel;
    st_close(st);
    return n;
}

/* Non-finite weights give NaN attention: say so (the run file is still
 * written, as the model's honest output). */
static void warn_nonfinite(const ProbeRecord *pd, const char *model) {
    const size_t MM = (size_t)pd->M * pd->M, T = (size_t)pd->T;
    size_t bad = 0;
    for (int n = 0; n <= pd->N; n++) /* n < N: first columns; n = N: the maps */
        for (int l = 0; l < pd->L; l++)
            for (int h = 0; h < runread_layer_heads(pd, l); h++) { /* a layer's own heads */
                const size_t lh = (size_t)l * pd->H + h, k = n < pd->N ? T : MM;
                const float *x = n < pd->N ? (pd->first_col ? pd->first_col : NULL) : pd->attention;
                if (x) x += n < pd->N ? ((size_t)n * pd->L * pd->H + lh) * T : lh * MM;
                for (size_t i = 0; x && i < k; i++) bad += !isfinite(x[i]);
            }
    if (bad)
        fprintf(stderr,
                "gatelab inspect: warning: %zu attention weights are NaN or Inf: %s holds "
                "non-finite weights, so its results are not meaningful\n",
                bad, model);
}

/* The memory plan (memplan.h) of the pass about to run: the converted
 * weights, the forward buffers, the probe's accumulators and the windows'
 * ids. 0, or -1 with memplan_check's one line. */
static int plan_check(const HfModel *m, const HfWindows *w, int M, char *err, size_t errlen) {
    MemPlan p = {0};
    hf_model_pass_bytes(m, w->N, 1, w->T, M, &p.params, &p.activations, &p.probe);
    p.probe += (size_t)w->N * w->T * sizeof(int32_t);
    p.total = p.params + p.activations + p.probe;
    return memplan_check(&p, "inspect", err, errlen);
}

static int inspect(const Opts *o, char *err, size_t errlen, int *code) {
    HfModel *m = NULL;
    HfWindows w = {0};
    ProbeRecord pd;
    memset(&pd, 0, sizeof pd);
    int bos_used = -1, rc = -1;
    *code = 2;
    if (!o->force && file_exists(o->out)) {
        seterr(err, errlen, "%s: exists (use --force to replace it)", o->out);
        goto done;
    }
    if (hf_model_open(&m, o->model, o->threads, err, errlen) < 0) goto done;
    if (windows(o, m, &w, &bos_used, err, errlen) < 0) goto done;
    const HfArch *a = hf_model_arch(m);
    if (w.T < 2) { /* the probe's statistics compare position 0 with the rest */
        seterr(err, errlen, "windows of %d token are too short: at least 2", w.T);
        goto done;
    }
    if (a->family == HF_GPT2 && w.T > a->max_pos) {
        seterr(err, errlen,
               "windows of %d tokens exceed the model's %d positions (use --seq-len %d or less)",
               w.T, a->max_pos, a->max_pos);
        goto done;
    }
    int M = o->maps_len < w.T ? o->maps_len : w.T;
    if (plan_check(m, &w, M, err, errlen) < 0) goto done; /* exit 2: too big for the machine */
    *code = 1;
    HfPassIn in = {
        .ids = w.ids, .N = w.N, .T = w.T, .M = M, .progress = o->quiet ? NULL : "inspect"};
    HfPassOut po;
    if (hf_pass(m, &in, &pd, &po, err, errlen) < 0) goto done;
    if (mapguard_check(err, errlen) < 0) goto done; /* weights rewritten meanwhile */
    warn_nonfinite(&pd, o->model);
    int *first = calloc((size_t)w.N, sizeof(int)), *win = calloc((size_t)a->L, sizeof(int));
    for (int i = 0; first && i < w.N; i++) first[i] = w.ids[(size_t)i * w.T];
    for (int l = 0; win && l < a->L; l++) win[l] = hf_layer_window(a, l);
    /* absolute paths, so that a rerun from elsewhere finds the same files */
    char *model_abs = realpath(o->model, NULL),
         *input_abs = realpath(o->text ? o->text : o->tokens, NULL);
    char *identity = hf_model_identity(m);
    RunPretrained info = {.architecture = a->arch,
                          .model_type = a->model_type,
                          .attn_gate = hf_gate_name(a),
                          .dtype = hf_model_dtype(m),
                          .model_dir = model_abs ? model_abs : o->model,
                          .config_json = hf_model_config_text(m),
                          .identity = identity,
                          .tokenizer = w.tokenizer,
                          .input = input_abs ? input_abs
                                   : o->text ? o->text
                                             : o->tokens,
                          .input_kind = o->text ? "text" : "tokens",
                          .bos_id = bos_used,
                          .threads = o->threads,
                          .n_params = count_params(o->model),
                          .seconds = po.seconds,
                          .first_token = first,
                          .n_windows = w.N,
                          .window = hf_record_window(a),
                          .layer_window = win,
                          .n_layers = a->L};
    rc = first && win && identity ? hf_run_write(o->out, o->force, &pd, &info, err, errlen)
                                  : seterr(err, errlen, "out of memory");
    free(first), free(win), free(identity), free(model_abs), free(input_abs);
    if (rc == 0 && !o->quiet)
        printf("%s: %s (%s), %d windows of %d tokens, maps of %d, %.1f s -> %s\n", o->model,
               a->arch, hf_model_dtype(m), w.N, w.T, M, po.seconds, o->out);
done:
    runread_probe_free(&pd);
    hf_windows_free(&w);
    hf_model_close(m);
    return rc;
}

int cmd_inspect(int argc, char **argv) {
    Opts o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc == 1 ? 0 : rc;
    char err[1024] = "";
    int code;
    if (inspect(&o, err, sizeof err, &code) < 0) {
        fprintf(stderr, "gatelab inspect: %s\n", err);
        return code;
    }
    return 0;
}
