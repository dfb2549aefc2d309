/* confirm_tests.h: the primary family's tests (confirm_tests.c), each by
 * the test its protocol declares, with the verdicts a test cannot reach
 * found before it is read ("untestable here"); report_confirm.c writes
 * them. */
#ifndef GATELAB_CONFIRM_TESTS_H
#define GATELAB_CONFIRM_TESTS_H

#include "protocol.h"
#include "protocol_pin.h" /* CONFIRM_ALPHA */
#include "report_priv.h"
#include "stats.h"

#define CONFIRM_MAX_SEEDS 256
#define CONFIRM_MAX_TESTS PROTO_MAX /* one a claim */

/* One primary test: a claim of the protocol (a `<`, `>` or sink-free
 * claim; `~` claims are equivalence tests, report_confirm.c) under its
 * metric's declared test. */
typedef struct {
    int compare; /* the claim's compare (-1: sink-free, one arm) */
    ProtoMetric metric;
    ProtoTest test;
    int claim;                         /* index of the paper's claim it tests */
    int inter;                         /* an interaction's index (-1: none) */
    int one_sided;                     /* tested one-sided, in the claim's direction */
    int na, nb;                        /* finite values per arm (paired: the pairs) */
    int va, vb;                        /* finite values per arm before pairing */
    int pairs, unpaired;               /* paired tests: seeds in both arms, seeds in one only */
    int ka, kb;                        /* good_regime: runs in the good regime */
    double mean_a, sd_a, mean_b, sd_b; /* paired: over the pairs; good_regime: shares */
    /* The test's own estimate of arm - reference and its 95% interval:
     * Hodges-Lehmann (wilcoxon, exact interval), the mean paired difference
     * (paired-t, t interval), the mean difference (welch, mann-whitney:
     * bootstrap interval), the difference of shares (fisher: no interval).
     * Sink-free: of F-Attn / uniform share - (1 + margin). */
    double est, lo, hi;
    int dir;           /* -1: the test's statistic says arm < reference, +1: >, 0: neither */
    int tested;        /* p was computed */
    double p, holm;    /* its p and the Holm-adjusted p (NaN: untested or left out) */
    double floor_p;    /* the smallest p the test can reach (0: none) */
    int left_out;      /* Tarone: floor_p cannot reach the family's bound; not in Holm */
    double task_floor; /* val_loss: the task's Bayes loss (NaN: unknown) */
    int untestable;    /* cannot reject by construction: why says why */
    char why[320];
} PTest;

/* The family of pr's claims over the sorted rows: one PTest per `<`, `>`,
 * sink-free or interaction claim (an interaction: one sample of d =
 * (arm2 - ref2) - (arm1 - ref1) per seed against its bound) into t[CONFIRM_MAX_TESTS], in the
 * claims' order; tests whose smallest attainable p cannot reach the bound are left out (Tarone),
 * Holm across the rest. Returns how many. */
int confirm_tests(const Row *rows, int n, const Protocol *pr, PTest *t);

/* Whether run w counts in pr's tests: a claim of the paper is about its
 * architecture, so the primary family takes the runs that attend as the
 * paper's (row_paper_arch); the [secondary] family, questions of this
 * study, takes every run of its arms. */
int confirm_counts(const Row *w, const Protocol *pr);
/* How many runs of the arms pr's claims name do not count for it
 * (confirm_counts), each arm once. */
int confirm_other_arch(const Row *rows, int n, const Protocol *pr);

/* Start row of the group named run, or -1. */
int confirm_group(const Row *rows, int n, const char *run);
/* The finite values of metric m (good_regime from pr's threshold) over
 * group a's seeds that count for pr (confirm_counts) into v[CONFIRM_MAX_SEEDS] and, when seeds is
 * not NULL, their seeds; returns how many. */
int confirm_values(const Row *rows, int n, int a, const Protocol *pr, ProtoMetric m, double *v,
                   long long *seeds);

/* The pairs by seed of a (seeds sa) and b (seeds sb), in place: a[k],
 * b[k] share a seed; returns how many. */
int confirm_pairs(double *a, const long long *sa, int na, double *b, const long long *sb, int nb);

#endif
