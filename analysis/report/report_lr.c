/* report_lr.c: the "Learning-rate sensitivity" section of REPORT.md, for a
 * directory where some variant was trained at LR_MIN_RATES or more learning
 * rates (experiments/lr-sensitivity.sweep). Only arms trained at two or
 * more rates enter the section (an arm at one rate has sensitivity 0 by
 * definition); the others are named and left out.
 *
 * Stability as Wortsman et al. (2023, "Small-scale proxies for large-scale
 * Transformer training instabilities") measure it. For one seed of one arm
 * (variant) trained at every rate eta of the grid, with final loss
 * l(eta) (the last val loss; a diverged run counts as l0) and l0 the loss
 * at the first step:
 *   LR sensitivity = mean over eta of min(l(eta), l0) - min over eta of l(eta).
 * Lower is more stable. Per arm the section gives the final loss against
 * the rate with a 95% t-interval over seeds, the diverged and the unstable
 * runs (instability.h: final val loss above the arm's best by more than
 * UNSTABLE_MARGIN), and the largest attention logit (max_logit, the
 * instability that paper names); then it tests each arm against the
 * `baseline` arm of its architecture as it attends (an arm is a variant
 * under one architecture, row_arch_note) on LR sensitivity (one declared test: Welch's t-test on
 * the log of each seed's sensitivity, one-sided, arm below baseline) and on unstable runs (Fisher's
 * exact test, two-sided), Holm-corrected across those tests. The section is exploratory: it is no
 * family of the protocol and states no claim of the paper (a claim is
 * tested only in the confirmatory headline, report_confirm.c). */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instability.h"
#include "metrics.h"
#include "report_priv.h"
#include "stats.h"

#define LR_MIN_RATES 3
#define LR_MAX_RATES 16
#define LR_MAX_ARMS 16
#define LR_MAX_SEEDS 64
#define ALPHA 0.05

/* One arm: a variant under one architecture as it attends (row_arch_note:
 * arch, "" for the paper's), named "variant (window 16)" off the paper's;
 * its rates (ascending), seeds, and the run of each (seed, rate). */
typedef struct {
    const char *variant;
    char arch[RS_N_ARCH * 32], name[320];
    int nlr, nseed;
    double lr[LR_MAX_RATES];
    long long seed[LR_MAX_SEEDS];
    const Row *run[LR_MAX_SEEDS][LR_MAX_RATES];
    double sens[LR_MAX_SEEDS]; /* per seed with every rate; NaN otherwise */
    int nsens, diverged, unstable, runs;
} Arm;

static int is_diverged(const Row *w) {
    return !strcmp(w->status, "diverged") || !isfinite(w->val_loss);
}

static int index_of(const double *v, int n, double x) {
    for (int i = 0; i < n; i++)
        if (cfg_eq(v[i], x)) return i;
    return -1;
}

static void add_rate(Arm *a, double lr) {
    if (index_of(a->lr, a->nlr, lr) >= 0 || a->nlr == LR_MAX_RATES) return;
    int i = a->nlr++;
    while (i > 0 && a->lr[i - 1] > lr) a->lr[i] = a->lr[i - 1], i--;
    a->lr[i] = lr;
}

static int seed_slot(Arm *a, long long seed) {
    for (int i = 0; i < a->nseed; i++)
        if (a->seed[i] == seed) return i;
    if (a->nseed == LR_MAX_SEEDS) return -1;
    a->seed[a->nseed] = seed;
    return a->nseed++;
}

/* The arm of w among arms[na]: the same variant and architecture; -1. */
static int arm_of(const Arm *arms, int na, const Row *w) {
    char arch[sizeof arms->arch];
    row_arch_note(w, arch, sizeof arch);
    for (int k = 0; k < na; k++)
        if (!strcmp(arms[k].variant, w->variant) && !strcmp(arms[k].arch, arch)) return k;
    return -1;
}

/* Arms from the rows: every variant under each architecture, its rates
 * and runs. */
static int gather(const Row *rows, int n, Arm *arms) {
    int na = 0;
    for (int i = 0; i < n; i++) {
        const Row *w = &rows[i];
        if (!w->ok || !isfinite(w->cfg[CFG_LR])) continue;
        int k = arm_of(arms, na, w);
        if (k < 0) {
            if (na == LR_MAX_ARMS) continue;
            Arm *a = &arms[k = na++];
            memset(a, 0, sizeof *a);
            a->variant = w->variant;
            row_arch_note(w, a->arch, sizeof a->arch);
            snprintf(a->name, sizeof a->name, *a->arch ? "%s (%s)" : "%s", a->variant, a->arch);
        }
        add_rate(&arms[k], w->cfg[CFG_LR]);
    }
    for (int i = 0; i < n; i++) {
        const Row *w = &rows[i];
        if (!w->ok || !isfinite(w->cfg[CFG_LR])) continue;
        int k = arm_of(arms, na, w);
        if (k < 0) continue;
        int s = seed_slot(&arms[k], w->seed), r = index_of(arms[k].lr, arms[k].nlr, w->cfg[CFG_LR]);
        if (s >= 0 && r >= 0) arms[k].run[s][r] = w;
    }
    return na;
}

/* The final loss of one run for the sensitivity: l0 when diverged. */
static double capped_loss(const Row *w, double l0) {
    if (is_diverged(w)) return l0;
    return w->val_loss < l0 ? w->val_loss : l0;
}

static void sensitivities(Arm *a) {
    for (int s = 0; s < a->nseed; s++) {
        a->sens[s] = NAN;
        double l0 = NAN, best = INFINITY, sum = 0.0;
        int all = 1;
        for (int r = 0; r < a->nlr; r++) {
            const Row *w = a->run[s][r];
            if (!w) all = 0;
            else if (isfinite(w->loss0)) l0 = w->loss0;
        }
        if (!all || !isfinite(l0)) continue;
        for (int r = 0; r < a->nlr; r++) {
            double l = capped_loss(a->run[s][r], l0);
            sum += l;
            best = l < best ? l : best;
        }
        a->sens[s] = sum / a->nlr - best;
    }
    a->nsens = a->diverged = a->runs = 0;
    double loss[LR_MAX_SEEDS * LR_MAX_RATES];
    for (int s = 0; s < a->nseed; s++) {
        if (isfinite(a->sens[s])) a->sens[a->nsens++] = a->sens[s];
        for (int r = 0; r < a->nlr; r++) {
            const Row *w = a->run[s][r];
            if (!w) continue;
            loss[a->runs++] = is_diverged(w) ? NAN : w->val_loss;
            a->diverged += is_diverged(w);
        }
    }
    a->unstable = count_unstable(loss, a->runs, UNSTABLE_MARGIN);
}

/* mean [lo, hi] of the finite values: a 95% t-interval over seeds. */
static int t_interval(const double *v, int k, double *m, double *lo, double *hi) {
    double sd;
    if (k < 1) return -1;
    mean_std(v, k, m, &sd);
    double h = k > 1 ? gsl_cdf_tdist_Pinv(0.975, k - 1) * sd / sqrt(k) : NAN;
    *lo = *m - h, *hi = *m + h;
    return 0;
}

/* Mean over seeds at rate r of the final loss (finite ones) or max logit. */
static int rate_values(const Arm *a, int r, int logit, double *v) {
    int k = 0;
    for (int s = 0; s < a->nseed; s++) {
        const Row *w = a->run[s][r];
        if (!w) continue;
        double x = logit ? w->max_logit : (is_diverged(w) ? NAN : w->val_loss);
        if (isfinite(x)) v[k++] = x;
    }
    return k;
}

/* The arm's best final val loss over every seed and rate (NaN: none). */
static double arm_best(const Arm *a) {
    double loss[LR_MAX_SEEDS * LR_MAX_RATES];
    int k = 0;
    for (int s = 0; s < a->nseed; s++)
        for (int r = 0; r < a->nlr; r++)
            if (a->run[s][r]) loss[k++] = is_diverged(a->run[s][r]) ? NAN : a->run[s][r]->val_loss;
    return arm_best_loss(loss, k);
}

static void rate_table(FILE *f, const Arm *arms, int na) {
    fputs("\n| arm | lr | runs | final val loss, mean [95% t-interval] | diverged | unstable | "
          "largest attention logit (mean) |\n|---|---|---|---|---|---|---|\n",
          f);
    for (int k = 0; k < na; k++)
        for (int r = 0; r < arms[k].nlr; r++) {
            double v[LR_MAX_SEEDS], m, lo, hi, best = arm_best(&arms[k]);
            int runs = 0, div = 0, unst = 0;
            for (int s = 0; s < arms[k].nseed; s++) {
                const Row *w = arms[k].run[s][r];
                if (!w) continue;
                runs++, div += is_diverged(w);
                unst += run_unstable(is_diverged(w) ? NAN : w->val_loss, best, UNSTABLE_MARGIN);
            }
            fprintf(f, "| %s | %g | %d |", arms[k].name, arms[k].lr[r], runs);
            int nv = rate_values(&arms[k], r, 0, v);
            if (t_interval(v, nv, &m, &lo, &hi) == 0 && nv > 1)
                fprintf(f, " %.4f [%.4f, %.4f] |", m, lo, hi);
            else if (nv == 1) fprintf(f, " %.4f (one run) |", v[0]);
            else fputs(" – |", f);
            fprintf(f, " %d of %d | %d of %d |", div, runs, unst, runs);
            nv = rate_values(&arms[k], r, 1, v);
            if (nv) {
                mean_std(v, nv, &m, &lo);
                fprintf(f, " %.3g |\n", m);
            } else fputs(" – |\n", f);
        }
}

static void figures(FILE *f, const char *outdir, const Arm *arms, int na) {
    char figdir[1100];
    snprintf(figdir, sizeof figdir, "%s/figures", outdir);
    static double x[2][LR_MAX_ARMS][LR_MAX_RATES], y[2][LR_MAX_ARMS][LR_MAX_RATES];
    PlotSeries s[2][LR_MAX_ARMS];
    for (int fig = 0; fig < 2; fig++) {
        for (int k = 0; k < na; k++) {
            for (int r = 0; r < arms[k].nlr; r++) {
                double v[LR_MAX_SEEDS], m, sd;
                int nv = rate_values(&arms[k], r, fig, v);
                x[fig][k][r] = log10(arms[k].lr[r]);
                if (nv) mean_std(v, nv, &m, &sd);
                y[fig][k][r] = nv ? m : NAN;
            }
            s[fig][k] = (PlotSeries){arms[k].name, x[fig][k], y[fig][k], (size_t)arms[k].nlr,
                                     PLOT_LINES,   0,         0};
        }
    }
    PlotAxes ax0 = {
        "Final val loss against learning rate (mean over seeds; diverged runs left out)",
        "log10 learning rate",
        {"final val loss", NULL},
        1,
        NULL,
        0,
        0};
    PlotAxes ax1 = {"Largest attention logit against learning rate (last probe, mean over seeds)",
                    "log10 learning rate",
                    {"max |attention logit|", NULL},
                    1,
                    NULL,
                    0,
                    0};
    draw_figure(f, figdir, "lr_loss.png", "final val loss against learning rate", &ax0, s[0], na);
    draw_figure(f, figdir, "lr_max_logit.png", "largest attention logit against learning rate",
                &ax1, s[1], na);
}

/* One arm against the baseline of its architecture: LR sensitivity and
 * unstable runs. */
typedef struct {
    int arm, base;
    int tested_s, tested_d;
    StatsWelch w; /* on log LR sensitivity */
    double p_s;   /* one-sided: arm's log sensitivity below the baseline's */
    double p_d, holm_s, holm_d;
    char why[96]; /* why LR sensitivity was not tested */
} LrTest;

/* The one declared test of LR sensitivity (docs/statistics.md). */
#define SENS_TEST "one-sided Welch's t-test on log LR sensitivity (arm < baseline)"

/* log of each seed's sensitivity into out; -1 when one is not above 0. */
static int log_sens(const Arm *a, double *out) {
    for (int i = 0; i < a->nsens; i++) {
        if (!(a->sens[i] > 0)) return -1;
        out[i] = log(a->sens[i]);
    }
    return 0;
}

static LrTest test_arm(const Arm *a, const Arm *b, int k, int base) {
    char err[256];
    double la[LR_MAX_SEEDS], lb[LR_MAX_SEEDS];
    LrTest t = {.arm = k, .base = base, .p_s = NAN, .p_d = NAN, .holm_s = NAN, .holm_d = NAN};
    if (a->nsens < 2 || b->nsens < 2)
        snprintf(t.why, sizeof t.why, "too few seeds with every rate");
    else if (log_sens(a, la) || log_sens(b, lb))
        snprintf(t.why, sizeof t.why, "a seed's sensitivity is 0, which has no log");
    else if (stats_welch(&t.w, la, a->nsens, lb, b->nsens, err, sizeof err) == 0)
        t.tested_s = 1, t.p_s = t.w.t < 0 ? t.w.p / 2 : 1 - t.w.p / 2;
    else snprintf(t.why, sizeof t.why, "%.90s", err);
    if (a->runs && b->runs &&
        stats_fisher_exact(&t.p_d, a->unstable, a->runs, b->unstable, b->runs, err, sizeof err) ==
            0)
        t.tested_d = 1;
    return t;
}

/* Holm across both tests of every arm, untested ones left out. */
static void holm_tests(LrTest *t, int nt) {
    double p[2 * LR_MAX_ARMS], h[2 * LR_MAX_ARMS];
    for (int i = 0; i < nt; i++) {
        p[2 * i] = t[i].tested_s ? t[i].p_s : NAN;
        p[2 * i + 1] = t[i].tested_d ? t[i].p_d : NAN;
    }
    adjust_family(h, p, 2 * nt, 0);
    for (int i = 0; i < nt; i++) t[i].holm_s = h[2 * i], t[i].holm_d = h[2 * i + 1];
}

static void put_mean_sd(FILE *f, const double *v, int k) {
    double m, sd;
    if (k < 1) {
        fputs("–", f);
        return;
    }
    mean_std(v, k, &m, &sd);
    fprintf(f, "%.4f ± %.4f (%d)", m, sd, k);
}

static void verdict(FILE *f, const Arm *a, const Arm *b, const LrTest *t, int id) {
    double ma, mb, sd;
    mean_std(a->sens, a->nsens, &ma, &sd);
    mean_std(b->sens, b->nsens, &mb, &sd);
    fprintf(f, "- `%s` against `%s`: LR sensitivity %.4f against %.4f, ", a->name, b->name, ma, mb);
    if (!t->tested_s) fprintf(f, "untestable here: %s (L%d); ", t->why, id);
    else {
        fputs(t->holm_s < ALPHA ? "**lower**" : "lower not shown", f);
        fprintf(f, " by the " SENS_TEST ", Holm p ");
        put_p_rel(f, t->holm_s);
        fprintf(f, " (L%d); ", id);
    }
    fprintf(f, "unstable runs %d of %d against %d of %d, ", a->unstable, a->runs, b->unstable,
            b->runs);
    if (!t->tested_d) fprintf(f, "untested (L%d).", id + 1);
    else {
        fputs(t->holm_d < ALPHA ? "**different**" : "no difference shown", f);
        fputs(", Holm p ", f);
        put_p_rel(f, t->holm_d);
        fprintf(f, " (L%d).", id + 1);
    }
    fputc('\n', f);
}

static void tests_table(FILE *f, const Arm *arms, const LrTest *t, int nt) {
    fputs("\n| id | arm | reference | LR sensitivity, arm | reference | test | test p | Holm p "
          "|\n|---|---|---|---|---|---|---|---|\n",
          f);
    for (int i = 0; i < nt; i++) {
        const Arm *a = &arms[t[i].arm], *b = &arms[t[i].base];
        fprintf(f, "| L%d | %s | %s | ", 2 * i + 1, a->name, b->name);
        put_mean_sd(f, a->sens, a->nsens);
        fputs(" | ", f);
        put_mean_sd(f, b->sens, b->nsens);
        if (t[i].tested_s)
            fprintf(f, " | Welch on log, one-sided | %.3g | %.3g |\n", t[i].p_s, t[i].holm_s);
        else fprintf(f, " | untestable here: %s | – | – |\n", t[i].why);
        fprintf(f,
                "| L%d | %s | %s | unstable %d of %d | %d of %d | Fisher's exact | %.3g | "
                "%.3g |\n",
                2 * i + 2, a->name, b->name, a->unstable, a->runs, b->unstable, b->runs, t[i].p_d,
                t[i].holm_d);
    }
}

/* Keeps the arms run at two or more rates (moved to the front, order
 * kept); names the others in f. Returns how many are kept. */
static int multi_rate_arms(FILE *f, Arm *arms, int na) {
    int kept = 0, left = 0;
    for (int k = 0; k < na; k++) {
        if (arms[k].nlr >= 2) {
            if (kept != k) arms[kept] = arms[k];
            kept++;
            continue;
        }
        fprintf(f, "%s`%s`",
                left++ ? ", "
                       : "\nLeft out, trained at one learning rate only "
                         "(its sensitivity is 0 by definition): ",
                arms[k].name);
    }
    if (left) fputs(".\n", f);
    return kept;
}

/* The baseline arm of arms[na] under arch, -1 when none. */
static int base_of(const Arm *arms, int na, const char *arch) {
    for (int k = 0; k < na; k++)
        if (!strcmp(arms[k].variant, "baseline") && !strcmp(arms[k].arch, arch)) return k;
    return -1;
}

/* Each arm but the baselines against the baseline arm of its own
 * architecture into t; the arms with none are named in f. Returns the
 * tests. */
static int lr_tests(FILE *f, const Arm *arms, int na, LrTest *t) {
    int nt = 0, left = 0;
    for (int k = 0; k < na; k++) {
        if (!strcmp(arms[k].variant, "baseline")) continue;
        int b = base_of(arms, na, arms[k].arch);
        if (b >= 0) t[nt++] = test_arm(&arms[k], &arms[b], k, b);
        else
            fprintf(f, "%s`%s`",
                    left++ ? ", " : "\nNot tested, no `baseline` arm of their architecture: ",
                    arms[k].name);
    }
    if (left) fputs(".\n", f);
    holm_tests(t, nt);
    return nt;
}

void md_lr_sensitivity(FILE *f, const char *outdir, const Row *rows, int n) {
    static Arm arms[LR_MAX_ARMS];
    int na = gather(rows, n, arms), wide = 0, base = 0, other = 0;
    for (int k = 0; k < na; k++) wide |= arms[k].nlr >= LR_MIN_RATES;
    if (!wide) return;
    fprintf(f,
            "\n## Learning-rate sensitivity\n\nStability as Wortsman et al. (2023) measure it: "
            "each arm trained at every learning rate of the grid; per seed, LR sensitivity = "
            "mean over rates of min(final loss, l0) − the seed's best final loss, l0 the loss "
            "at the first step, a diverged run counting as l0 (lower is more stable). The "
            "largest attention logit is the instability that paper names. A run is unstable "
            "when its final val loss exceeds the best final val loss of its arm (any rate, any "
            "seed) by more than %.2g nats, or it has none (docs/statistics.md, "
            "\"Instability\").\n",
            UNSTABLE_MARGIN);
    na = multi_rate_arms(f, arms, na);
    for (int k = 0; k < na; k++) {
        base |= !strcmp(arms[k].variant, "baseline");
        other |= *arms[k].arch != '\0';
        sensitivities(&arms[k]);
    }
    rate_table(f, arms, na);
    figures(f, outdir, arms, na);
    if (!base) {
        fputs("\nNo `baseline` arm: nothing to test against.\n", f);
        return;
    }
    LrTest t[LR_MAX_ARMS];
    int nt = lr_tests(f, arms, na, t);
    fprintf(f,
            "\nEach arm against `baseline`%s: LR sensitivity by the " SENS_TEST
            ", the one test declared for it (docs/statistics.md); unstable runs by Fisher's "
            "exact test (two-sided); Holm's correction across these %d tests, a difference "
            "said only at Holm p < %.2f. Exploratory: these tests are in no family of the "
            "protocol and state no claim of the paper (docs/statistics.md, \"Families\").\n\n",
            other ? " of its own architecture (docs/metrics.md, \"Architecture as it attends\")"
                  : "",
            2 * nt, ALPHA);
    for (int i = 0; i < nt; i++) verdict(f, &arms[t[i].arm], &arms[t[i].base], &t[i], 2 * i + 1);
    tests_table(f, arms, t, nt);
}
