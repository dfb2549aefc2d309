/* report_stream.c: the "Streaming" section of REPORT.md (gatelab stream
 * results), skipped silently when no run has /stream data: one row per run
 * file and window, trained runs and inspected checkpoints alike. */
#include "report_sections.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runfile_read.h"
#include "runname.h"
#include "runschema.h"

static double row_mean(const double *v, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += v[i];
    return n ? s / n : NAN;
}

static void header(FILE *f) {
    fprintf(f, "\n## Streaming\n\n`gatelab stream`: loss on long held-out sequences when every "
               "attention sees only W keys, the first K tokens and the latest W - K (a KV cache "
               "that evicts all but its first K entries; Xiao et al. 2024), against dense "
               "attention, scored at positions >= W. A model that parks attention on a sink "
               "needs K >= 1: the loss without kept tokens rises above the loss with them "
               "(delta > 0, paired t-test over sequences); a sink-free gated model should not "
               "need them.\n\n"
               "| file | variant | W / L | seqs | dense | loss by kept tokens K | "
               "delta (first K - last K) | p |\n|---|---|---|---|---|---|---|---|\n");
}

/* The rows of one run file; *shown set once the header is out. */
static void rows(FILE *f, const char *path, int *shown) {
    char err[512];
    RunReader *r = runread_open(path, err, sizeof err);
    if (!r) return;
    int *w = NULL, n = 0;
    if (runread_stream_windows(r, &w, &n, err, sizeof err) != 0) n = 0;
    const char *base = strrchr(path, '/');
    for (int i = 0; i < n; i++) {
        RunStream s;
        if (runread_stream(r, w[i], &s, err, sizeof err) != 0) continue;
        if (!*shown) header(f), *shown = 1;
        char variant[256];
        table_name(variant, sizeof variant, runread_meta(r)->variant); /* runname.h */
        fprintf(f, "| %s | %s | %d / %d | %d | %.4f |", base ? base + 1 : path, variant, s.window,
                s.len, s.n_seqs, row_mean(s.loss, s.n_seqs));
        for (int k = 0; k < s.n_keep; k++)
            fprintf(f, "%s%d: %.4f", k ? " · " : " ", s.keep[k],
                    row_mean(s.loss + (size_t)(k + 1) * s.n_seqs, s.n_seqs));
        if (isfinite(s.delta)) fprintf(f, " | %+.4f | %.3g |\n", s.delta, s.p);
        else fprintf(f, " | | |\n");
        runread_stream_free(&s);
    }
    free(w);
    runread_close(r);
}

void report_stream(FILE *f, const char *const *paths, int n) {
    int shown = 0;
    for (int i = 0; i < n; i++) rows(f, paths[i], &shown);
}
