/* report.c: not written yet */
