/* cmd_sinks.c: not written yet */
