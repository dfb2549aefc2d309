/* seedlist.h: the one reader of a sweep file's `seeds =` value, for the
 * sweep (src/sweep/sweepfile.c) and for the report's check of a
 * protocol's run list against the committed sweep files
 * (analysis/protocol/protocol_check.c): "1,2,3", "1001-1040" (a range, both ends
 * in it) or both mixed; decimal, non-negative, distinct. */
#ifndef GATELAB_SEEDLIST_H
#define GATELAB_SEEDLIST_H

#include <stddef.h>

/* The seeds of value, in order, into seeds[max] (*n of them). 0, or -1
 * with a one-line reason quoting the value ("bad seed 'x' in seeds = ...",
 * "seed 2 listed twice in ...", "too many seeds in ..."). */
int seed_list_parse(const char *value, unsigned long long *seeds, int max, int *n, char *why,
                    size_t whylen);

#endif
