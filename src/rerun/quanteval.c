/* quanteval.c: quantized evaluation over a Forward (see quanteval.h). The
 * quantization is data handed to the forward (Intervention.quant); the
 * losses are summed here over the targets, as lceval.c sums them. */
#include "quanteval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intervention.h"
#include "stop.h"
#include "util.h"

int quanteval_parse_modes(const char *spec, FqMode *out, int *n) {
    char buf[256];
    *n = 0;
    if (strlen(spec) >= sizeof buf) return -1;
    strcpy(buf, spec);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int m = fq_mode_parse(tok);
        if (m <= FQ_FLOAT || *n == QEVAL_MAX_MODES) return -1;
        for (int i = 0; i < *n; i++)
            if (out[i] == (FqMode)m) return -2;
        out[(*n)++] = (FqMode)m;
    }
    return *n > 0 ? 0 : -1;
}

typedef struct {
    int *in, *tg;
    float *tok_loss;
} QBufs;

/* Batches [i0, i0 + n) of nb held-out batches through f under q: the loss
 * sum over their targets into *sum, *cnt. */
static int run_batches(Forward *f, const QuantEvalOpts *o, FakeQuant *q, int i0, int n, int nb,
                       const QBufs *b, double *sum, long long *cnt, char *err, size_t errlen) {
    const int B = o->batch_size, T = f->info.seq_len, V = f->info.V;
    Intervention iv = {.kind = IV_NONE, .quant = q};
    for (int i = i0; i < i0 + n; i++) {
        if (stop_requested())
            return seterr(err, errlen, "interrupted in the quantized evaluation (%s)",
                          fq_mode_name(q->mode));
        if (f->ops->windows(f, T, B, nb, i, b->in, b->tg, err, errlen) != 0 ||
            f->ops->losses(f, b->in, b->tg, B, T, &iv, b->tok_loss, NULL, NULL, err, errlen) != 0)
            return -1;
        if (q->failed)
            return seterr(err, errlen, "%s: out of memory quantizing (%s)", f->run,
                          fq_mode_name(q->mode));
        for (size_t k = 0; k < (size_t)B * T; k++)
            if (b->tg[k] >= 0 && b->tg[k] < V) *sum += b->tok_loss[k], (*cnt)++;
    }
    return 0;
}

/* One pass of mode m with the first keep positions of every window held
 * out and input tensor hold's sites in float (-1: none), calibrated first
 * when fq_calibrated: its loss into *loss; the float pass's statistics
 * into r; when tens is given, the pass's input tensors into *tens (free)
 * and *n_tens. */
static int run_mode(Forward *f, const QuantEvalOpts *o, FqMode m, int keep, int hold,
                    const QBufs *b, QuantEvalResult *r, double *loss, FqTensor **tens, int *n_tens,
                    char *err, size_t errlen) {
    FakeQuant q;
    fq_init(&q, m);
    q.keep_first = keep;
    q.hold = hold;
    const int nb = o->batches + o->calib;
    double sum = 0.0, csum = 0.0;
    long long cnt = 0, ccnt = 0;
    q.calibrating = 1;
    int rc = !fq_calibrated(m)
                 ? 0
                 : run_batches(f, o, &q, o->batches, o->calib, nb, b, &csum, &ccnt, err, errlen);
    q.calibrating = 0;
    q.observe = m == FQ_FLOAT;
    if (rc == 0) rc = run_batches(f, o, &q, 0, o->batches, nb, b, &sum, &cnt, err, errlen);
    if (rc == 0 && m == FQ_FLOAT) fq_stats(&q, r->inf, &r->kurt_max);
    if (tens) *tens = q.tensors, *n_tens = q.n_tensors, q.tensors = NULL;
    fq_free(&q);
    *loss = cnt ? sum / (double)cnt : NAN;
    return rc;
}

/* The source of mode qm's largest damage: its pass again with each of
 * its n input tensors tens in float alone; the one whose exemption
 * lowers the loss most (the first of equals) into qm. */
static int mode_source(Forward *f, const QuantEvalOpts *o, QuantModeResult *qm,
                       const FqTensor *tens, int n, const QBufs *b, QuantEvalResult *r, char *err,
                       size_t errlen) {
    int best = -1;
    for (int j = 0; j < n; j++) {
        double loss;
        if (run_mode(f, o, qm->mode, 0, j, b, r, &loss, NULL, NULL, err, errlen) != 0) return -1;
        const double rec = qm->val_loss - loss;
        if (best < 0 || rec > qm->source_recovered) best = j, qm->source_recovered = rec;
    }
    qm->n_tensors = n;
    if (best >= 0) {
        fq_tensor_name(&tens[best], best, qm->source, sizeof qm->source);
        qm->source_layer = tens[best].layer;
    }
    return 0;
}

/* The options, and the memory plan of the passes (the Forward's, plus the
 * quantized weights), before anything runs. */
int quanteval_check(Forward *f, const QuantEvalOpts *o, char *err, size_t errlen) {
    if (o->n_modes < 1 || o->n_modes > QEVAL_MAX_MODES)
        return seterr(err, errlen, "need 1..%d quantization modes, got %d", QEVAL_MAX_MODES,
                      o->n_modes);
    if (o->batches < 1 || o->batch_size < 1 || o->calib < 1)
        return seterr(err, errlen, "--batches, --batch-size and --calib must be positive");
    if (o->keep_first < 0 || o->keep_first >= f->info.seq_len)
        return seterr(err, errlen,
                      "%s: --quant-keep-first %d leaves no position of a window quantized: its "
                      "windows have %d tokens; give 0 to %d",
                      f->run, o->keep_first, f->info.seq_len, f->info.seq_len - 1);
    int per_tensor = 0;
    for (int i = 0; i < o->n_modes; i++) per_tensor |= fq_calibrated(o->modes[i]);
    if (o->source && !per_tensor)
        return seterr(
            err, errlen,
            "--quant-source ablates the input tensors of a per-tensor mode; give " FQ_NAME_W8A8
            ", " FQ_NAME_W8A8_PCT " or " FQ_NAME_W4A4 " in --quant");
    char what[96];
    snprintf(what, sizeof what, "quantized evaluation with --batch-size %d", o->batch_size);
    MemPlan p;
    if (f->ops->plan(f, o->batch_size, f->info.seq_len, 0, 0, &p, err, errlen) != 0) return -1;
    /* the sites' quantized weight copies: at most the parameters again */
    const size_t copies = p.params;
    p.params = p.params > (size_t)-1 - copies ? (size_t)-1 : p.params + copies;
    p.total = p.total > (size_t)-1 - copies ? (size_t)-1 : p.total + copies;
    return memplan_check(&p, what, err, errlen);
}

static int imin(int a, int b) { return a < b ? a : b; }

int quanteval_fit(Forward *f, QuantEvalOpts *o, char *note, size_t notelen, char *err,
                  size_t errlen) {
    const int T = f->info.seq_len, avail = forward_avail(f, T);
    const int B0 = o->batch_size, n0 = o->batches, c0 = o->calib;
    note[0] = 0;
    if ((long long)(o->batches + o->calib) * o->batch_size <= avail) return 0;
    if (o->fit & QEVAL_FIT_BATCH_SIZE) o->batch_size = imin(B0, avail / 2 > 1 ? avail / 2 : 1);
    int nb = avail / o->batch_size; /* whole batches the input gives */
    if (o->fit & QEVAL_FIT_CALIB) o->calib = imin(c0, nb / 2 > 1 ? nb / 2 : 1);
    if (o->fit & QEVAL_FIT_BATCHES) o->batches = imin(n0, nb - o->calib);
    long long need = (long long)(o->batches + o->calib) * o->batch_size;
    if (o->batches < 1 || o->calib < 1 || need > avail)
        return seterr(err, errlen,
                      "%s: the input gives %d windows of %d tokens; --quant needs (--batches + "
                      "--calib) x --batch-size = %lld: lower them",
                      f->run, avail, T,
                      (long long)(n0 + c0) * B0 > need ? (long long)(n0 + c0) * B0 : need);
    snprintf(note, notelen,
             "%s: --quant with --batch-size %d --batches %d --calib %d (the defaults need %d "
             "windows of %d tokens, the input gives %d; set them to change)",
             f->run, o->batch_size, o->batches, o->calib, (n0 + c0) * B0, T, avail);
    return 0;
}

int quanteval_run(Forward *f, const QuantEvalOpts *o, QuantEvalResult *r, char *err,
                  size_t errlen) {
    memset(r, 0, sizeof *r);
    if (quanteval_check(f, o, err, errlen) != 0) return -1;
    const int B = o->batch_size, T = f->info.seq_len;
    r->len = T, r->calib = o->calib, r->n_seqs = (long long)o->batches * B;
    r->keep_first = o->keep_first;
    if (f->ops->prepare(f, B, T, 1.0, err, errlen) != 0) return -1;
    const size_t n = (size_t)B * T;
    QBufs b = {malloc(n * sizeof(int)), malloc(n * sizeof(int)), malloc(n * sizeof(float))};
    int rc =
        b.in && b.tg && b.tok_loss ? 0 : seterr(err, errlen, "out of memory for %d windows", B);
    if (rc == 0) rc = run_mode(f, o, FQ_FLOAT, 0, -1, &b, r, &r->val_loss, NULL, NULL, err, errlen);
    r->ppl = exp(r->val_loss);
    for (int i = 0; rc == 0 && i < o->n_modes; i++) {
        QuantModeResult *qm = &r->modes[i];
        qm->mode = o->modes[i];
        qm->val_loss_keep = qm->dloss_keep = qm->sink_dloss = qm->source_recovered = NAN;
        qm->source[0] = 0, qm->source_layer = -1;
        FqTensor *tens = NULL;
        int n_tens = 0;
        rc = run_mode(f, o, qm->mode, 0, -1, &b, r, &qm->val_loss, &tens, &n_tens, err, errlen);
        if (rc == 0 && o->keep_first > 0)
            rc = run_mode(f, o, qm->mode, o->keep_first, -1, &b, r, &qm->val_loss_keep, NULL, NULL,
                          err, errlen);
        if (rc == 0 && o->source && fq_calibrated(qm->mode))
            rc = mode_source(f, o, qm, tens, n_tens, &b, r, err, errlen);
        free(tens);
        qm->ppl = exp(qm->val_loss);
        qm->dloss = qm->val_loss - r->val_loss;
        qm->destroyed = fq_destroyed(qm->dloss);
        if (o->keep_first > 0) {
            qm->dloss_keep = qm->val_loss_keep - r->val_loss;
            qm->sink_dloss = qm->dloss - qm->dloss_keep;
        }
        r->n_modes = i + 1;
    }
    free(b.in), free(b.tg), free(b.tok_loss);
    return rc;
}
