/* hf_config_read.c: the config.json readers shared by hf_config.c and
 * the families parsed in their own files (hf_config_priv.h): typed keys
 * with their defaults and refusals, which layers slide by layer_types, each
 * layer's heads checked against its key/value heads; and the per-layer
 * reads of an HfArch (hf_layer_kv, hf_vdim, hf_layer_sinks,
 * hf_sinks_vary). */
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "hf_config_priv.h"
#include "util.h"

/* Integer key of obj (objname in messages, NULL for the top level) in
 * [lo, hi]; dflt when absent/null and dflt >= lo, else an error naming the
 * key. */
int cfg_int_in(Cfg *c, json_t *obj, const char *objname, const char *key, long long dflt,
               long long lo, long long hi) {
    json_t *v = json_object_get(obj, key);
    if (c->failed) return 0;
    const char *in = objname ? " in " : "", *where = objname ? objname : "";
    if (!v || json_is_null(v)) {
        if (dflt >= lo) return (int)dflt;
        c->failed = 1;
        seterr(c->err, c->errlen, "%s: missing '%s'%s%s", c->path, key, in, where);
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        c->failed = 1;
        seterr(c->err, c->errlen, "%s: '%s'%s%s must be an integer in [%lld, %lld]", c->path, key,
               in, where, lo, hi);
        return 0;
    }
    return (int)json_integer_value(v);
}

int cfg_int(Cfg *c, const char *key, long long dflt, long long lo, long long hi) {
    return cfg_int_in(c, c->root, NULL, key, dflt, lo, hi);
}

/* Number key of obj; dflt when absent/null. Every number of a config
 * reaches float arithmetic (RoPE bases, YaRN factors, norm epsilons), and a
 * cast of a double beyond float's range is undefined, so one outside
 * [-FLT_MAX, FLT_MAX] is refused here, naming the key. */
double cfg_num_in(Cfg *c, json_t *obj, const char *key, double dflt) {
    json_t *v = json_object_get(obj, key);
    if (c->failed || !v || json_is_null(v)) return dflt;
    double x = json_is_number(v) ? json_number_value(v) : 0.0;
    if (!json_is_number(v) || !(x >= -FLT_MAX && x <= FLT_MAX)) {
        c->failed = 1;
        seterr(c->err, c->errlen, "%s: '%s' must be a number within float's range (|x| <= %g)",
               c->path, key, (double)FLT_MAX);
        return dflt;
    }
    return x;
}

double cfg_num(Cfg *c, const char *key, double dflt) { return cfg_num_in(c, c->root, key, dflt); }

int cfg_bool(Cfg *c, const char *key, int dflt) {
    json_t *v = json_object_get(c->root, key);
    if (c->failed || !v || json_is_null(v)) return dflt;
    if (!json_is_boolean(v)) {
        c->failed = 1;
        seterr(c->err, c->errlen, "%s: '%s' must be true or false", c->path, key);
        return dflt;
    }
    return json_is_true(v);
}

/* Which of Gemma's layers slide: layer_types when present (each
 * "sliding_attention" or "full_attention"), which must repeat one period
 * (every period-th layer full, the others sliding, or every layer
 * sliding); else every dflt-th layer full. A list of another pattern is
 * refused, naming the first layer off it. */
void cfg_layer_types(Cfg *c, HfArch *a, int dflt) {
    json_t *lt = json_object_get(c->root, "layer_types");
    int period = dflt;
    if (json_is_array(lt)) {
        period = 0;
        for (size_t i = 0; i < json_array_size(lt) && !period; i++) {
            const char *t = json_string_value(json_array_get(lt, i));
            if (t && !strcmp(t, "full_attention")) period = (int)i + 1;
        }
        for (int l = 0; l < a->L && !c->failed; l++) {
            const char *t = json_string_value(json_array_get(lt, (size_t)l));
            int full = period && (l + 1) % period == 0;
            if (!t || strcmp(t, full ? "full_attention" : "sliding_attention")) {
                c->failed = 1;
                char shown[44];
                seterr(c->err, c->errlen,
                       "%s: layer_types[%d] is '%s', off the pattern gatelab reads (every "
                       "%d-th layer full_attention, the others sliding_attention)",
                       c->path, l, err_shown(shown, sizeof shown, t ? t : "(missing)"), period);
            }
        }
    }
    a->sliding_period = period > 1 ? period : 0; /* kept without a window: Gemma 3's RoPE */
    a->sliding_layers = period == 1 ? 0 : period ? a->L - a->L / period : a->L;
    if (!a->sliding_layers || !a->sliding_window) a->sliding_window = a->sliding_layers = 0;
}

void cfg_heads(HfArch *a, const int *heads) {
    a->H = 0;
    for (int l = 0; l < a->L; l++) {
        a->layer_heads[l] = heads[l];
        if (heads[l] > a->H) a->H = heads[l];
    }
}

/* The keys that set layer l's query and key/value heads, for messages. */
static const char *heads_keys(const HfArch *a, int l) {
    const int slides = a->slides_listed && a->layer_slides[l];
    if (a->family == HF_MIMO && slides) return "swa_num_attention_heads or swa_num_key_value_heads";
    if (a->family == HF_LAGUNA) return "num_attention_heads_per_layer or num_key_value_heads";
    if (a->family == HF_STEP3P5)
        return slides ? "attention_other_setting.num_attention_heads"
                      : "num_attention_heads or num_attention_groups";
    return "num_attention_heads or num_key_value_heads";
}

int cfg_check_heads(Cfg *c, HfArch *a) {
    int own = 0, most = 0;
    for (int l = 0; l < a->L; l++) own |= a->layer_heads[l] | a->layer_kv[l];
    if (!own && a->H % a->Hkv)
        return seterr(c->err, c->errlen,
                      "%s: %d attention heads are not a multiple of %d key/value heads: change "
                      "%s",
                      c->path, a->H, a->Hkv, heads_keys(a, 0));
    for (int l = 0; l < a->L; l++) {
        if (!a->layer_heads[l]) a->layer_heads[l] = a->H;
        if (a->layer_heads[l] % hf_layer_kv(a, l))
            return seterr(c->err, c->errlen,
                          "%s: layer %d's %d attention heads are not a multiple of %d "
                          "key/value heads: change %s",
                          c->path, l, a->layer_heads[l], hf_layer_kv(a, l), heads_keys(a, l));
        if (a->layer_heads[l] > most) most = a->layer_heads[l];
    }
    if (most != a->H)
        return seterr(c->err, c->errlen, "%s: the most heads a layer has is %d, not %d", c->path,
                      most, a->H);
    return 0;
}

int hf_layer_kv(const HfArch *a, int l) {
    return l >= 0 && l < a->L && a->layer_kv[l] ? a->layer_kv[l] : a->Hkv;
}

int hf_vdim(const HfArch *a) { return a->dv ? a->dv : a->dh; }

/* sinks_where is set only with a listed sliding pattern (slides_listed). */
int hf_layer_sinks(const HfArch *a, int l) {
    if (!a->sinks || !a->sinks_where) return a->sinks != 0;
    const int slides = a->slides_listed && l >= 0 && l < a->L && a->layer_slides[l];
    return (a->sinks_where & (slides ? HF_SINKS_SLIDING : HF_SINKS_FULL)) != 0;
}

int hf_sinks_vary(const HfArch *a) {
    for (int l = 1; l < a->L; l++)
        if (hf_layer_sinks(a, l) != hf_layer_sinks(a, 0)) return 1;
    return 0;
}
