/* runfile.h: the HDF5 run file, one per run (schema in README "Run file").
 *
 *  /                 attrs: schema="gatelab-run", schema_version, variant,
 *                    seed, data_seed, created, gatelab_version, n_params,
 *                    n_params_added, status (running|done|diverged; last)
 *  /config           one typed attr per key, attr "text" (resolved INI)
 *  /metrics/train/{step,loss,lr,grad_norm,tokens,seconds}  extendible 1-D
 *  /metrics/eval/{step,val_loss,val_bpb}                   extendible 1-D
 *  /probe/step_NNNNNNN/  see ProbeData
 *  /params/<name>    final weights, PyTorch [out,in] shapes
 *  /summary          attrs: steps_done, tokens_per_sec, wall_seconds,
 *                    final_val_loss, diverged_step (-1), spikes,
 *                    gflops_per_sec
 * Every dataset is chunked and compressed (shuffle + deflate).
 */
#ifndef GATELAB_RUNFILE_H
#define GATELAB_RUNFILE_H

#include <stddef.h>
#include <stdint.h>
#include "config.h"
#include "model.h"

#define RUNFILE_SCHEMA "gatelab-run"
#define RUNFILE_SCHEMA_VERSION 1

typedef struct RunFile RunFile;

/* Create a new run file. Refuses an existing path unless force.
 * -1 with a one-line reason naming the path. */
RunFile *runfile_create(const char *path, const Config *cfg,
                        const Model *m, int force, char *err, size_t errlen);
/* Reopen for resume after `step` completed steps (the checkpoint's step):
 * check the schema, keep train rows with step < `step` and eval rows and
 * probe groups with step <= `step`; drop the rest. */
RunFile *runfile_reopen(const char *path, long long step, char *err,
                        size_t errlen);
int runfile_close(RunFile *rf);

int runfile_set_status(RunFile *rf, const char *status);
int runfile_append_train(RunFile *rf, long long step, double loss, double lr,
                         double grad_norm, long long tokens, double seconds);
int runfile_append_eval(RunFile *rf, long long step, double val_loss,
                        double val_bpb);

/* What one probe writes (trainer side computes, runfile stores). */
typedef struct {
    long long step;
    int L, H, N, T;            /* probe sequences N of length T */
    const int *tokens;         /* [N, T] */
    const float *attention;    /* [L, H, M, M] mean over sequences (proxy
                                  map when proxy); M = maps_len or T */
    int maps_len;              /* 0: full maps (M = T); else the maps cover
                                  only the first maps_len positions */
    const float *attention_slot; /* [L, H, T] or NULL */
    const float *first_col;    /* [N, L, H, T]: A[t, 0] per sequence */
    const float *alpha0;       /* [L, H] */
    int proxy;                 /* 1: Gu et al. proxy |a|/sum|a| was used */
    const char *normaliser;
    /* gates (NULL when the variant has no gate) */
    int gate_channels;         /* C */
    int gate_heads;            /* how many heads the channels split into */
    int gate_bounded;          /* scores in [0,1] (sigmoid family) */
    const float *gate_sample;  /* [L, Ns, T, C] scores of first Ns seqs */
    int gate_sample_n;         /* Ns */
    const double *gate_hist;   /* [L, 50] counts over [0,1] */
    const double *gate_channel_mean; /* [L, C] */
    const double *gate_below;  /* [L, 4]: fraction < 0.5, 0.1, 1e-2, 1e-3 */
    const double *gate_stats;  /* [L, 4]: mean, min, max, count */
    /* hidden-state statistics of each block's output, mean over seqs */
    const double *h_max;       /* [L] max |h| */
    const double *h_median;    /* [L] median |h| */
    const double *h_top3;      /* [L, 3] */
    const double *h_kurtosis;  /* [L] */
    const double *h_norm_ratio;/* [L] */
} ProbeData;
int runfile_write_probe(RunFile *rf, const ProbeData *p);

/* Final weights under /params, one dataset per ParamInfo. */
int runfile_write_params(RunFile *rf, const Model *m);
/* Summary attributes (doubles). */
int runfile_set_summary(RunFile *rf, const char *key, double value);

/* Last error message from the module (one line). */
const char *runfile_error(void);

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
int checkpoint_save(const char *run_path, const CheckpointOut *c,
                    const char *config_text, char *err, size_t errlen);
/* Loads into caller buffers of n floats; fills *step etc. Also returns the
 * stored config text (malloc'd) so resume can refuse a changed config. */
int checkpoint_load(const char *run_path, float *params, float *m, float *v,
                    size_t n, long long *step, long long *tokens,
                    double *seconds, char **config_text, char *err,
                    size_t errlen);
int checkpoint_exists(const char *run_path);


/* ---- long-context evaluation (gatelab eval) ----
 * /lceval/<mode>/L_<len>  attrs: val_loss, ppl, first_share, uniform_share,
 *                         sink_rate_0.3, yarn_scale, n_seqs, train_len
 *                         dataset loss_by_bucket [n_buckets]: mean loss over
 *                         positions [i*train_len, (i+1)*train_len)
 * Written into an existing, closed run file; only /lceval is touched. */
typedef struct {
    const char *mode;      /* "plain" | "yarn" */
    int len, train_len;
    double val_loss, ppl, first_share, uniform_share, sink_rate, yarn_scale;
    long long n_seqs;
    int n_buckets;
    const double *loss_by_bucket; /* [n_buckets] */
} LcEvalData;
int runfile_write_lceval(const char *path, const LcEvalData *d, char *err,
                         size_t errlen);

#endif
