/* sinks_field.h: the sections of `gatelab sinks` and `gatelab acts` for
 * the measures beyond position 0 (analysis/measures/sinkstats.h), text and JSON. */
#ifndef GATELAB_SINKS_FIELD_H
#define GATELAB_SINKS_FIELD_H

#include <jansson.h>

#include "runfile_read.h"

/* `sinks`: every key's share, the distance profile, secondary sinks and
 * the cosine to position 0, printed after the per-head table. */
void sf_sinks_text(const ProbeRecord *p);
/* The same into o's keys alpha_k, distance, secondary_sinks, bos_cosine
 * (null when the run file lacks the arrays). 0, or -1 out of memory. */
int sf_sinks_json(json_t *o, const ProbeRecord *p);

/* `acts`: the residual sinks per layer. */
void sf_acts_text(const ProbeRecord *p);
/* The same into o's key residual_sinks (null when absent). */
void sf_acts_json(json_t *o, const ProbeRecord *p);

#endif
