/* protocol_claims.c: a protocol's claims held to the paper's claims table
 * (paper_tables.h), by the variants of their arms. */
#include <stdio.h>

#include "paper_tables.h"
#include "protocol.h"
#include "util.h"

/* The variant of run name, "?" when unknown. */
static const char *variant_or(ProtoVariantFn fn, void *user, const char *name) {
    const char *v = fn ? fn(user, name) : NULL;
    return v ? v : "?";
}

const PaperClaim *protocol_claim_row(const Protocol *p, int i, ProtoVariantFn fn, void *user) {
    const ProtoClaim *c = &p->claims[i];
    const char *arm = c->compare >= 0 ? p->compares[c->compare].arm : c->arm;
    const char *ref = c->compare >= 0 ? p->compares[c->compare].ref : NULL;
    return paper_claim_find(proto_metric_name(c->metric), variant_or(fn, user, arm),
                            proto_rel_char(c->rel), ref ? variant_or(fn, user, ref) : "");
}

int protocol_claims_known(const Protocol *p, ProtoVariantFn fn, void *user, char *err,
                          size_t errlen) {
    for (int i = 0; i < p->n_claims; i++) {
        if (protocol_claim_row(p, i, fn, user)) continue;
        const ProtoClaim *c = &p->claims[i];
        const char *arm = c->compare >= 0 ? p->compares[c->compare].arm : c->arm;
        if (c->rel == PR_SINK_FREE)
            return seterr(
                err, errlen,
                "%d: paper = f_attn %s sink-free: the paper states no such claim for "
                "variant %s (its claims: analysis/protocol/paper_tables.c, docs/paper-tables.md)",
                c->line, arm, variant_or(fn, user, arm));
        const char *ref = p->compares[c->compare].ref;
        return seterr(err, errlen,
                      "%d: paper = %s %s %c %s: the paper states no such claim (variants %s and "
                      "%s; its claims: analysis/protocol/paper_tables.c, docs/paper-tables.md)",
                      c->line, proto_metric_name(c->metric), arm, proto_rel_char(c->rel), ref,
                      variant_or(fn, user, arm), variant_or(fn, user, ref));
    }
    return 0;
}
