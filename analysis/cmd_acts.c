/* cmd_acts.c: not written yet */
