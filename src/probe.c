/* probe.c: not written yet */
