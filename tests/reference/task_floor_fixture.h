/* task_floor_fixture.h: written by tests/reference/make_task_floor_fixture.py;
 * do not edit. bigram-backcopy's task floor on experiments/small.ini's val
 * batches (B 32, T 64, 8 batches, EVAL_SEED 0xE7A1), nats per target. */
#define TASK_FLOOR_SMALL 1.0390046280519156
