/* op_gate.c: not written yet */
