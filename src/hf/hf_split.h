/* hf_split.h: the delimiter behaviours of a tokenizer.json Split
 * pre-tokenizer. A regex cuts the text into spans, matches and the gaps
 * between them, in order and covering it; the behaviour (and invert, which
 * swaps which spans count as matches) decides which pieces go on:
 *   Isolated            every span is a piece
 *   Removed             the matches are dropped, the gaps are pieces
 *   MergedWithPrevious  a match joins the piece before it
 *   MergedWithNext      a match joins the piece after it
 *   Contiguous          runs of matches (and of gaps) become one piece
 * as the Rust tokenizers' SplitDelimiterBehavior does. */
#ifndef GATELAB_HF_SPLIT_H
#define GATELAB_HF_SPLIT_H

#include <stddef.h>

typedef enum {
    HF_SPLIT_ISOLATED = 0,
    HF_SPLIT_REMOVED,
    HF_SPLIT_MERGED_PREV,
    HF_SPLIT_MERGED_NEXT,
    HF_SPLIT_CONTIGUOUS
} HfSplitBehavior;

typedef struct {
    size_t start, end; /* bytes [start, end) of the text */
    int match;         /* 1: a match of the regex (after invert) */
} HfSpan;

/* The behaviour a tokenizer.json names ("Isolated", ...); -1 if unknown. */
int hf_split_behavior(const char *name);

/* Apply behaviour b to v[n] in place (after flipping every match flag when
 * invert); returns the number of pieces left in v[0..). */
size_t hf_split_apply(HfSpan *v, size_t n, HfSplitBehavior b, int invert);

#endif
