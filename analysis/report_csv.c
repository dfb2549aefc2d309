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

#include "atomic_write.h"
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

/* One CSV field (RFC 4180): quoted, with inner quotes doubled, when it
 * holds a comma, a quote, CR or LF (a file or run name may); bare
 * otherwise. Every text field of results.csv goes through here. */
void csv_field(FILE *f, const char *s, int first) {
    if (!first) fputc(',', f);
    if (!s[strcspn(s, ",\"\r\n")]) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double v, const char *fmt) {
    fputc(',', f);
    if (isfinite(v)) fprintf(f, fmt, v);
}

int write_csv(const char *path, const Row *rows, int n, char *err, size_t errlen) {
    if (outpath_check(path, OUT_CSV, 1, err, errlen) != 0) return -1;
    char tmp[ATOMIC_TMP_MAX];
    FILE *f = atomic_fopen(path, tmp, sizeof tmp, err, errlen);
    if (!f) return -1;
    fprintf(f, "file,run,variant,data,seed,status,n_params,n_params_added,steps,"
               "val_loss,ppl,bpb,dppl_vs_baseline,f_attn,f_attn_uniform,"
               "sink_rate_0.3,gate_mean,gate_frac_below_0.1,m_act,spikes,"
               "tokens_per_sec,diverged_step,dppl_pct_vs_baseline,sink_rate_0.1,"
               "sink_rate_0.2,slot_share,empty_share,f_attn_nonempty,kurtosis,"
               "top1_over_median,bos_norm_ratio,gate_bounded\n");
    for (int i = 0; i < n; i++) {
        const Row *w = &rows[i];
        if (!w->ok) continue; /* unreadable files are listed in REPORT.md */
        csv_field(f, w->file, 1);
        csv_field(f, w->run, 0);
        csv_field(f, w->variant, 0);
        csv_field(f, w->data, 0);
        fprintf(f, ",%lld", w->seed);
        csv_field(f, w->status, 0);
        fprintf(f, ",%lld,%lld", w->n_params, w->n_params_added);
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
        fprintf(f, ",%lld", w->diverged_step);
        csv_num(f, w->dppl_rel, "%.6g");
        csv_num(f, w->sink01, "%.6g");
        csv_num(f, w->sink02, "%.6g");
        csv_num(f, w->slot, "%.6g");
        csv_num(f, w->empty, "%.6g");
        csv_num(f, w->f_attn_ne, "%.6g");
        csv_num(f, w->kurt, "%.6g");
        csv_num(f, w->top1_med, "%.6g");
        csv_num(f, w->bos_ratio, "%.6g");
        /* blank: no gate; 0: gate_frac_below_0.1 is left blank (n/a) */
        if (isfinite(w->gate_mean)) fprintf(f, ",%d\n", !w->gate_unbounded);
        else fputs(",\n", f);
    }
    return atomic_fcommit(f, tmp, path, err, errlen);
}
