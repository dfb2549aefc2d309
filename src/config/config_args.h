/* config_args.h: a Config from a preset file plus key=value settings, or from
 * a run file's recorded config text (config_args.c). */
#ifndef GATELAB_CONFIG_ARGS_H
#define GATELAB_CONFIG_ARGS_H

#include <stddef.h>
#include "config.h"

/* Defaults, then the preset file (may be NULL), then each "key=value" in
 * order; resolve derived values and validate. Reads no data: with
 * data=tokens and no vocab_size the vocab stays open (0) until
 * data_fill_vocab (data.h) reads it from the token files.
 * -1 with a one-line reason. */
int config_from_args(Config *cfg, const char *path, char **sets, int nsets, char *err,
                     size_t errlen);

/* The same from config text already in memory (a run file's recorded
 * config); name labels it in errors. -1 with a one-line reason. */
int config_from_text(Config *cfg, const char *text, const char *name, char *err, size_t errlen);

#endif
