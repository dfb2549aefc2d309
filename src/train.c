/* train.c: not written yet */
