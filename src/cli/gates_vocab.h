/* gates_vocab.h: `gatelab gates RUN.h5 --vocab`: the layer-0 gate over
 * the whole vocabulary (rerun's vocabgate.h), as text or JSON, each listed
 * token with its text where the run has one. */
#ifndef GATELAB_GATES_VOCAB_H
#define GATELAB_GATES_VOCAB_H

/* Run every token of run's vocabulary through layer 0's gate and print the
 * summary (json: one object). model (or NULL: the recorded one) and
 * threads are for an inspected run's checkpoint. Returns the exit code:
 * 0, 1 when the output could not be written, 2 for a refused run or a
 * failed pass (one line on stderr), 130 when interrupted. */
int gates_vocab(const char *run, const char *model, int threads, int json);

#endif
