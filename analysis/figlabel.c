/* figlabel.c: the names figures give runs and maps (figlabel.h). */
#include "figlabel.h"

#include <stdio.h>
#include <string.h>

#include "runschema.h"

int fig_is_pretrained(RunReader *r) {
    char arch[128];
    return runread_pretrained_string(r, RS_PT_ARCHITECTURE, arch, sizeof arch, NULL, 0) == 0;
}

/* The model a model directory holds: ORG/NAME from a Hugging Face cache
 * path (.../models--ORG--NAME/snapshots/HASH), else its last component. */
static void model_of_dir(const char *dir, char *out, size_t outlen) {
    const char *m = strstr(dir, "models--");
    if (m) {
        m += strlen("models--");
        size_t n = strcspn(m, "/");
        const char *sep = strstr(m, "--");
        if (sep && (size_t)(sep - m) < n) {
            snprintf(out, outlen, "%.*s/%.*s", (int)(sep - m), m, (int)(n - (size_t)(sep - m) - 2),
                     sep + 2);
            return;
        }
        snprintf(out, outlen, "%.*s", (int)n, m);
        return;
    }
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && dir[b - 1] != '/') b--;
    snprintf(out, outlen, "%.*s", (int)(n - b), dir + b);
}

void fig_run_label(RunReader *r, char *out, size_t outlen) {
    char dir[1024];
    if (fig_is_pretrained(r) &&
        runread_pretrained_string(r, RS_PT_MODEL_DIR, dir, sizeof dir, NULL, 0) == 0 && dir[0]) {
        model_of_dir(dir, out, outlen);
        return;
    }
    const RunMeta *m = runread_meta(r);
    snprintf(out, outlen, "%.60s s%lld", m->variant, m->seed);
}

const char *fig_map_kind(const ProbeRecord *p) {
    return p->proxy ? "proxy |a|/sum|a| maps" : "attention";
}
