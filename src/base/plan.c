/* plan.c: see plan.h. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

Plan plan_counter(PlanKind kind) { return (Plan){.kind = kind, .counting = 1}; }

Plan plan_heap(void) { return (Plan){.kind = PLAN_HEAP}; }

/* used + add, saturating at PLAN_TOO_MUCH. */
static size_t sat_add(size_t used, size_t add) {
    return add >= PLAN_TOO_MUCH - used ? PLAN_TOO_MUCH : used + add;
}

void *plan_take(Plan *p, size_t n, size_t size) {
    size_t bytes = size && n > PLAN_TOO_MUCH / size ? PLAN_TOO_MUCH : n * size;
    if (p->kind == PLAN_ARENA) {
        bytes = bytes >= PLAN_TOO_MUCH ? PLAN_TOO_MUCH
                                       : (bytes + PLAN_ALIGN - 1) & ~(size_t)(PLAN_ALIGN - 1);
        void *r = NULL;
        if (!p->counting) {
            if (!p->base || bytes > p->cap || p->used > p->cap - bytes) p->failed = 1;
            else r = p->base + p->used;
        }
        p->used = sat_add(p->used, bytes);
        return r;
    }
    if (n == 0) return NULL;
    void *r = NULL;
    if (!p->counting) {
        if (bytes >= PLAN_TOO_MUCH || posix_memalign(&r, PLAN_ALIGN, bytes) != 0) r = NULL;
        if (r) memset(r, 0, bytes);
        if (!r) {
            p->failed = 1;
            return NULL;
        }
    }
    p->used = sat_add(p->used, bytes);
    return r;
}

float *plan_floats(Plan *p, size_t n) { return plan_take(p, n, sizeof(float)); }

size_t plan_count(PlanFn fn, void *ctx) {
    Plan p = plan_counter(PLAN_ARENA);
    fn(&p, ctx);
    return p.used;
}

void *plan_build(PlanFn fn, void *ctx, size_t *bytes) {
    const size_t n = plan_count(fn, ctx);
    *bytes = 0;
    if (n >= PLAN_TOO_MUCH) return NULL;
    unsigned char *block = zalloc_aligned(n);
    if (!block) return NULL;
    Plan p = {.kind = PLAN_ARENA, .base = block, .cap = n};
    fn(&p, ctx);
    if (p.failed || p.used != n) { /* a layout that takes other buffers the second time */
        free(block);
        return NULL;
    }
    *bytes = n;
    return block;
}
