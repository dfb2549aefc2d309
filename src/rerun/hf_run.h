/* hf_run.h: a run of `gatelab inspect` as the analysis commands reopen it
 * (intervene, eval, stream): the model directory it records and windows of
 * its input (the text or token file it records, or another text). */
#ifndef GATELAB_HF_RUN_H
#define GATELAB_HF_RUN_H

#include <stddef.h>

#include "hf_model.h"
#include "inspect_input.h"

/* 1 and the recorded model directory in dir when run is a `gatelab
 * inspect` run, 0 when it is not, -1 with err when it cannot be read. */
int hf_run_model_dir(const char *run, char *dir, size_t dirlen, char *err, size_t errlen);

/* n_seq windows of T tokens for model m (opened from model_dir): from
 * text (a file, through the snapshot's tokenizer, its BOS as inspect adds
 * it by default) when given, else from the input the run records. -1 with
 * one line in err. */
int hf_run_windows(const char *run, const char *text, const HfModel *m, const char *model_dir,
                   int T, int n_seq, HfWindows *w, char *err, size_t errlen);

#endif
