/* quanteval.h: quantized evaluation of a model (gatelab eval --quant),
 * over a Forward (forward.h): a trained run's or an inspected checkpoint's.
 *
 * The model is scored at its own length (a trained run's seq_len, a
 * checkpoint's probe length) on the held-out windows lceval.c uses, first
 * in float, then in each requested mode of fakequant.h with its linear
 * layers fake-quantized; each mode's input ranges are calibrated on
 * `calib` further held-out batches first. The float pass also records the
 * sub-layer output statistics (max |y| of the attention, FFN and layer
 * outputs; the layer outputs' max kurtosis), per sequence, averaged over
 * sequences. With keep_first K > 0 each mode is scored twice: with every
 * row of the linear layers' inputs quantized, and with the first K
 * positions of every window held out (fakequant.h); their difference is
 * the mode's sink-attributable damage. With source, each per-tensor mode
 * (w8a8, w8a8-pct, w4a4) is scored again once per input tensor of its
 * linear layers (fakequant.h FqTensor: q/k/v's shared input is one) with
 * that tensor's sites alone in float, calibration included: the tensor
 * whose exemption recovers the most loss is the mode's source of the
 * largest damage (Rahulrayy/attention-sinks-quant's --skip-modules test,
 * one tensor at a time). Nothing here writes the run file:
 * the caller stores the results (runfile_write_quant). */
#ifndef GATELAB_QUANTEVAL_H
#define GATELAB_QUANTEVAL_H

#include <stddef.h>

#include "fakequant.h"
#include "forward.h"

#define QEVAL_MAX_MODES (FQ_MODE_COUNT - 1)
#define QEVAL_CALIB_DEFAULT 4 /* calibration batches of each mode's ranges */
#define QEVAL_CALIB_TEXT "4"  /* the same, for --help */

/* The fields of QuantEvalOpts that are defaults, which quanteval_fit may
 * cut to the windows a checkpoint's input gives (bits of .fit). */
enum { QEVAL_FIT_BATCHES = 1, QEVAL_FIT_BATCH_SIZE = 2, QEVAL_FIT_CALIB = 4 };

typedef struct {
    FqMode modes[QEVAL_MAX_MODES];
    int n_modes;
    int batches, batch_size, calib;
    int keep_first; /* positions held out in float at the head of every window, 0..T-1 */
    int source;     /* 1: find each per-tensor mode's source of the largest damage */
    int fit;        /* QEVAL_FIT_* of the fields the user did not set */
} QuantEvalOpts;

typedef struct {
    FqMode mode;
    double val_loss, ppl, dloss; /* dloss: val_loss - the float val_loss */
    /* keep_first > 0 (else NaN): the val loss and dloss with the first
     * keep_first positions held out, and sink_dloss = dloss - dloss_keep */
    double val_loss_keep, dloss_keep, sink_dloss;
    int destroyed; /* fq_destroyed(dloss): every row quantized */
    /* opts.source, a per-tensor mode (else source is ""): the input tensor
     * whose sites, left in float alone, recover the most loss, its layer,
     * that recovery (dloss - the dloss with it in float) and the count of
     * input tensors tried */
    char source[48];
    int source_layer, n_tensors;
    double source_recovered;
} QuantModeResult;

typedef struct {
    int len, calib, keep_first;
    long long n_seqs;
    double val_loss, ppl;     /* float */
    double inf[FQ_OUT_COUNT]; /* mean over sequences of max |y| per output kind */
    double kurt_max;          /* mean over sequences of max over layers of kurtosis */
    int n_modes;
    QuantModeResult modes[QEVAL_MAX_MODES];
} QuantEvalResult;

/* "w8a8,w4a4" into out[*n] (at most QEVAL_MAX_MODES, no float). 0 ok; -1
 * an unknown name (out[*n] unset); -2 a mode given twice. */
int quanteval_parse_modes(const char *spec, FqMode *out, int *n);

/* Evaluate f in float and in every mode of o into r. -1 with a one-line
 * reason: a bad option, too little memory or input, an interrupt. */
int quanteval_run(Forward *f, const QuantEvalOpts *o, QuantEvalResult *r, char *err, size_t errlen);

/* The passes need (batches + calib) x batch_size windows of the model's
 * length; when the input gives fewer, the fields in o->fit are cut to fit
 * (batch_size to half the windows, calib to half the batches, batches to
 * the rest), and note gets one line saying so (else ""). -1 with one line
 * naming the options to change when even that does not fit. */
int quanteval_fit(Forward *f, QuantEvalOpts *o, char *note, size_t notelen, char *err,
                  size_t errlen);

/* quanteval_run's checks alone (the options, the memory plan), running
 * nothing: 0, or -1 with the line quanteval_run would give. */
int quanteval_check(Forward *f, const QuantEvalOpts *o, char *err, size_t errlen);

#endif
