/* head_probe_print.h: the head probes of one probe record as text and
 * --json, for `gatelab sinks` (key and value norms, dormant heads), `acts`
 * (head output norms, W_V W_O effective rank) and `gates` (the gate at
 * position 0 against the rest). An array the run file lacks prints as
 * "not stored" (text) or null (--json), never as zero. */
#ifndef GATELAB_HEAD_PROBE_PRINT_H
#define GATELAB_HEAD_PROBE_PRINT_H

#include "cli_json.h"
#include "runfile.h"

void hp_sinks_text(const ProbeRecord *p);
void hp_sinks_json(json_t *o, const ProbeRecord *p);
void hp_acts_text(const ProbeRecord *p);
void hp_acts_json(json_t *o, const ProbeRecord *p);
void hp_gates_text(const ProbeRecord *p);
void hp_gates_json(json_t *o, const ProbeRecord *p);

#endif
