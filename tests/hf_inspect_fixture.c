/* hf_inspect_fixture.c: the comparison against PyTorch and the token-id
 * file of the pretrained-checkpoint tests (hf_inspect_fixture.h).
 * Test-only. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "hf_inspect_fixture.h"

/* Contracts in hf_inspect_fixture.h. */
double hf_compare(const char *fix, const char *what, const float *got, const float *want,
                  size_t n) {
    double worst = 0.0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - want[i]) / (1.0 + fabs((double)want[i]));
        if (!(e <= worst)) worst = e, at = i;
    }
    if (!(worst <= HF_TOL))
        fail_msg("%s: %s[%zu] = %.7g, PyTorch %.7g (error %.3g > %g)", fix, what, at, got[at],
                 want[at], worst, HF_TOL);
    return worst;
}

void hf_write_tokens(const char *path, const int32_t *ids, int n, int lines) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int l = 0; l < lines; l++)
        for (int i = 0; i < n; i++) fprintf(f, "%d%c", ids[i], i + 1 < n ? ' ' : '\n');
    fclose(f);
}
