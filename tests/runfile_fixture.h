/* runfile_fixture.h: a small run file written through runfile.h with every
 * value a function of its index, for the run-file tests
 * (test_runfile.c, test_runfile_probe.c; runfile_fixture.c). Test-only. */
#ifndef GATELAB_RUNFILE_FIXTURE_H
#define GATELAB_RUNFILE_FIXTURE_H

#include "config.h"
#include "model.h"
#include "runfile.h"

/* rf_err (testutil.h): the runfile_* calls' one-line reason */
#include "testutil.h"

/* The run's config: defaults, baseline, L = 2, H = 2 (the probe below),
 * seeds that must survive as u64. */
Config test_config(void);

/* A Model built by hand: two tensors in a 10-float arena. */
typedef struct {
    Model m;
    ParamInfo info[2];
    float arena[10];
} TinyModel;

void tiny_model(TinyModel *t, const Config *cfg);

/* A probe with L=2 H=2 N=2 T=3 C=4 Ns=1, every value a function of its
 * index so the read-back can check each element. */
enum { PL = 2, PH = 2, PN = 2, PT = 3, PC = 4, PNS = 1, PD = 128 }; /* PD: the config's d_model */
typedef struct {
    int tokens[PN * PT], targets[PN * PT];
    float attention[PL * PH * PT * PT], slot[PL * PH * PT];
    float first_col[PN * PL * PH * PT], alpha0[PL * PH];
    float row_empty[PL * PH], first_ne[PL * PH];
    float gate_sample[PL * PNS * PT * PC];
    double hist[PL * 50], cmean[PL * PC], below[PL * 4], stats[PL * 4];
    double hmax[PL], hmed[PL], htop3[PL * 3], hkurt[PL], hratio[PL];
    double bos_max[PL], bos_ratio[PL], tok_max[PL], tok_ratio[PL], max_logit[PL];
    double grad_in[PL * PT], gate_wn[PL * 2];
    int bos_arg[PL], tok_arg[PL], layer_heads[PL], layer_slots[PL];
    float key_alpha[PN * PL * PH * PT], bos_cos[PN * PL * PT];
    double resid[PL * PD];
    float knorm[PL * PH * PT], vnorm[PL * PH * PT], onorm[PL * PH * PT];
    double gfirst[PL], grest[PL], erank[PL * PH];
    ProbeRecord p;
} Probe;

/* q's arrays filled, each value a function of its index, and q->p the
 * record over them at step. */
void make_probe(Probe *q, long long step);

/* Write a full small run: 3 train rows, 2 evals, a probe at step 2, the
 * model's params; open. */
RunFile *write_run(const char *path, const Config *cfg, TinyModel *t, Probe *q);

/* write_run's file on test_config and a tiny model, closed. */
void write_closed_run(const char *path, Probe *q);

#endif
