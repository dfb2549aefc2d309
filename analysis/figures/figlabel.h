/* figlabel.h: what a figure calls a run and its maps (figlabel.c), one
 * rule for the heatmap command and the report. */
#ifndef GATELAB_FIGLABEL_H
#define GATELAB_FIGLABEL_H

#include <stddef.h>

#include "runfile_read.h"

/* The name of run r in a figure: for a run of `gatelab inspect` the
 * model and snapshot (a Hugging Face cache path
 * models--ORG--NAME/snapshots/HASH[/SUB] gives "ORG/NAME[/SUB] @HASH7",
 * another directory its last two components) and the output gate
 * config.json names ("..., gate headwise"; run files without that
 * attribute: the model alone); for a trained run "VARIANT sSEED". */
void fig_run_label(RunReader *r, char *out, size_t outlen);

/* 1 when r was written by `gatelab inspect` (it has /pretrained). */
int fig_is_pretrained(RunReader *r);

/* What probe p's maps are, for a title: "attention" for a softmax's maps,
 * "proxy |a|/sum|a| maps" when the probe stored Gu et al.'s proxy (the
 * variant's maps are not a softmax's; docs/variants.md). */
const char *fig_map_kind(const ProbeRecord *p);

#endif
