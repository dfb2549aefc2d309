/* hf_inspect_fixture.h: what the pretrained-checkpoint tests share
 * (test_hf_inspect.c, test_hf_inspect_cli.c, test_hf_archs.c, test_hf_moe.c,
 * test_hf_step3p5.c, test_hf_mimo.c and others: tests/meson.build;
 * hf_inspect_fixture.c): the bound against PyTorch, the comparison held to
 * it, a fixture's forward checked, and the token-id file gatelab inspect
 * reads. Test-only. */
#ifndef GATELAB_HF_INSPECT_FIXTURE_H
#define GATELAB_HF_INSPECT_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "hf_config.h" /* HfArch */

/* The bound of every value against PyTorch (absolute plus relative). */
#define HF_TOL 1e-4

/* Largest |got - want| / (1 + |want|) over n values (an entry NaN in
 * both, a head its layer lacks, skipped); cmocka-fails past HF_TOL (or
 * on NaN in one only) naming fix, what and the index. */
double hf_compare(const char *fix, const char *what, const float *got, const float *want, size_t n);

/* The committed fixture tests/reference/hf/<name>/ run on its tokens with
 * full maps: logits, attention maps, first-token column, gate scores,
 * block outputs and (a model with sink logits) each query's share to its
 * sink (`slot`) held to expected.h5 by hf_compare; prints the worst
 * errors. */
void hf_check_fixture(const char *name);

/* hf_config_parse of a tiny config.json naming arch (hidden size 32, 3
 * layers, 4 heads, 2 KV heads, MLP 64, vocabulary 128, RoPE base 10^4)
 * with the extra keys `extra` (", ..." or ""). */
int hf_parse_tiny(HfArch *a, const char *arch, const char *extra, char *err, size_t errlen);

/* A config.json parse of a family's tiny config with extra keys (", ..."),
 * as hf_parse_tiny; and one case it must refuse: the extra keys and a
 * text the one-line refusal holds. */
typedef int (*HfParse)(HfArch *a, const char *extra, char *err, size_t errlen);
typedef struct {
    const char *extra, *want;
} HfRefusal;
/* Each of the n cases refused by parse in one line holding its want. */
void hf_refusals(HfParse parse, const HfRefusal *c, size_t n);

/* inspect of the committed fixture tests/reference/hf/<name>/'s weights
 * under its config.json with each text `from` replaced by `to` (pairs of
 * strings, NULL-ended; each from must be there): cmocka-fails unless it
 * exits 2 with one line holding want. */
void hf_refused_edited(const char *name, const char *want, ...);

/* An inspected run's uniform reference as the tools give it, against the
 * test's own values: `sinks --json`'s f_attn_uniform (mean) and each of
 * the L layers' f_attn_uniform_layer (share[L]), and eval's
 * uniform_share at length len (mean); log is the commands' output file. */
void hf_check_uniform(const char *run, const char *log, int len, const double *share, int L,
                      double mean);

/* A --tokens file at path: `lines` lines, each the n ids space-separated. */
void hf_write_tokens(const char *path, const int32_t *ids, int n, int lines);

#endif
