/* fpmode.h: the floating-point mode gatelab trains in. */
#ifndef GATELAB_FPMODE_H
#define GATELAB_FPMODE_H

/* on: flush subnormal floats to zero, as results (FTZ) and as inputs (DAZ);
 * off: IEEE gradual underflow. It holds for the calling thread and every
 * thread it starts afterwards (they inherit the mode). Attention
 * probabilities and their gradients drift into the subnormal range late in
 * training, and each subnormal operand costs the CPU a microcode assist: a
 * Brown run slowed from 0.07 to 0.5 s a step. PyTorch offers the same
 * (torch.set_flush_denormal). The trainer sets it from the config key
 * flush_subnormals (default off). Where the CPU has no such mode it stays
 * IEEE. */
void fp_flush_subnormals(int on);

/* The mode the calling thread computes in now: "ftz+daz" or "ieee". */
const char *fp_mode_name(void);
/* 1 when the calling thread flushes subnormals (fp_flush_subnormals(1)). */
int fp_flushing(void);

#endif
