/* hf_ovrank.h: a checkpoint's W_V W_O effective rank per head. */
#ifndef GATELAB_HF_OVRANK_H
#define GATELAB_HF_OVRANK_H

#include <stddef.h>

#include "hf_model.h"
#include "probe_reduce.h"

/* Every head's W_V W_O effective rank into acc (probe_acc_ov_erank);
 * -1 with one line in err. */
int hf_ov_erank(HfModel *m, ProbeAcc *acc, char *err, size_t errlen);

#endif
