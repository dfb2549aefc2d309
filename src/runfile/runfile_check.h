/* runfile_check.h: the one validation layer for what a run file says
 * about itself. The reader (runfile_read.c) checks each dataset's class,
 * rank and size as it reads it; this layer checks what the datasets and
 * attributes claim against each other and against /config before any tool
 * uses them: no external links, a probe's N, T, L, H and token ids, the
 * config a model is rebuilt from, and that weights are finite. Every
 * refusal is one line naming the file and the dataset or attribute. */
#ifndef GATELAB_RUNFILE_CHECK_H
#define GATELAB_RUNFILE_CHECK_H

#include <hdf5.h>
#include <stddef.h>

#include "config.h"
#include "runschema.h"

/* What /config says about the model's shape (the writer's attributes);
 * -1 for an attribute that is absent or not an integer (runs of
 * `gatelab inspect` have no /config). Filled by runread_config_dims. */
typedef struct {
    long long n_layers, n_heads, d_model, vocab_size, seq_len, probe_n;
} RunConfigDims;

/* Refuse a file holding an HDF5 external link anywhere (HDF5 would follow
 * it into another file). 0, or -1 naming the link. A file whose links
 * cannot be listed passes here: the reads that follow report it. */
int runcheck_links(hid_t file, const char *path, char *err, size_t errlen);

/* VALUE, read from attribute WHAT ("/config/normaliser"), is one of the
 * NULL-terminated vocab. 0, or -1 with "PATH: WHAT is "VALUE", not one of
 * a, b, ..." (VALUE shortened, its unprintable bytes shown as '?'). */
int runcheck_vocab(const char *path, const char *what, const char *value, const char *const *vocab,
                   char *err, size_t errlen);

/* Every enumerated attribute of the file against its vocabulary: the root
 * status and source, /pretrained input_kind (each when present) and each
 * /config key that config_key_vocab names.
 * An enumerated attribute that is there but cannot be read as a string is
 * refused too. 0, or -1 naming the attribute. */
int runcheck_enums(hid_t file, const char *path, char *err, size_t errlen);

/* A probe of run file path read from group gname ("probe/step_N",
 * "intervene/KIND"): at least one sequence (N >= 1) of at least two
 * tokens (T >= 2), token ids >= 0; and as far as /config (c) says,
 * N <= probe_n, L = n_layers, H = n_heads and every token id < vocab_size
 * (when that is > 0). 0, or -1 naming the dataset and the bound. */
int runcheck_probe(const char *path, const char *gname, const ProbeRecord *p,
                   const RunConfigDims *c, char *err, size_t errlen);

/* The config a model is built with (the /config text parsed into cfg, or
 * the config a resume was given) against run file path's /config
 * attributes (c), which the rest of the file was checked with: n_layers,
 * n_heads, d_model, vocab_size, seq_len and probe_n must be there and
 * agree. 0, or -1 naming the attribute. */
int runcheck_config(const char *path, const RunConfigDims *c, const Config *cfg, char *err,
                    size_t errlen);

/* Every value of x[n] finite; -1 naming path, what (a tensor) and the
 * first bad index and value otherwise. */
int runcheck_finite(const char *path, const char *what, const float *x, size_t n, char *err,
                    size_t errlen);

#endif
