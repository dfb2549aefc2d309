/* cmd_common.h: what several subcommands share. */
#ifndef GATELAB_CMD_COMMON_H
#define GATELAB_CMD_COMMON_H

#include <stddef.h>
#include "config.h"

/* Defaults, then the preset file (may be NULL), then each "key=value" in
 * order; resolve derived values (the vocab from the data) and validate.
 * -1 with a one-line reason. */
int resolve_config(Config *cfg, const char *path, char **sets, int nsets,
                   char *err, size_t errlen);

/* The same from config text already in memory (a run file's recorded
 * config); name labels it in errors. -1 with a one-line reason. */
int resolve_config_text(Config *cfg, const char *text, const char *name,
                        char *err, size_t errlen);

#endif
