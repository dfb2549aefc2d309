/* report_join.c: the report of a study run in pieces. `gatelab sweep
 * --seeds` runs one piece of a declared study into its directory; the run
 * files of the earlier pieces are gone with their machine, their rows are
 * in the committed results.csv. The report joins those rows to the run
 * files here, so that every piece's report, and the last one's tests, are
 * over every declared run made so far. Only rows of the protocol's own
 * runs join: declared in protocol.ini's [runs], recorded under its hash,
 * and with no run file here (a run file always wins over its old row). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol.h"
#include "protocol_pin.h"
#include "report.h"
#include "report_priv.h"
#include "util.h"

/* 1 when file is NAME_sSEED.h5 of a run p declares. */
static int declared(const ProtocolPin *p, const char *file) {
    char want[160];
    for (int i = 0; i < p->n_runs; i++) {
        snprintf(want, sizeof want, "%s_s%llu.h5", p->runs[i].name, p->runs[i].seed);
        if (!strcmp(want, file)) return 1;
    }
    return 0;
}

/* 1 when one of rows[n] is file. */
static int has_file(const Row *rows, int n, const char *file) {
    for (int i = 0; i < n; i++)
        if (!strcmp(rows[i].file, file)) return 1;
    return 0;
}

/* The rows of c[m] that join rows[n] (declared by p, recorded under hash,
 * no run file here), marked in take[m]. Returns how many. */
static int pick(const ProtocolPin *p, const char *hash, const Row *rows, int n, const Row *c, int m,
                char *take) {
    int k = 0;
    for (int j = 0; j < m; j++) {
        take[j] = declared(p, c[j].file) && !has_file(rows, n, c[j].file) &&
                  !strcmp(c[j].protocol_hash, hash);
        k += take[j];
    }
    return k;
}

/* See report_priv.h. */
int report_join_csv(const char *dir, Row **rows, int *n, int *joined, char *err, size_t errlen) {
    *joined = 0;
    char csv[1100], proto[1100], why[512];
    snprintf(csv, sizeof csv, "%s/results.csv", dir);
    snprintf(proto, sizeof proto, "%s/%s", dir, PROTO_FILE);
    if (access(csv, F_OK) != 0 || access(proto, F_OK) != 0) return 0;
    ProtocolPin p;
    Protocol pr;
    /* an unreadable protocol is the headline's to report; nothing joins */
    if (pin_read(proto, NULL, &p, why, sizeof why) != 0) return 0;
    if (!p.has_runs || protocol_read(proto, &pr, why, sizeof why) != 0) return pin_free(&p), 0;
    Row *c;
    int m, rc = csv_read_rows(dir, csv, &c, &m, why, sizeof why);
    if (rc != 0) {
        pin_free(&p);
        if (rc != REPORT_BADINPUT) return seterr(err, errlen, "%s", why), -1;
        return seterr(err, errlen,
                      "%s; it may hold the rows of an earlier piece of this study (gatelab sweep "
                      "--seeds), so it is left as it is: repair it from git, or move it away",
                      why),
               REPORT_BADINPUT;
    }
    char *take = calloc((size_t)m, 1);
    int k = take ? pick(&p, pr.hash, *rows, *n, c, m, take) : 0;
    pin_free(&p);
    Row *all = take && k ? realloc(*rows, (size_t)(*n + k) * sizeof *all) : *rows;
    if (!take || !all) {
        free(take), free(c);
        return seterr(err, errlen, "out of memory"), -1;
    }
    for (int j = 0, at = *n; j < m; j++)
        if (take[j]) all[at++] = c[j];
    *n += k;
    for (int i = 0; i < *n; i++) all[i].file = strrchr(all[i].path, '/') + 1;
    *rows = all, *joined = k;
    free(take), free(c);
    return 0;
}
