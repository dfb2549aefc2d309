/* report_pretrained.c: "Pretrained models" section of REPORT.md. The
 * numbers are the same definitions as the trained runs' table (runstats.c):
 * F-Attn over all T queries of every window, sink rate at SINK_EPS over the
 * first SINK_LEN queries, gate mean and fraction below RS_GATE_SPARSE,
 * M-Act, the uniform share of the run's window (rs_uniform_share); the gate column tells the plain,
 * headwise- and elementwise-gated models of one architecture apart. */
#include "report_sections.h"

#include <math.h>
#include <string.h>

#include "metrics.h"
#include "runfile_read.h"
#include "runname.h"
#include "runschema.h"
#include "runstats.h"

static void cell(FILE *f, double v, const char *fmt) {
    fprintf(f, " | ");
    if (isfinite(v)) fprintf(f, fmt, v);
}

/* The row of one run; 0 when it is not a pretrained run. */
static int row(FILE *f, const char *path, int *header) {
    char err[512], arch[128] = "?", dtype[32] = "?", dir[256] = "?", gate[32] = "?";
    RunReader *r = runread_open(path, err, sizeof err);
    if (!r) return 0;
    ProbeRecord p;
    int ok = runread_pretrained_string(r, RS_PT_ARCHITECTURE, arch, sizeof arch, NULL, 0) == 0 &&
             runread_probe(r, -1, &p, NULL, 0) == 0;
    if (ok) {
        runread_pretrained_string(r, RS_PT_DTYPE, dtype, sizeof dtype, NULL, 0);
        runread_pretrained_string(r, RS_PT_ATTN_GATE, gate, sizeof gate, NULL, 0);
        runread_pretrained_string(r, RS_PT_MODEL_DIR, dir, sizeof dir, NULL, 0);
        table_name(arch, sizeof arch, arch); /* shown as text (runname.h) */
        table_name(dtype, sizeof dtype, dtype);
        table_name(gate, sizeof gate, gate);
        table_name(dir, sizeof dir, dir);
        if (!*header) {
            fprintf(
                f,
                "\n## Pretrained models\n\nRun files written by `gatelab inspect` from a "
                "Hugging Face checkpoint (one probe). For comparison, the paper's Table 4 "
                "(Qiu et al. 2025): F-Attn 0.467 for the baseline against 0.048 with the "
                "G1 gate, gate mean 0.116, M-Act 1053 against 94. *gate* is the attention output "
                "gate config.json names (none, headwise, elementwise; ? for a run file "
                "written before inspect recorded it).\n\n"
                "| file | architecture | gate | dtype | snapshot | windows x T | maps | F-Attn | "
                "uniform | sink@%g | gate mean | gate<%g | M-Act |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
                SINK_EPS, RS_GATE_SPARSE);
            *header = 1;
        }
        const char *base = strrchr(path, '/');
        fprintf(f, "| %s | %s | %s | %s | %s | %d x %d | %d", base ? base + 1 : path, arch, gate,
                dtype, dir, p.N, p.T, p.M);
        cell(f, rs_share(&p, -1), "%.4f");
        Config cfg; /* each layer's window the probe attended under (rs_layer_window) */
        rs_arch_config(r, &cfg);
        cell(f, rs_uniform_share(r, &cfg, &p, -1), "%.4f");
        cell(f, rs_sink_rate(&p, SINK_EPS, SINK_LEN), "%.3f");
        cell(f, p.has_gate ? rs_gate_mean(&p, -1) : NAN, "%.3f");
        if (p.has_gate && !p.gate_bounded) /* unbounded scores (softplus): no share below */
            fprintf(f, " | n/a");
        else cell(f, p.has_gate ? rs_gate_below(&p, -1, RS_GATE_SPARSE_K) : NAN, "%.3f");
        cell(f, rs_m_act(&p), "%.4g");
        fprintf(f, " |\n");
        runread_probe_free(&p);
    }
    runread_close(r);
    return ok;
}

void report_pretrained(FILE *f, const char *const *paths, int n) {
    int header = 0;
    for (int i = 0; i < n; i++) row(f, paths[i], &header);
}
