/* quant_print.h: the text table of `gatelab eval --quant` (quanteval.h's
 * result): a mode per row, with positions held out each mode's dloss with
 * them in float and its sink_dloss, the destroyed flag (explained below
 * the table only when some mode is destroyed), each searched mode's
 * source of the largest damage, and the float pass's statistics. */
#ifndef GATELAB_QUANT_PRINT_H
#define GATELAB_QUANT_PRINT_H

#include <stdio.h>

#include "forward.h"
#include "quanteval.h"

/* r of run (its ForwardInfo info) as text to f. */
void quant_print(FILE *f, const char *run, const ForwardInfo *info, const QuantEvalResult *r);

#endif
