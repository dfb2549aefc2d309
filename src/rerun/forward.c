/* forward.c: the checks every Forward shares (forward.h). */
#include "forward.h"

#include <limits.h>
#include <stdlib.h>

#include "probe_reduce.h" /* probe_layer_channels */
#include "util.h"

int forward_avail(Forward *f, int T) { return f->ops->avail ? f->ops->avail(f, T) : INT_MAX; }

void forward_close(Forward *f) {
    if (!f) return;
    int *win = f->info.layer_window, *heads = f->info.layer_heads; /* close frees f itself */
    int *slots = f->info.layer_slots;
    f->ops->close(f);
    free(win), free(heads), free(slots);
}

int forward_layer_heads(const ForwardInfo *fi, int l) {
    return fi->layer_heads ? fi->layer_heads[l] : fi->H;
}

int forward_layer_channels(const ForwardInfo *fi, int l) {
    return probe_layer_channels(fi->layer_heads, fi->H, fi->gate_channels, 0, l);
}

int forward_check_memory(Forward *f, int B, int T, int M, int probe_n, const char *what, char *err,
                         size_t errlen) {
    MemPlan p;
    if (f->ops->plan(f, B, T, M, probe_n, &p, err, errlen) != 0) return -1;
    return memplan_check(&p, what, err, errlen);
}

int forward_check_len(const Forward *f, int T, char *err, size_t errlen) {
    const ForwardInfo *i = &f->info;
    if (i->max_len <= 0 || T <= i->max_len) return 0;
    if (i->learned_pos)
        return seterr(err, errlen,
                      "%s: length %d exceeds the learned position table (max_pos %d): "
                      "learned positions cannot extrapolate",
                      f->run, T, i->max_pos);
    return seterr(err, errlen, "%s: length %d exceeds the model's %d positions", f->run, T,
                  i->max_len);
}
