/* sweepclaims.h: a sweep file's families held to its runs and to the
 * paper's claims (sweepclaims.c); private to the sweep parser. */
#ifndef GATELAB_SWEEPCLAIMS_H
#define GATELAB_SWEEPCLAIMS_H

#include <stddef.h>

#include "protocol.h"
#include "sweep.h"

/* 0 when every arm of p's compares and sink-free claims is a run of sw and
 * every claim is one the paper states (by the runs' variants,
 * protocol_claims_known); else -1 with "PATH:LINE: ..." naming the line. */
int sweep_protocol_arms(const Protocol *p, const Sweep *sw, const char *path, char *err,
                        size_t errlen);

/* The text protocol.ini holds after its "[primary]" header: primary's
 * lines, then "[secondary]" and second's when second is not NULL; malloc'd
 * (NULL when memory runs out). */
char *sweep_join_families(const char *primary, const char *second);

#endif
