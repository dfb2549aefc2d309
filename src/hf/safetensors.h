/* safetensors.h: read Hugging Face safetensors checkpoints (read-only mmap).
 *
 * Format: 8-byte little-endian header length N, N bytes of JSON
 * {"name": {"dtype": "BF16", "shape": [..], "data_offsets": [b, e]}, ...,
 *  "__metadata__": {...}}, then the raw data; offsets are relative to the
 * data start. Everything is checked before any tensor is used: header
 * length within the file (and at most 100 MB), valid JSON, known dtype,
 * non-negative shape, byte size = numel * dtype size, offsets inside the
 * file and not overlapping. A sharded checkpoint is a directory with
 * model.safetensors.index.json {"weight_map": {name: shard file}}.
 * Every failure is -1 with one line naming the file and tensor. */
#ifndef GATELAB_HF_SAFETENSORS_H
#define GATELAB_HF_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#define ST_MAX_DIMS 8
#define ST_MAX_HEADER ((uint64_t)100 << 20)

typedef enum {
    ST_F32,
    ST_F16,
    ST_BF16,
    ST_F64,
    ST_I64,
    ST_I32,
    ST_I16,
    ST_I8,
    ST_U8,
    ST_BOOL,
    ST_U16,
    ST_U32,
    ST_U64,
    ST_F8_E4M3,
    ST_F8_E5M2,
    ST_N_DTYPES
} StDtype;

typedef struct {
    char *name;
    StDtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    size_t numel;
    const uint8_t *data; /* into the mapping */
    size_t nbytes;
    int shard; /* which file holds it */
} StTensor;

typedef struct SafeTensors SafeTensors;

/* Parse one file's bytes (the whole file: header + data). On success the
 * tensors point into buf (not copied); shard is stored in each tensor.
 * Used by st_open_* and by the fuzz target. *out malloc'd, *n count. */
int st_parse(const uint8_t *buf, size_t len, const char *fname, int shard, StTensor **out,
             size_t *n, char *err, size_t errlen);
void st_tensors_free(StTensor *t, size_t n);

/* Open MODEL_DIR: model.safetensors.index.json when present (every shard
 * it names, and each named tensor must be in its shard), else
 * model.safetensors. */
int st_open_dir(SafeTensors **out, const char *dir, char *err, size_t errlen);
/* One file. */
int st_open_file(SafeTensors **out, const char *path, char *err, size_t errlen);
void st_close(SafeTensors *st);

const StTensor *st_find(const SafeTensors *st, const char *name);
size_t st_count(const SafeTensors *st);
const StTensor *st_at(const SafeTensors *st, size_t i);
const char *st_dtype_name(StDtype d);
size_t st_dtype_size(StDtype d);

/* Convert elements [off, off+n) of t (F32, F16 or BF16) to float. */
int st_to_f32(const StTensor *t, size_t off, size_t n, float *out, char *err, size_t errlen);
/* Pointer straight into the mapping when t is F32 and 4-byte aligned,
 * else NULL (convert with st_to_f32 then). */
const float *st_f32_view(const StTensor *t);

/* Total bytes of the mapped files. */
size_t st_mapped_bytes(const SafeTensors *st);
/* The mapped files: how many, and file i's bytes (*len of them) and path. */
int st_file_count(const SafeTensors *st);
const uint8_t *st_file_bytes(const SafeTensors *st, int i, size_t *len, const char **path);

#endif
