/* hf_split.c: a Split pre-tokenizer's delimiter behaviours (hf_split.h). */
#include "hf_split.h"

#include <string.h>

int hf_split_behavior(const char *name) {
    static const char *const names[] = {"Isolated", "Removed", "MergedWithPrevious",
                                        "MergedWithNext", "Contiguous"};
    for (int i = 0; i < (int)(sizeof names / sizeof *names); i++)
        if (strcmp(name, names[i]) == 0) return i;
    return -1;
}

/* Left to right: a span joins the last piece when join says so. */
static size_t fold(HfSpan *v, size_t n, int contiguous) {
    size_t out = 0;
    int prev = 0;
    for (size_t i = 0; i < n; i++) {
        HfSpan s = v[i];
        int join = contiguous ? s.match == prev : s.match && !prev;
        if (join && out > 0) v[out - 1].end = s.end;
        else v[out++] = s;
        prev = s.match;
    }
    return out;
}

/* Right to left: a match joins the piece after it. */
static size_t fold_next(HfSpan *v, size_t n) {
    size_t out = n; /* pieces fill v[out..n) from the right */
    int prev = 0;
    for (size_t i = n; i-- > 0;) {
        HfSpan s = v[i];
        if (s.match && !prev && out < n) v[out].start = s.start;
        else v[--out] = s;
        prev = s.match;
    }
    memmove(v, v + out, (n - out) * sizeof *v);
    return n - out;
}

size_t hf_split_apply(HfSpan *v, size_t n, HfSplitBehavior b, int invert) {
    if (invert)
        for (size_t i = 0; i < n; i++) v[i].match = !v[i].match;
    switch (b) {
    case HF_SPLIT_REMOVED: {
        size_t out = 0;
        for (size_t i = 0; i < n; i++)
            if (!v[i].match) v[out++] = v[i];
        return out;
    }
    case HF_SPLIT_MERGED_PREV: return fold(v, n, 0);
    case HF_SPLIT_MERGED_NEXT: return fold_next(v, n);
    case HF_SPLIT_CONTIGUOUS: return fold(v, n, 1);
    default: return n;
    }
}
