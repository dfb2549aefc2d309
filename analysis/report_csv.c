/* report_csv.c: results.csv, one line per run file. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h" /* variant_key */
#include "heatmap.h"
#include "metrics.h"
#include "outpath.h"
#include "plot.h"
#include "report_priv.h"
#include "runfile_read.h"
#include "runname.h"
#include "runstats.h"
#include "util.h"

/* ---- results.csv ---- */

static void csv_num(FILE *f, double v, const char *fmt)
{
    fputc(',', f);
    if (isfinite(v)) fprintf(f, fmt, v);
}

int write_csv(const char *path, const Row *rows, int n, char *err,
                     size_t errlen)
{
    if (outpath_check(path, OUT_CSV, 1, err, errlen) != 0) return -1;
    FILE *f = fopen(path, "w");
    if (!f) {
        seterr(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "file,run,variant,data,seed,status,n_params,n_params_added,steps,"
               "val_loss,ppl,bpb,dppl_vs_baseline,f_attn,f_attn_uniform,"
               "sink_rate_0.3,gate_mean,gate_frac_below_0.1,m_act,spikes,"
               "tokens_per_sec,diverged_step\n");
    for (int i = 0; i < n; i++) {
        const Row *w = &rows[i];
        if (!w->ok) continue; /* unreadable files are listed in REPORT.md */
        fprintf(f, "%s,%s,%s,%s,%lld,%s,%lld,%lld", w->file, w->run,
                w->variant, w->data, w->seed, w->status, w->n_params, w->n_params_added);
        csv_num(f, w->steps, "%.0f");
        csv_num(f, w->val_loss, "%.6g");
        csv_num(f, w->ppl, "%.6g");
        csv_num(f, w->bpb, "%.6g");
        csv_num(f, w->dppl, "%.6g");
        csv_num(f, w->f_attn, "%.6g");
        csv_num(f, w->f_attn_uniform, "%.6g");
        csv_num(f, w->sink03, "%.6g");
        csv_num(f, w->gate_mean, "%.6g");
        csv_num(f, w->gate_below01, "%.6g");
        csv_num(f, w->m_act, "%.6g");
        csv_num(f, w->spikes, "%.0f");
        csv_num(f, w->tokens_per_sec, "%.6g");
        fprintf(f, ",%lld\n", w->diverged_step);
    }
    if (fclose(f) != 0) {
        seterr(err, errlen, "%s: write failed", path);
        return -1;
    }
    return 0;
}
