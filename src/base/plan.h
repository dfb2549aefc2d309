/* plan.h: the one memory plan behind every "bytes" estimate.
 *
 * A function that lays out a set of buffers describes each with plan_take
 * and runs twice over the same inputs: first on a counting Plan (no
 * memory; each take's bytes are added to used), then on a Plan that hands
 * memory out. What the count pass says is what the second pass takes, by
 * construction: the estimate (plan_count) and the allocation (plan_build)
 * are the same code. Two kinds of hand-out:
 *   arena: one zeroed 64-byte-aligned block of the counted size, each take
 *          the next slice, each slice rounded up to 64 bytes (one free);
 *   heap:  each take its own zeroed 64-byte-aligned allocation of exactly
 *          n * size bytes (arrays that are handed over and freed one by
 *          one with free()), counted without rounding.
 * A count saturates at PLAN_TOO_MUCH ("too much", never a wrapped small
 * number). used after a hand-out pass is its high-water mark, which the
 * tests compare with the count (tests/test_plan.c). */
#ifndef GATELAB_PLAN_H
#define GATELAB_PLAN_H

#include <stddef.h>
#include <stdint.h>

#define PLAN_ALIGN 64
#define PLAN_TOO_MUCH (SIZE_MAX / 8)

typedef enum { PLAN_ARENA, PLAN_HEAP } PlanKind;

typedef struct {
    PlanKind kind;
    int counting;        /* 1: only count (every take returns NULL) */
    unsigned char *base; /* arena hand-out: the block */
    size_t cap;          /* arena hand-out: its bytes */
    size_t used;         /* bytes taken so far: the count, or the high-water mark */
    int failed;          /* a hand-out take found no memory (or passed cap) */
} Plan;

/* A counting plan of that kind. */
Plan plan_counter(PlanKind kind);
/* A heap plan that hands out (each take its own allocation). */
Plan plan_heap(void);
/* n elements of size bytes: NULL while counting; zeroed memory otherwise
 * (NULL, and failed set, when there is none). n = 0 takes nothing and
 * returns NULL (heap) or the current slice (arena, zero bytes). */
void *plan_take(Plan *p, size_t n, size_t size);
/* plan_take of n floats. */
float *plan_floats(Plan *p, size_t n);

/* A layout: describes its buffers to p (and points its fields at them). */
typedef void (*PlanFn)(Plan *p, void *ctx);
/* The bytes fn's arena takes (its count pass). */
size_t plan_count(PlanFn fn, void *ctx);
/* fn's arena: counted, one zeroed aligned block of that size allocated,
 * fn run again over it. Returns the block (free() it) and its bytes in
 * *bytes, or NULL when memory runs out or the count is PLAN_TOO_MUCH. */
void *plan_build(PlanFn fn, void *ctx, size_t *bytes);

#endif
