/* lceval_fixture.h: the /lceval group of a hand-built run file
 * (lceval_fixture.c). Test-only. */
#ifndef GATELAB_LCEVAL_FIXTURE_H
#define GATELAB_LCEVAL_FIXTURE_H

/* Adds to run file dir/name the /lceval of a run trained at 64: val loss at 64 and 512 (8x) per
 * mode. At 512 the buckets past T (1..7) average the given value, bucket 0 is 0.3 below it: the
 * degradation counts only the positions past T. The needle task at 512: exact-match shares 1, p512
 * / 4 and 0 at depths 0, 0.5 and 1. */
void add_lceval(const char *dir, const char *name, double p64, double p512, double y64,
                double y512);

#endif
