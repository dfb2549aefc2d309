/* gradcheck.h: random test data and the finite-difference gradient check
 * the op tests share (test_ops.c, test_ops_attention.c): for a scalar
 * objective L = sum(out * R) with a fixed random R, the backward's
 * gradient of every input is compared with central differences of the
 * float forward (eps FD_EPS, L summed in double). Gradient buffers start
 * at PREFILL, so the check also proves that backward accumulates. */
#ifndef GATELAB_GRADCHECK_H
#define GATELAB_GRADCHECK_H

#include <stddef.h>
#include <stdint.h>

#define FD_EPS 1e-3f
#define FD_RTOL 1e-2
#define FD_ATOL 2e-3
#define PREFILL 0.25f /* gradients start here: backward must add to it */

/* Restart the random stream at s: a test's data depends on its seed only. */
void seed(uint64_t s);

/* Uniform in [0, 1). */
double unif(void);

/* Roughly normal (sum of uniforms), enough for test data. */
float rnd(void);

/* n values sd * rnd() (malloc'd; the test fails when out of memory). */
float *randv(size_t n, float sd);

/* n copies of v (malloc'd, at least one element). */
float *filled(size_t n, float v);

/* sum a[i] b[i] in double. */
double dotd(const float *a, const float *b, size_t n);

typedef double (*LossFn)(void *ctx);

/* Compare ana[i] - PREFILL with central differences of f in x[i]; fails
 * the test naming what and the first wrong entries. */
void check_grad(const char *what, LossFn f, void *ctx, float *x, size_t n, const float *ana);

#endif
