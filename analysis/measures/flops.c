/* flops.c: a run's training FLOPs (flops.h). */
#include "flops.h"

#include <math.h>
#include <stdlib.h>

#include "config.h"
#include "config_args.h"
#include "config_derive.h"
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

/* The tokens (*tokens) and FLOPs (*flops) of steps_done steps of cfg's
 * run: the steps before config_extend_step at seq_len, the rest at
 * extend_seq_len (the model's count per token at each length). */
static void run_scale(const Config *cfg, const Model *m, double steps_done, double *tokens,
                      double *flops) {
    double e = (double)config_extend_step(cfg), s1 = fmin(steps_done, e), s2 = steps_done - s1;
    int T1 = cfg->seq_len, T2 = cfg->extend_seq_len > 0 ? cfg->extend_seq_len : T1;
    *tokens = train_tokens(s1, cfg->batch_size, T1);
    *flops = train_flops(model_flops_per_token(m, T1), s1, cfg->batch_size, T1);
    if (s2 > 0) {
        *tokens += train_tokens(s2, cfg->batch_size, T2);
        *flops += train_flops(model_flops_per_token(m, T2), s2, cfg->batch_size, T2);
    }
}

int run_train_scale(RunReader *r, double steps_done, double *tokens, double *flops) {
    char err[512];
    char *text = malloc(CONFIG_TEXT_MAX);
    Config cfg;
    Model m;
    *tokens = *flops = NAN;
    int rc = -1;
    if (text && isfinite(steps_done) &&
        runread_config_string(r, RS_CONFIG_TEXT, text, CONFIG_TEXT_MAX, err, sizeof err) == 0 &&
        config_from_text(&cfg, text, "run", err, sizeof err) == 0 &&
        model_shape(&m, &cfg, err, sizeof err) == 0) {
        run_scale(&cfg, &m, steps_done, tokens, flops);
        model_free(&m);
        rc = 0;
    }
    free(text);
    return rc;
}
