/* data.c: not written yet */
