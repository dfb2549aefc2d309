/* cmd_gates.c: not written yet */
