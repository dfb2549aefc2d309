/* hf_identity.h: the identity of the checkpoint a model was opened from,
 * as a run file records it (/pretrained checkpoint_identity): one line per
 * file the weights come from, config.json first and then each safetensors
 * file as mapped, "NAME BYTES full|sampled FNV1A64". A file of up to
 * HF_ID_FULL_BYTES is hashed whole; a larger one by its first and last
 * MiB and HF_ID_BLOCKS blocks of 64 KiB spread evenly between (about
 * 6 MiB read per file), so a change that misses every sampled block of a
 * large file goes unseen (docs/runfile.md states the cost). */
#ifndef GATELAB_HF_IDENTITY_H
#define GATELAB_HF_IDENTITY_H

#include <stddef.h>
#include <stdint.h>

#include "hf_model.h"

#define HF_ID_FULL_BYTES ((size_t)64 << 20)
#define HF_ID_BLOCKS 64

/* The identity text of m (malloc'd), NULL when memory runs out. */
char *hf_model_identity(const HfModel *m);

/* 0 when the identities rec (recorded) and cur agree, else 1 with the
 * first difference in what ("model.safetensors: content differs (its
 * sampled hash)", "config.json: 812 bytes, not 790", "the files differ:
 * ..."). */
int hf_identity_diff(const char *rec, const char *cur, char *what, size_t len);

#endif
