/* runfile.h: the HDF5 run file's write face, one file per run (and the
 * checkpoint beside it): runfile_create.c makes a file, runfile_append.c
 * writes into an open one, runfile_resume.c reopens one to resume, and
 * runfile_edit.c adds results to a finished one. Every call that fails
 * returns -1 (or NULL) with one line in err. The layout and every name are
 * in runschema.h, the read face is runfile_read.h, the prose schema
 * docs/runfile.md. */
#ifndef GATELAB_RUNFILE_H
#define GATELAB_RUNFILE_H

#include <stddef.h>
#include <stdint.h>
#include "config.h"
#include "model.h"
#include "runschema.h"

typedef struct RunFile RunFile;

/* Create a new run file. Refuses an existing path unless force.
 * -1 with a one-line reason naming the path. */
RunFile *runfile_create(const char *path, const Config *cfg, const Model *m, int force, char *err,
                        size_t errlen);
/* Reopen for resume after `step` completed steps (the checkpoint's step):
 * check the schema, keep train rows with step < `step` and eval rows and
 * probe groups with step <= `step`; drop the rest. */
RunFile *runfile_reopen(const char *path, long long step, char *err, size_t errlen);
/* Train rows in the file (after runfile_reopen: those kept, steps 0..n-1;
 * a resume at checkpoint step S needs exactly S). */
long long runfile_train_rows(const RunFile *rf);
int runfile_close(RunFile *rf, char *err, size_t errlen);

int runfile_set_status(RunFile *rf, const char *status, char *err, size_t errlen);
int runfile_append_train(RunFile *rf, long long step, double loss, double lr, double grad_norm,
                         long long tokens, double seconds, char *err, size_t errlen);
int runfile_append_eval(RunFile *rf, long long step, double val_loss, double val_bpb, char *err,
                        size_t errlen);

/* One probe (probe.c computes, this stores; names in runschema.h). */
int runfile_write_probe(RunFile *rf, const ProbeRecord *p, char *err, size_t errlen);

/* Provenance of a run measured on a pretrained checkpoint (gatelab
 * inspect): root attrs variant "pretrained:<architecture>:gate-<attn_gate>", source and
 * n_params, the /pretrained group (RS_PT_*, each layer's window among
 * them), and /config holding only the window. */
typedef struct {
    const char *architecture, *model_type, *dtype, *model_dir;
    const char *attn_gate;          /* the output gate config.json names (hf_gate_name) */
    const char *config_json;        /* the snapshot's config.json text */
    const char *identity;           /* its files' identity (hf_identity.h), or NULL */
    const char *tokenizer;          /* which tokenizer.json made the ids, or "none: ..." */
    const char *input, *input_kind; /* the --text/--tokens file; "text" | "tokens" */
    int bos_id;                     /* put first in each window, or -1 */
    int threads;
    long long n_params;
    double seconds;         /* forward passes, wall clock */
    const int *first_token; /* [n_windows] */
    int n_windows;
    /* the sliding window the probe attended under (0: full causal), kept
     * as /config window, the key a trained run's window has */
    int window;
    /* each layer's window (0: full causal) [n_layers], kept as
     * /pretrained/layer_window */
    const int *layer_window;
    int n_layers;
} RunPretrained;
int runfile_write_pretrained(RunFile *rf, const RunPretrained *p, char *err, size_t errlen);

/* The protocol a confirmatory sweep declared (its OUT/protocol.ini), as
 * the run starts: /protocol with the file's exact text, its hash
 * (protocol_hash_text, util.h), the sweep file, the last git commit that
 * touched it ("" when unknown), whether the file differed from that
 * commit (1, 0; -1 unknown) and whether the sweep ran with --uncommitted. */
typedef struct {
    const char *text, *hash, *sweep_file, *sweep_commit;
    int sweep_dirty, uncommitted;
} RunProtocol;
int runfile_write_protocol(RunFile *rf, const RunProtocol *p, char *err, size_t errlen);

/* The data files a run trains on, as it starts: /data_files with each
 * file's real absolute path and content hash (runschema.h RS_DF_*). */
typedef struct {
    const char *train_file, *train_hash, *val_file, *val_hash;
} RunDataFiles;
int runfile_write_data_files(RunFile *rf, const RunDataFiles *d, char *err, size_t errlen);

/* Final weights under /params, one dataset per ParamInfo. */
int runfile_write_params(RunFile *rf, const Model *m, char *err, size_t errlen);
/* Summary attributes (doubles). */
int runfile_set_summary(RunFile *rf, const char *key, double value, char *err, size_t errlen);

/* ---- checkpoints (RUN.h5.ckpt next to the run file) ----
 * Holds params, AdamW m and v, step, and the config text. Written to
 * RUN.h5.ckpt.tmp then renamed, so a kill never leaves half a file. */
typedef struct {
    long long step;
    long long tokens;
    double seconds;
    const float *params, *m, *v;
    size_t n;
} CheckpointOut;
int checkpoint_save(const char *run_path, const CheckpointOut *c, const char *config_text,
                    char *err, size_t errlen);
/* Loads into caller buffers of n floats; fills *step etc. Also returns the
 * stored config text (malloc'd) so resume can refuse a changed config. */
int checkpoint_load(const char *run_path, float *params, float *m, float *v, size_t n,
                    long long *step, long long *tokens, double *seconds, char **config_text,
                    char *err, size_t errlen);
int checkpoint_exists(const char *run_path);

/* ---- long-context evaluation (gatelab eval) ----
 * /lceval/<mode>/L_<len>  attrs: val_loss, ppl, first_share, uniform_share,
 *                         sink_rate_<SINK_EPS>, yarn_scale, n_seqs, train_len
 *                         dataset loss_by_bucket [n_buckets]: mean loss over
 *                         positions [i*train_len, (i+1)*train_len)
 *                         with --needle: datasets needle_depth, needle_acc
 *                         [n_depths] (exact-match share at each depth) and
 *                         attr needle_n (rows per depth)
 * Written into an existing, closed run file; only /lceval is touched. */
typedef struct {
    const char *mode; /* "plain" | "yarn" */
    int len, train_len;
    double val_loss, ppl, first_share, uniform_share, sink_rate, yarn_scale;
    long long n_seqs;
    int n_buckets;
    const double *loss_by_bucket; /* [n_buckets] */
    int n_depths;                 /* 0: no needle result */
    const double *needle_depth, *needle_acc;
    long long needle_n;
} LcEvalData;
int runfile_write_lceval(const char *path, const LcEvalData *d, char *err, size_t errlen);

/* ---- streaming evaluation (gatelab stream) ----
 * /stream/W_<window> (runschema.h RS_ST_*), written into an existing,
 * closed run file; a re-run of the same window replaces it. */
typedef struct {
    int window, len, n_seqs, n_keep;
    const int *keep;    /* [n_keep] */
    const double *loss; /* [(n_keep + 1) * n_seqs]: row 0 dense, row 1 + i keep[i] */
    double delta, p;    /* RS_ST_DELTA, RS_ST_P */
} StreamData;
int runfile_write_stream(const char *path, const StreamData *d, char *err, size_t errlen);

/* ---- quantized evaluation (gatelab eval --quant) ----
 * /quant (runschema.h RS_Q_*): the float pass's loss and sub-layer
 * statistics, and /quant/<mode> per quantized mode. Written into an
 * existing, closed run file; a re-run replaces /quant whole. */
typedef struct {
    const char *mode; /* RS name of the mode (fakequant.h FQ_NAME_*) */
    double val_loss, ppl, dloss;
    double val_loss_keep, dloss_keep, sink_dloss; /* written when keep_first > 0 */
    int destroyed;                                /* 1/0 (fq_destroyed) */
    const char *source; /* NULL or "": no source of the largest damage (then the next unused) */
    int source_layer, n_tensors;
    double source_recovered;
} QuantModeData;
typedef struct {
    int len, calib_batches, keep_first;
    long long n_seqs;
    double percentile, val_loss, ppl;
    double inf_attn, inf_ffn, inf_layer, kurtosis_max;
    int n_modes;
    const QuantModeData *modes; /* [n_modes] */
} QuantData;
int runfile_write_quant(const char *path, const QuantData *d, char *err, size_t errlen);

/* ---- interventions (gatelab intervene) ----
 * /intervene/<name>: a probe group (as /probe/step_N) plus attrs kind,
 * loss, loss_n, clip_k, layer, gate_const, heads, loss_none, mact_abs,
 * mact_ratio (runschema.h
 * RS_IV_*). All n groups go into one
 * copy of the closed run file that replaces it when complete; a kind
 * already there is replaced whole. */
typedef struct {
    const char *kind;         /* RS_IV_* group name */
    const ProbeRecord *probe; /* the rerun probe */
    double loss;              /* mean CE predicting tokens 2..T-1 */
    long long loss_n;         /* predictions in it */
    int clip_k;               /* bos-clip's k, else 0 */
    const char *name;         /* the group's name (NULL: kind) */
    int layer;                /* the one layer changed, else -1 */
    double gate_const;        /* gate-const's c, else NaN */
    const char *heads;        /* head-zero's heads, else NULL */
    double loss_none;         /* the unchanged rerun's loss */
    double mact_abs;          /* mact-*: the |h| floor, else NaN */
    double mact_ratio;        /* mact-*: the factor over the median |h|, else NaN */
} InterventionOut;
int runfile_write_interventions(const char *path, const InterventionOut *iv, int n, char *err,
                                size_t errlen);

/* ---- a user's prompt (gatelab probe) ----
 * /prompt/<name>: a probe group plus attrs text, input, loss, loss_n
 * (runschema.h RS_PM_*), in one copy of the closed run file that replaces
 * it when complete. A group of that name already there is refused (-1
 * naming it and --force) unless replace is 1, then replaced whole. */
typedef struct {
    const char *name;         /* the group's name: no '/' */
    const ProbeRecord *probe; /* N = 1 */
    const char *text;         /* the text given, or NULL (ids) */
    double loss;
    long long loss_n;
    int replace;
} PromptOut;
int runfile_write_prompt(const char *path, const PromptOut *o, char *err, size_t errlen);

#endif
