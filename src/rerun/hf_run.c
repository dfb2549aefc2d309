/* hf_run.c: reopening an inspected run's model and input (hf_run.h). */
#include "hf_run.h"

#include <string.h>

#include "runfile_read.h"
#include "util.h"

int hf_run_model_dir(const char *run, char *dir, size_t dirlen, char *err, size_t errlen) {
    RunReader *r = runread_open(run, err, errlen);
    if (!r) return -1;
    int rc = runread_pretrained_string(r, RS_PT_MODEL_DIR, dir, dirlen, NULL, 0) == 0;
    runread_close(r);
    return rc;
}

int hf_run_windows(const char *run, const char *text, const HfModel *m, const char *model_dir,
                   int T, int n_seq, HfWindows *w, char *err, size_t errlen) {
    char input[1024] = "", kind[32] = "text";
    const HfArch *a = hf_model_arch(m);
    int bos_used;
    if (!text) {
        RunReader *r = runread_open(run, err, errlen);
        if (!r) return -1;
        int rc = runread_pretrained_string(r, RS_PT_INPUT, input, sizeof input, err, errlen);
        if (rc == 0)
            rc = runread_pretrained_string(r, RS_PT_INPUT_KIND, kind, sizeof kind, err, errlen);
        runread_close(r);
        if (rc < 0) return -1;
        text = input;
    }
    if (!strcmp(kind, "tokens"))
        return hf_windows_from_token_file(w, text, T, n_seq, -1, a->V, err, errlen);
    return hf_windows_from_text(w, text, model_dir, T, n_seq, -1, a->bos_id, a->V, &bos_used, err,
                                errlen);
}
