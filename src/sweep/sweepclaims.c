/* sweepclaims.c: a sweep's protocol against its runs and the paper's
 * claims table (sweepclaims.h). */
#include "sweepclaims.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int is_run(const Sweep *sw, const char *name) {
    for (int i = 0; i < sw->n_runs; i++)
        if (!strcmp(sw->runs[i].name, name)) return 1;
    return 0;
}

/* ProtoVariantFn over the runs of a Sweep: the last variant= they set. */
static const char *run_variant(void *user, const char *name) {
    const Sweep *sw = user;
    const char *v = NULL;
    for (int i = 0; i < sw->n_runs && !v; i++)
        for (int k = 0; !strcmp(sw->runs[i].name, name) && k < sw->runs[i].n_sets; k++)
            if (!strncmp(sw->runs[i].sets[k], "variant=", 8)) v = sw->runs[i].sets[k] + 8;
    return v;
}

int sweep_protocol_arms(const Protocol *p, const Sweep *sw, const char *path, char *err,
                        size_t errlen) {
    for (int i = 0; i < p->n_compares; i++) {
        const ProtoCompare *pc = &p->compares[i];
        const char *no = !is_run(sw, pc->arm) ? pc->arm : !is_run(sw, pc->ref) ? pc->ref : NULL;
        if (no)
            return seterr(err, errlen,
                          "%s:%d: compare = %s vs ...: '%s' is no [run NAME] of this sweep", path,
                          pc->line, pc->arm, no);
    }
    for (int i = 0; i < p->n_claims; i++)
        if (p->claims[i].compare < 0 && !is_run(sw, p->claims[i].arm))
            return seterr(err, errlen,
                          "%s:%d: paper = f_attn %s sink-free: no [run %s] in this sweep", path,
                          p->claims[i].line, p->claims[i].arm, p->claims[i].arm);
    for (int i = 0; i < p->n_inter; i++) {
        const ProtoInteraction *x = &p->inter[i];
        const char *arms[4] = {x->arm2, x->ref2, x->arm1, x->ref1};
        for (int k = 0; k < 4; k++)
            if (!is_run(sw, arms[k]))
                return seterr(err, errlen,
                              "%s:%d: interaction = ...: '%s' is no [run NAME] of this sweep", path,
                              x->line, arms[k]);
    }
    char why[400];
    if (protocol_claims_known(p, run_variant, (void *)sw, why, sizeof why) != 0)
        return seterr(err, errlen, "%s:%s", path, why);
    return 0;
}

char *sweep_join_families(const char *primary, const char *second) {
    size_t n = strlen(primary) + (second ? strlen(second) + 16 : 0) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s%s", primary, second ? "[secondary]\n" : "", second ? second : "");
    return s;
}
