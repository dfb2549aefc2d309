/* sweepslurm.c: the sbatch job-array script of a sweep (sweep.h,
 * sweep_write_slurm). Every path the script names (the working directory,
 * the gatelab binary, the sweep file, the out dir, the script itself) is
 * quoted for sh where sh reads it, and refused when it holds a control
 * character (a newline would end a #SBATCH or comment line and start a
 * line of its own). */
#include "sweep.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_write.h"
#include "outpath.h"
#include "util.h"

/* Room for a quoted path: each byte may become the four of '\'' */
#define QUOTED_MAX (4 * SWEEP_PATH_MAX + 8)

/* s as one sh word in out[n]: in single quotes, each ' written '\''. So
 * nothing in it ($, `, ", \, spaces) is expanded or split. -1 when it
 * does not fit. */
static int sh_quote(const char *s, char *out, size_t n) {
    size_t k = 0;
    if (n < 3) return -1;
    out[k++] = '\'';
    for (; *s; s++) {
        const char *piece = *s == '\'' ? "'\\''" : NULL;
        size_t len = piece ? 4 : 1;
        if (k + len + 2 > n) return -1;
        if (piece) memcpy(out + k, piece, len);
        else out[k] = *s;
        k += len;
    }
    out[k++] = '\'';
    out[k] = '\0';
    return 0;
}

/* 0 when path (named by `what` in the reply) holds no control character
 * and fits; else -1 with one line naming it. */
static int slurm_path_ok(const char *what, const char *path, char *err, size_t errlen) {
    char shown[120];
    if (strlen(path) >= SWEEP_PATH_MAX)
        return seterr(err, errlen, "%s '%s' is too long for a Slurm script", what,
                      err_shown(shown, sizeof shown, path));
    for (const unsigned char *c = (const unsigned char *)path; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return seterr(err, errlen,
                          "%s '%s' holds a control character (shown as ?), which a Slurm "
                          "script cannot carry; rename it",
                          what, err_shown(shown, sizeof shown, path));
    return 0;
}

int sweep_slurm_check(const char *sweep_file, const char *out_dir, const char *script_path,
                      char *err, size_t errlen) {
    if (slurm_path_ok("the sweep file", sweep_file, err, errlen) ||
        slurm_path_ok("--out", out_dir, err, errlen) ||
        slurm_path_ok("--emit-slurm", script_path, err, errlen))
        return -1;
    return 0;
}

/* The script's comment head: the array, its runs, and how to follow it
 * with the report (lines to copy into a shell, quoted for it). */
static void write_head(FILE *f, const Sweep *sw, const char *sweep_file, const char *out_dir,
                       const char *script_path, const char *exe) {
    const char *base = strrchr(sweep_file, '/');
    base = base ? base + 1 : sweep_file;
    fprintf(f,
            "#!/bin/bash\n"
            "#SBATCH --job-name=gatelab-%.*s\n"
            "#SBATCH --array=0-%d\n"
            "#SBATCH --cpus-per-task=1\n"
            "#SBATCH --output=%s/logs/slurm-%%A_%%a.out\n",
            (int)strcspn(base, "."), base, sw->n_runs - 1, out_dir);
    fprintf(f,
            "#\n# gatelab sweep %s: %d runs, one per array task.\n"
            "# Each task trains one run into %s/NAME_sSEED.h5 (resumable:\n"
            "# resubmitting skips finished runs and resumes checkpoints).\n#\n"
            "# index  run\n",
            sweep_file, sw->n_runs, out_dir);
    for (int i = 0; i < sw->n_runs; i++) fprintf(f, "# %5d  %s\n", i, sw->runs[i].id);
    static char qs[QUOTED_MAX], qe[QUOTED_MAX], qo[QUOTED_MAX], wrap[3 * QUOTED_MAX],
        qw[4 * 3 * QUOTED_MAX];
    sh_quote(script_path, qs, sizeof qs);
    sh_quote(exe, qe, sizeof qe);
    sh_quote(out_dir, qo, sizeof qo);
    snprintf(wrap, sizeof wrap, "%s report %s", qe, qo);
    sh_quote(wrap, qw, sizeof qw);
    fprintf(f,
            "#\n# The report is a separate final step, once every task ended:\n"
            "#   jid=$(sbatch --parsable %s)\n"
            "#   sbatch --dependency=afterany:$jid --wrap %s\n"
            "# or, afterwards: %s\n\n",
            qs, qw, wrap);
}

int sweep_write_slurm(const Sweep *sw, const char *sweep_file, const char *out_dir,
                      const char *script_path, int uncommitted, char *err, size_t errlen) {
    char exe[SWEEP_PATH_MAX], cwd[SWEEP_PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    if (n <= 0) str_copy(exe, sizeof exe, "gatelab");
    if (!getcwd(cwd, sizeof cwd)) str_copy(cwd, sizeof cwd, ".");
    if (sweep_slurm_check(sweep_file, out_dir, script_path, err, errlen) ||
        slurm_path_ok("the gatelab binary", exe, err, errlen) ||
        slurm_path_ok("the working directory", cwd, err, errlen))
        return -1;
    if (outpath_check(script_path, OUT_SLURM, 1, err, errlen) != 0) return -1;
    static char qc[QUOTED_MAX], qe[QUOTED_MAX], qf[QUOTED_MAX], qo[QUOTED_MAX];
    sh_quote(cwd, qc, sizeof qc);
    sh_quote(exe, qe, sizeof qe);
    sh_quote(sweep_file, qf, sizeof qf);
    sh_quote(out_dir, qo, sizeof qo);
    char tmp[ATOMIC_TMP_MAX];
    FILE *f = atomic_fopen(script_path, tmp, sizeof tmp, err, errlen);
    if (!f) return -1;
    write_head(f, sw, sweep_file, out_dir, script_path, exe);
    fprintf(f,
            "set -eu\ncd -- %s\nmkdir -p -- %s/logs\n"
            "export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1\n"
            "GATELAB=${GATELAB:-}\n"
            "[ -n \"$GATELAB\" ] || GATELAB=%s\n"
            "exec \"$GATELAB\" sweep %s --out %s --only \"$SLURM_ARRAY_TASK_ID\"%s\n",
            qc, qo, qe, qf, qo, uncommitted ? " --uncommitted" : "");
    fchmod(fileno(f), 0755);
    return atomic_fcommit(f, tmp, script_path, err, errlen);
}
