/* runfile_read.h: the run file's read face (write face: runfile.h; names
 * in runschema.h). The analysis tools see runs only through this: never
 * through trainer internals. Every failure returns -1 (or NULL) with one
 * line in err naming the file and the bad object; nothing is printed.
 *
 * Shapes and types are checked before any read, and sizes are capped
 * (RUNREAD_MAX_ELEMS) before anything is allocated, so a corrupt or hostile
 * file gives an error instead of a crash or a huge malloc.
 *
 * One way in: runread_open vets the file once, then opens the handle that
 * every typed reader below takes. The read face's files stand on floors,
 * bottom first; a file calls only files of lower floors
 * (tests/check_read_order.sh reads this list and holds the build to it):
 *   1 runfile_check.c runfile_read_util.c
 *   2 runfile_read_handle.c
 *   3 runfile_vet.c runfile_read_config.c runfile_read_series.c
 *   4 runfile_read_probe.c
 *   5 runfile_read.c
 * 1 checks what a file claims, and does the checked HDF5 reads; 2 is the
 * handle (open in-process, root attributes, close); 3 is the vetting (a
 * generic walk over 1 and 2 in a forked child, no typed reader) beside the
 * typed readers of /config, /summary, /pretrained and the series; 4 the
 * probes, checked against /config through 3; 5 runread_open. */
#ifndef GATELAB_RUNREAD_H
#define GATELAB_RUNREAD_H

#include <stddef.h>

#include "runfile_check.h"
#include "runschema.h"

#define RUNREAD_MAX_ELEMS ((size_t)1 << 28)

typedef struct RunReader RunReader;

/* Root attributes, read once at open. */
typedef struct {
    char path[1024];
    char variant[256]; /* the label /config's fields give (config_label_variant),
                          not the stored attribute; that one for inspect's runs */
    char status[32];   /* running | done | diverged */
    char created[64];
    char gatelab_version[32];
    int schema_version;
    long long seed, data_seed;
    long long n_params, n_params_added;
} RunMeta;

/* Open read-only, validate schema="gatelab-run" and the schema version,
 * read RunMeta. NULL + err on a missing, non-HDF5, truncated or foreign
 * file. */
RunReader *runread_open(const char *path, char *err, size_t errlen);
void runread_close(RunReader *r);
const RunMeta *runread_meta(const RunReader *r);

/* outpath_check (outpath.h) for a run file's path: 0 when the path is new,
 * or when it is a file runread_open accepts (or an empty one) and
 * overwrite is set; -1 with the one-line reason otherwise. Without
 * overwrite, a run file whose status is not done (a run killed or
 * interrupted) is refused with a reply pointing to --resume (and to
 * --force, to start over), not as a finished result. */
int runfile_outpath_check(const char *path, int overwrite, char *err, size_t errlen);

/* /config attributes. Numeric attrs of any int/float type read as double;
 * 0 ok, -1 if the key is missing or of the wrong class (err may be NULL). */
int runread_config_double(RunReader *r, const char *key, double *out, char *err, size_t errlen);
int runread_config_string(RunReader *r, const char *key, char *out, size_t outlen, char *err,
                          size_t errlen);
/* /pretrained string attributes (RS_PT_*: runs of `gatelab inspect`);
 * -1 when the run has none. */
int runread_pretrained_string(RunReader *r, const char *key, char *out, size_t outlen, char *err,
                              size_t errlen);
/* A numeric /pretrained attribute (RS_PT_BOS_ID, ...) into *out; -1 naming
 * it when absent. */
int runread_pretrained_number(RunReader *r, const char *key, double *out, char *err, size_t errlen);
/* /pretrained/layer_window (a checkpoint's run): the keys a query of each
 * layer sees, 0 full causal, into *win (malloc'd, *n = its layers); 1 when
 * the run has none (a trained run, or inspected before it was written),
 * -1 with one line when it cannot be read. */
int runread_layer_window(RunReader *r, int **win, int *n, char *err, size_t errlen);
/* A string attribute of /protocol (RS_PR_*); -1 when the run has none. */
int runread_protocol_string(RunReader *r, const char *key, char *out, size_t outlen, char *err,
                            size_t errlen);
/* /data_files attribute key (runschema.h RS_DF_*): 0 with it in out, 1
 * when the run has no /data_files (older files, data without files), -1
 * with one line when the group is there without the key. */
int runread_data_file(RunReader *r, const char *key, char *out, size_t outlen, char *err,
                      size_t errlen);
/* The model's shape as /config states it (runfile_check.h RunConfigDims;
 * -1 for each attribute absent). */
void runread_config_dims(RunReader *r, RunConfigDims *c);
/* /summary attributes (doubles). 0 ok, -1 missing. */
int runread_summary(RunReader *r, const char *key, double *out, char *err, size_t errlen);

/* Probe steps present under /probe, ascending; *steps is malloc'd (NULL
 * when n == 0). 0 ok (zero probes is not an error), -1 on error. */
int runread_probe_steps(RunReader *r, long long **steps, int *n, char *err, size_t errlen);

/* One probe (ProbeRecord, runschema.h), every array malloc'd (NULL when
 * absent from the file). */

/* Read the probe at `step`, or the last one when step < 0. 0 ok, -1 err
 * (also when the run has no probes). Free with runread_probe_free. */
int runread_probe(RunReader *r, long long step, ProbeRecord *p, char *err, size_t errlen);
void runread_probe_free(ProbeRecord *p);
/* Layer l's query heads: its layer_heads entry, or H in a record without
 * them. Heads h >= this count are absent (NaN): a reader that loops over
 * heads loops to it, and a fraction of heads counts these only. */
int runread_layer_heads(const ProbeRecord *p, int l);
/* Layer l's own gate channels (probe_layer_channels): channels c >= this
 * count of its row of gate_channel_mean are absent (NaN). */
int runread_layer_channels(const ProbeRecord *p, int l);
/* Layer l's extra slots: its layer_slots entry, else the record's slots
 * (-1 in a file written before probes recorded them). */
int runread_layer_slots(const ProbeRecord *p, int l);
/* The present (layer, head) pairs of layers [l0, l1). */
int runread_heads_in(const ProbeRecord *p, int l0, int l1);

/* /metrics/train and /metrics/eval series (all arrays length n). */
typedef struct {
    size_t n;
    long long *step;
    double *loss, *lr, *grad_norm, *seconds;
    long long *tokens;
} RunTrain;
typedef struct {
    size_t n;
    long long *step;
    double *val_loss, *val_bpb;
} RunEval;
int runread_train(RunReader *r, RunTrain *t, char *err, size_t errlen);
int runread_eval(RunReader *r, RunEval *e, char *err, size_t errlen);
void runread_train_free(RunTrain *t);
void runread_eval_free(RunEval *e);

/* ---- additive: weights and long-context results (gatelab eval) ---- */

/* /params/<name> into out, which holds exactly the numel of shape[ndim];
 * -1 naming the tensor when it is missing or its shape differs. */
int runread_param(RunReader *r, const char *name, float *out, int ndim, const int *shape, char *err,
                  size_t errlen);

/* One /lceval/<mode>/L_<len> result (see src/runfile/runfile.h LcEvalData). */
typedef struct {
    int len, train_len;
    double val_loss, ppl, first_share, uniform_share, sink_rate, yarn_scale;
    long long n_seqs;
    int n_buckets;
    double *loss_by_bucket;            /* malloc'd [n_buckets] */
    int n_depths;                      /* 0: no needle result (runfile.h LcEvalData) */
    double *needle_depth, *needle_acc; /* malloc'd [n_depths] */
    long long needle_n;
} RunLcEval;
/* Lengths evaluated under /lceval/<mode>, ascending (*lens malloc'd, NULL
 * when none). 0 ok (none is not an error), -1 on error. */
int runread_lceval_lengths(RunReader *r, const char *mode, int **lens, int *n, char *err,
                           size_t errlen);
int runread_lceval(RunReader *r, const char *mode, int len, RunLcEval *e, char *err, size_t errlen);
void runread_lceval_free(RunLcEval *e);

/* ---- additive: /quant (gatelab eval --quant; names RS_Q_*) ---- */

/* /quant: the float pass of a quantized evaluation. */
typedef struct {
    int len, calib_batches;
    int keep_first; /* positions held out in the second pass of each mode (0: none) */
    long long n_seqs;
    double percentile, val_loss, ppl, inf_attn, inf_ffn, inf_layer, kurtosis_max;
} RunQuant;
/* /quant/<mode>: one quantized pass; the *_keep and sink_dloss fields are
 * NaN when the evaluation held nothing out. */
typedef struct {
    double val_loss, ppl, dloss;
    double val_loss_keep, dloss_keep, sink_dloss;
    int destroyed; /* 1/0, -1 absent (a file from before the flag) */
    /* eval --quant-source (source "" and the rest -1 / NaN when absent) */
    char source[48];
    int source_layer, n_tensors;
    double source_recovered;
} RunQuantMode;
/* 0 read, 1 absent (an older run file, or never evaluated), -1 naming the
 * group when it is malformed. */
int runread_quant(RunReader *r, RunQuant *q, char *err, size_t errlen);
int runread_quant_mode(RunReader *r, const char *mode, RunQuantMode *m, char *err, size_t errlen);

/* ---- additive: /intervene/<kind> (gatelab intervene; names RS_IV_*) ---- */

typedef struct {
    ProbeRecord probe; /* the rerun probe, arrays malloc'd */
    double loss;       /* mean CE predicting tokens 2..T-1 of the probe */
    long long loss_n;  /* predictions in that mean */
    int clip_k;        /* bos-clip's k, else 0 */
    char kind[64];     /* the kind's name (the group name where absent) */
    int layer;         /* the one layer changed; -1: every layer, or absent */
    double gate_const; /* gate-const's c; NaN: another kind, or absent */
    char heads[256];   /* head-zero's heads; "": another kind, or absent */
    double loss_none;  /* the unchanged rerun's loss; NaN: absent */
    double mact_abs;   /* mact-*: the |h| floor; NaN: another kind, or absent */
    double mact_ratio; /* mact-*: the factor over the median |h|; NaN likewise */
} RunIntervention;
/* The names of /intervene's groups, sorted (malloc'd array of malloc'd
 * strings: free with runread_names_free), into *names; their count, 0
 * when there is no /intervene, or -1 with one line in err. */
int runread_intervention_names(RunReader *r, char ***names, char *err, size_t errlen);
void runread_names_free(char **names, int n);
/* 1 when /intervene/<kind> exists, else 0. */
int runread_has_intervention(RunReader *r, const char *kind);
/* 0 ok; -1 naming the group when it is missing or malformed. Free with
 * runread_intervention_free. */
int runread_intervention(RunReader *r, const char *kind, RunIntervention *iv, char *err,
                         size_t errlen);
void runread_intervention_free(RunIntervention *iv);

/* ---- additive: /prompt/<name> (gatelab probe; names RS_PM_*) ---- */
/* 1 when /prompt/<name> exists, else 0. */
int runread_has_prompt(RunReader *r, const char *name);
/* Its probe (free with runread_probe_free) and its text attr into text
 * ("" for ids; text may be NULL); -1 naming the group when missing or
 * malformed. */
int runread_prompt(RunReader *r, const char *name, ProbeRecord *p, char *text, size_t textlen,
                   char *err, size_t errlen);

/* One /stream/W_<window> result (see src/runfile/runfile.h StreamData). */
typedef struct {
    int window, len, n_seqs, n_keep;
    int *keep;    /* [n_keep] */
    double *loss; /* [(n_keep + 1) * n_seqs]: row 0 dense */
    double delta, p;
} RunStream;
/* Windows evaluated under /stream, ascending (*w malloc'd, NULL and 0
 * when none). */
int runread_stream_windows(RunReader *r, int **w, int *n, char *err, size_t errlen);
/* 0 ok; -1 naming the group when it is missing or malformed. */
int runread_stream(RunReader *r, int window, RunStream *s, char *err, size_t errlen);
void runread_stream_free(RunStream *s);

/* Root attribute "status" of a run file into buf ("" when the attribute is
 * missing). -1 when the file cannot be opened or read as HDF5; HDF5's own
 * error stack is silenced. For the sweep's plan and the trainer's resume. */
int runfile_read_status(const char *h5path, char *buf, size_t len);

/* 1 when the run file already holds the top-level group NAME (/lceval or
 * /intervene, written by an earlier pass); 0 otherwise, also when it
 * cannot be opened. */
int runfile_has_group(const char *h5path, const char *name);
/* 1 when the run file's /lceval/plain holds a length and every length
 * there has a needle result (gatelab eval --needle); 0 otherwise, also
 * when it cannot be read. */
int runfile_has_needle(const char *h5path);

#endif
