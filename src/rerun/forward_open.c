/* forward_open.c: a run file's Forward, by its weight source
 * (forward_open.h). */
#include "forward_open.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

#define PT_TEXT_MAX ((size_t)1 << 20) /* config.json and the identity */

/* The recorded input and the last probe's length of an inspected run. */
static int read_source(RunReader *r, const char *run, const ForwardOpen *o, char *input,
                       size_t inlen, char *kind, size_t kindlen, ForwardSource *s, char *err,
                       size_t errlen) {
    if (o->text) {
        snprintf(input, inlen, "%s", o->text);
        snprintf(kind, kindlen, "text");
    } else if (runread_pretrained_string(r, RS_PT_INPUT, input, inlen, err, errlen) != 0 ||
               runread_pretrained_string(r, RS_PT_INPUT_KIND, kind, kindlen, err, errlen) != 0) {
        return -1;
    }
    char *cfg = malloc(PT_TEXT_MAX), *id = malloc(PT_TEXT_MAX);
    if (!cfg || !id) {
        free(cfg), free(id);
        return seterr(err, errlen, "%s: out of memory", run);
    }
    s->config_json = cfg, s->identity = id;
    if (runread_pretrained_string(r, RS_PT_CONFIG_JSON, cfg, PT_TEXT_MAX, err, errlen) != 0)
        return -1;
    if (runread_pretrained_string(r, RS_PT_IDENTITY, id, PT_TEXT_MAX, NULL, 0) != 0) {
        free(id); /* written before identities were recorded */
        s->identity = NULL;
    }
    double bos;
    s->bos_id = runread_pretrained_number(r, RS_PT_BOS_ID, &bos, NULL, 0) == 0 && bos >= 0 &&
                        bos < 2147483647.0
                    ? (int)bos
                    : -1;
    ProbeRecord p;
    if (runread_probe(r, -1, &p, err, errlen) != 0) return -1;
    s->probe_T = p.T;
    runread_probe_free(&p);
    s->meta = *runread_meta(r);
    return 0;
}

Forward *forward_open(const char *run, const ForwardOpen *o, char *err, size_t errlen) {
    RunReader *r = runread_open(run, err, errlen);
    if (!r) return NULL;
    char dir[1024], input[1024], kind[32];
    if (runread_pretrained_string(r, RS_PT_MODEL_DIR, dir, sizeof dir, NULL, 0) != 0) {
        runread_close(r);
        if (o->model || o->text) {
            seterr(err, errlen, "%s: --model and --text are for runs of gatelab inspect", run);
            return NULL;
        }
        return forward_open_trained(run, err, errlen);
    }
    ForwardSource s = {.model_dir = o->model ? o->model : dir,
                       .input = input,
                       .input_kind = kind,
                       .recorded_dir = !o->model,
                       .recorded_input = !o->text,
                       .threads = o->threads};
    int rc = read_source(r, run, o, input, sizeof input, kind, sizeof kind, &s, err, errlen);
    runread_close(r);
    Forward *f = rc == 0 ? forward_open_hf(run, &s, err, errlen) : NULL;
    free((char *)s.config_json);
    free((char *)s.identity);
    return f;
}
