/* data.h: tokens for training, eval and probes.
 *
 * Sources (Config.data):
 *   DATA_BROWN  - byte-level text from data_dir/train.txt and val.txt
 *                 (made by data/fetch_brown.sh)
 *   DATA_TEXT   - byte-level text from train_file / val_file
 *   DATA_TOKENS - token files train_file / val_file made by any outside
 *                 tokenizer: raw uint16 little-endian, or a .npy of
 *                 uint16/uint32/int32/uint8 ids (token_file.h)
 *   DATA_BIGRAM - the synthetic bigram-backcopy task (Guo et al. 2024),
 *                 generated in process
 *
 * Byte tokenizer: token = byte value 0..255, BOS = 256, vocab 257.
 * With bos on, every sequence's position 0 is BOS (for bigram: its BOS id).
 *
 * Batches are a pure function of (data_seed, split, step, index): no
 * hidden cursor, so a resumed run sees exactly the batches it would have.
 */
#ifndef GATELAB_DATA_H
#define GATELAB_DATA_H

#include <stddef.h>
#include <stdint.h>
#include "config.h"
#include "metrics.h" /* NEEDLE_VAL_LEN, NEEDLE_VAL_SYMBOLS */

#define BYTE_BOS 256

typedef enum { SPLIT_TRAIN = 0, SPLIT_VAL = 1, SPLIT_PROBE = 2 } Split;

typedef struct {
    DataSource source;
    int vocab_size;
    int bos; /* BOS on */
    int bos_id;
    /* corpus sources: tokens of each split */
    uint32_t *train;
    size_t n_train;
    uint32_t *val;
    size_t n_val;
    /* bigram-backcopy */
    int bg_vocab, bg_triggers;
    float *bg_cdf;             /* [bg_vocab, bg_vocab] row-wise cumulative transition */
    unsigned char *bg_trigger; /* [bg_vocab] 1 for a trigger token */
    unsigned long long bg_seed;
    double needle_share; /* training rows carrying a needle (data_needle_batch) */
} Dataset;

/* Vocab size a config implies (257 for bytes with BOS, bigram_vocab+1, or
 * max token + 1 for token files, read from the file). -1 with a reason. */
int data_vocab_size(const Config *cfg, char *err, size_t errlen);

/* A config's vocab_size, when config_resolve left it open (0: token
 * files), set to data_vocab_size; a set one is kept. 0 ok, -1 with a
 * reason. */
int data_fill_vocab(Config *cfg, char *err, size_t errlen);

/* Open the data source. -1 with a one-line reason naming the file. */
int data_open(Dataset *ds, const Config *cfg, char *err, size_t errlen);
void data_close(Dataset *ds);

/* Fill inputs[B,T] and targets[B,T] (targets = inputs shifted by one) for a
 * split at a given step. Deterministic in (seed, split, step, b). For the
 * probe split, step is ignored: the same N sequences for every variant. */
void data_batch(const Dataset *ds, int *inputs, int *targets, int B, int T, Split split,
                unsigned long long seed, long long step);

/* The needle task, a small analogue of RULER's key-value retrieval, on
 * byte text (Brown, text files). Each row is a val-split window of T
 * bytes (as data_batch) with the needle NEEDLE_LEAD KEY NEEDLE_MID VALUE
 * NEEDLE_TAIL written at a depth in [0, 1] of the room left before the
 * query (0: right after BOS, 1: just before the query), and the query
 * NEEDLE_LEAD KEY NEEDLE_MID VALUE ending the row: KEY is NEEDLE_KEY_LEN
 * random lowercase letters, VALUE NEEDLE_VAL_LEN random digits (metrics.h,
 * with the chance of guessing it), both a
 * pure function of (seed, step, b) like every batch. The answer is the
 * row's last NEEDLE_VAL_LEN targets, from position T - NEEDLE_VAL_LEN:
 * the model retrieves VALUE when its argmax is right at each of them
 * (metrics.h exact_match). */
#define NEEDLE_LEAD " The secret key "
#define NEEDLE_MID " is "
#define NEEDLE_TAIL ". "
#define NEEDLE_KEY_LEN 4
/* Bytes the needle and the query take together. */
int needle_span(void);
/* With needle_share s > 0 (byte text), each training row of data_batch
 * carries a needle with probability s, at a uniform random depth, with its
 * query ending the row (drawn from a stream of its own: the rows without
 * one are those of s = 0), so a model can learn the task. Eval and probe
 * rows never carry one. */
/* Rows [B, T] as above into inputs and targets. -1 (nothing written) when
 * the source is not byte text with BOS on, or T is shorter than the
 * needle and the query with one haystack byte (needle_span() + 1). */
int data_needle_batch(const Dataset *ds, int *inputs, int *targets, int B, int T, double depth,
                      unsigned long long seed, long long step);

/* Bytes per token for bits-per-byte: 1 for byte data (BOS excluded by the
 * caller's loss mask), or 0 when undefined (token files, bigram). */
double data_bytes_per_token(const Dataset *ds);

/* The task floor: the expected loss (nats per predicted token) of the
 * Bayes-optimal predictor on the val batches data_batch(SPLIT_VAL, seed,
 * step 0..n_batches-1) of B x T, the mean over every target of the
 * entropy of the generator's own conditional given its context: log(V -
 * K) for a row's first element (a uniform non-trigger), 0 after a trigger
 * (a copy), else the entropy of the previous token's bigram row (the steps
 * of its cdf, as the sampler draws). NaN for corpus sources, whose
 * generator is unknown, and when memory runs out. */
double data_task_floor(const Dataset *ds, int B, int T, int n_batches, unsigned long long seed);

/* Bigram-backcopy helpers, exposed for tests. */
int bigram_is_trigger(const Dataset *ds, int tok);

#endif
