/* confirm_tests.h: the primary family's tests (confirm_tests.c), each by
 * the test its protocol declares, with the verdicts a test cannot reach
 * found before it is read ("untestable here"); report_confirm.c writes
 * them. */
#ifndef GATELAB_CONFIRM_TESTS_H
#define GATELAB_CONFIRM_TESTS_H

#include "protocol.h"
#include "report_priv.h"
#include "stats.h"

#define CONFIRM_ALPHA 0.05
#define CONFIRM_MAX_SEEDS 256
#define CONFIRM_MAX_TESTS (PROTO_MAX * PM_COUNT)

/* One primary test: (comparison, metric) under the metric's test. */
typedef struct {
    int compare;
    ProtoMetric metric;
    ProtoTest test;
    int claim;                         /* index of the paper's claim on it, -1: none */
    int one_sided;                     /* tested one-sided, in the claim's direction */
    int na, nb;                        /* finite values per arm */
    int pairs, unpaired;               /* paired tests: seeds in both arms, seeds in one only */
    int ka, kb;                        /* good_regime: runs in the good regime */
    double mean_a, sd_a, mean_b, sd_b; /* good_regime: shares */
    StatsCI ci;                        /* mean(a) - mean(b), bootstrap (non-binary metrics) */
    int tested;                        /* p was computed */
    double p, holm;                    /* its p and the Holm-adjusted p (NaN: untested) */
    double floor_p;                    /* the smallest p the test can reach (0: none) */
    double task_floor;                 /* val_loss: the task's Bayes loss (NaN: unknown) */
    int untestable;                    /* cannot reject by construction: why says why */
    char why[320];
} PTest;

/* The family of pr over the sorted rows: one PTest per (compare, metric)
 * into t[CONFIRM_MAX_TESTS], Holm-adjusted across all; returns how many. */
int confirm_tests(const Row *rows, int n, const Protocol *pr, PTest *t);

/* Start row of the group named run, or -1. */
int confirm_group(const Row *rows, int n, const char *run);
/* The finite values of metric m (good_regime from pr's threshold) over
 * group a's seeds into v[CONFIRM_MAX_SEEDS] and, when seeds is not NULL,
 * their seeds; returns how many. */
int confirm_values(const Row *rows, int n, int a, const Protocol *pr, ProtoMetric m, double *v,
                   long long *seeds);

#endif
