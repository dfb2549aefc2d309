/* figlabel.c: the names figures give runs and maps (figlabel.h). */
#include "figlabel.h"

#include <stdio.h>
#include <string.h>

#include "runschema.h"

int fig_is_pretrained(RunReader *r) {
    char arch[128];
    return runread_pretrained_string(r, RS_PT_ARCHITECTURE, arch, sizeof arch, NULL, 0) == 0;
}

/* The model and snapshot a model directory holds: from a Hugging Face
 * cache path (.../models--ORG--NAME/snapshots/HASH[/SUB]) "ORG/NAME[/SUB]
 * @HASH7", else its last two components ("gated_attention/headwise"). */
static void model_of_dir(const char *dir, char *out, size_t outlen) {
    const char *m = strstr(dir, "models--");
    if (m) {
        m += strlen("models--");
        size_t n = strcspn(m, "/");
        const char *sep = strstr(m, "--"), *snap = strstr(m, "/snapshots/");
        char model[160];
        if (sep && (size_t)(sep - m) < n)
            snprintf(model, sizeof model, "%.*s/%.*s", (int)(sep - m), m,
                     (int)(n - (size_t)(sep - m) - 2), sep + 2);
        else snprintf(model, sizeof model, "%.*s", (int)n, m);
        if (!snap) {
            snprintf(out, outlen, "%s", model);
            return;
        }
        snap += strlen("/snapshots/");
        size_t h = strcspn(snap, "/");
        const char *sub = snap + h;
        size_t sl = strlen(sub);
        while (sl > 0 && sub[sl - 1] == '/') sl--;
        snprintf(out, outlen, "%s%.*s @%.*s", model, (int)sl, sub, (int)(h < 7 ? h : 7), snap);
        return;
    }
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && dir[b - 1] != '/') b--;
    size_t p = b > 0 ? b - 1 : 0; /* the parent's name before it */
    while (p > 0 && dir[p - 1] != '/') p--;
    snprintf(out, outlen, "%.*s", (int)(n - p), dir + p);
}

void fig_run_label(RunReader *r, char *out, size_t outlen) {
    char dir[1024], model[256], gate[32];
    if (fig_is_pretrained(r) &&
        runread_pretrained_string(r, RS_PT_MODEL_DIR, dir, sizeof dir, NULL, 0) == 0 && dir[0]) {
        model_of_dir(dir, model, sizeof model);
        if (runread_pretrained_string(r, RS_PT_ATTN_GATE, gate, sizeof gate, NULL, 0) == 0)
            snprintf(out, outlen, "%s, gate %s", model, gate);
        else snprintf(out, outlen, "%s", model);
        return;
    }
    const RunMeta *m = runread_meta(r);
    snprintf(out, outlen, "%.60s s%lld", m->variant, m->seed);
}

const char *fig_map_kind(const ProbeRecord *p) {
    return p->proxy ? "proxy |a|/sum|a| maps" : "attention";
}
