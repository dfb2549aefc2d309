/* figlabel.h: what a figure calls a run and its maps (figlabel.c), one
 * rule for the heatmap command and the report. */
#ifndef GATELAB_FIGLABEL_H
#define GATELAB_FIGLABEL_H

#include <stddef.h>

#include "runfile_read.h"

/* The name of run r in a figure: for a run of `gatelab inspect` the
 * model (ORG/NAME of a Hugging Face cache path models--ORG--NAME/...,
 * else the last component of its model directory); for a trained run
 * "VARIANT sSEED". */
void fig_run_label(RunReader *r, char *out, size_t outlen);

/* 1 when r was written by `gatelab inspect` (it has /pretrained). */
int fig_is_pretrained(RunReader *r);

/* What probe p's maps are, for a title: "attention" for a softmax's maps,
 * "proxy |a|/sum|a| maps" when the probe stored Gu et al.'s proxy (the
 * variant's maps are not a softmax's; docs/variants.md). */
const char *fig_map_kind(const ProbeRecord *p);

#endif
