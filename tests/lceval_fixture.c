/* lceval_fixture.c: the /lceval group of a hand-built run file, for the
 * report's tests (test_report.c, test_report_arch.c). Test-only. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "lceval_fixture.h"
#include "runfile.h"

/* Contract in lceval_fixture.h. */
void add_lceval(const char *dir, const char *name, double p64, double p512, double y64,
                double y512) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    const double v[2][2] = {{p64, p512}, {y64, y512}};
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < 2; j++) {
            double b[8] = {v[m][j]}, mean = v[m][j];
            if (j) {
                b[0] = v[m][j] - 0.3;
                for (int k = 1; k < 8; k++) b[k] = v[m][j] + 0.01 * (k - 4);
                mean = (b[0] + 7 * v[m][j]) / 8;
            }
            const double depth[3] = {0.0, 0.5, 1.0}, acc[3] = {1.0, p512 / 4, 0.0};
            LcEvalData d = {.mode = m ? "yarn" : "plain",
                            .len = j ? 512 : 64,
                            .train_len = 64,
                            .val_loss = mean,
                            .ppl = exp(mean),
                            .yarn_scale = m && j ? 8 : 1,
                            .n_seqs = 2,
                            .n_buckets = j ? 8 : 1,
                            .loss_by_bucket = b,
                            .n_depths = j ? 3 : 0,
                            .needle_depth = depth,
                            .needle_acc = acc,
                            .needle_n = 4};
            int rc = runfile_write_lceval(path, &d, err, sizeof err);
            if (rc) fprintf(stderr, "%s\n", err);
            assert_int_equal(rc, 0);
        }
}
