/* flops.c: a run's training FLOPs (flops.h). */
#include "flops.h"

#include <math.h>
#include <stdlib.h>

#include "config.h"
#include "config_args.h"
#include "model.h"
#include "runschema.h"

#define CONFIG_TEXT_MAX ((size_t)1 << 16)

double train_tokens(double steps, double batch, double T) {
    double v = steps * batch * T;
    return isfinite(v) && steps > 0 && batch > 0 && T > 0 ? v : NAN;
}

double train_flops(double flops_per_token, double steps, double batch, double T) {
    double v = flops_per_token * train_tokens(steps, batch, T);
    return isfinite(v) && flops_per_token > 0 ? v : NAN;
}

double run_train_flops(RunReader *r, double steps_done) {
    char err[512];
    char *text = malloc(CONFIG_TEXT_MAX);
    Config cfg;
    Model m;
    double v = NAN;
    if (!text || !isfinite(steps_done)) {
        free(text);
        return NAN;
    }
    if (runread_config_string(r, RS_CONFIG_TEXT, text, CONFIG_TEXT_MAX, err, sizeof err) == 0 &&
        config_from_text(&cfg, text, "run", err, sizeof err) == 0 &&
        model_shape(&m, &cfg, err, sizeof err) == 0) {
        v = train_flops(model_flops_per_token(&m, cfg.seq_len), steps_done, cfg.batch_size,
                        cfg.seq_len);
        model_free(&m);
    }
    free(text);
    return v;
}
