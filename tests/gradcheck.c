/* gradcheck.c: random test data and the finite-difference gradient check
 * (gradcheck.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"

static uint64_t lcg_state;
void seed(uint64_t s) { lcg_state = s * 2654435761ULL + 1; }
double unif(void) {
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(lcg_state >> 11) * 0x1.0p-53;
}
/* roughly normal (sum of uniforms), enough for test data */
float rnd(void) {
    double s = 0.0;
    for (int i = 0; i < 4; i++) s += unif();
    return (float)((s - 2.0) * 1.7320508);
}
float *randv(size_t n, float sd) {
    float *p = malloc(n * sizeof(float));
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) p[i] = sd * rnd();
    return p;
}
float *filled(size_t n, float v) {
    float *p = malloc((n ? n : 1) * sizeof(float));
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) p[i] = v;
    return p;
}
double dotd(const float *a, const float *b, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * (double)b[i];
    return s;
}

typedef double (*LossFn)(void *ctx);

/* Compare ana[i] - PREFILL with central differences of f in x[i]. */
void check_grad(const char *what, LossFn f, void *ctx, float *x, size_t n, const float *ana) {
    int bad = 0;
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        float x0 = x[i];
        x[i] = x0 + FD_EPS;
        double lp = f(ctx);
        x[i] = x0 - FD_EPS;
        double lm = f(ctx);
        x[i] = x0;
        /* divide by the perturbation actually applied in float */
        double h = (double)(x0 + FD_EPS) - (double)(x0 - FD_EPS);
        double num = (lp - lm) / h;
        double a = (double)ana[i] - PREFILL;
        double err = fabs(num - a);
        double tol = FD_ATOL + FD_RTOL * fabs(num);
        if (err / tol > worst) worst = err / tol;
        if (!(err <= tol)) {
            if (bad < 5) print_error("%s[%zu]: numeric %.6g analytic %.6g\n", what, i, num, a);
            bad++;
        }
    }
    if (bad) print_error("%s: %d of %zu wrong (worst err/tol %.3g)\n", what, bad, n, worst);
    assert_int_equal(bad, 0);
}
