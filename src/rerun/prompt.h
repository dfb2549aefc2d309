/* prompt.h: one prompt of the user's through a run's model (gatelab
 * probe): a text through the run's own tokenizer (forward.h encode: bytes
 * for a byte-level run, tokenizer.json for an inspected checkpoint) or
 * token ids, run as one probe window with full maps by the probe code of
 * its weight source (the same as /probe's and /intervene's), and the
 * tokens' labels for tables and figure axes. Nothing here writes the run
 * file: the caller stores the result (runfile_write_prompt). */
#ifndef GATELAB_PROMPT_H
#define GATELAB_PROMPT_H

#include <stddef.h>

#include "forward.h"
#include "runschema.h"

#define PROMPT_MIN_TOKENS 2     /* a first-token share needs a query after position 0 */
#define PROMPT_NAME_MAX 64      /* a /prompt group's name */
#define PROMPT_LABEL_MAX 64     /* bytes of one label (UTF-8) */
#define PROMPT_LABEL_WIDTH 8    /* characters of a label on a figure's axis */
#define PROMPT_TEXT_MAX 1048576 /* bytes of --text */

typedef struct {
    ProbeRecord probe; /* N = 1, M = T: full maps; arrays malloc'd */
    double loss;       /* mean CE predicting tokens 1..T-1 */
    long long loss_n;
    int over_train; /* 1: T is past a trained RoPE run's training length */
} PromptResult;

/* ids[T] through f, one window of T tokens with the full maps, the
 * record's step `step`. `what` names the option that gave them (--text,
 * --tokens) in refusals: fewer than PROMPT_MIN_TOKENS, an id outside the
 * vocabulary, more than the model's positions, too little memory. -1
 * with one line in err. */
int prompt_run(Forward *f, const int *ids, int T, long long step, const char *what, PromptResult *r,
               char *err, size_t errlen);
void prompt_free(PromptResult *r);

/* "--tokens ID,ID,...": the ids into a malloc'd *ids of *n; -1 with one
 * line naming the bad entry (not an integer, negative, empty, trailing
 * comma). */
int prompt_parse_ids(const char *s, int **ids, int *n, char *err, size_t errlen);

/* Token id's label, UTF-8 into out (NUL-terminated): its bytes (f's
 * piece op) with a space as U+2423 (an open box), \n \t \r, other
 * control bytes and bytes that are not UTF-8 as \xNN; the id as "#ID"
 * where f has no spelling. width > 0: at most width characters, a longer
 * label cut with a closing U+2026 (...). */
void prompt_label(Forward *f, int id, int width, char *out, size_t len);

/* A /prompt group name from text (lower-case letters and digits, runs of
 * anything else one '-', at most 32 characters) or, when text gives none,
 * "tokens-" and the first ids; into out. */
void prompt_default_name(const char *text, const int *ids, int n, char *out, size_t len);

/* 0 when name can be a /prompt group's: 1..PROMPT_NAME_MAX - 1 bytes of
 * [A-Za-z0-9._-], not "." or ".."; else -1 with one line naming it. */
int prompt_check_name(const char *name, char *err, size_t errlen);

#endif
