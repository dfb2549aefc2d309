/* cli_json.h: every --json output (sinks, gates, acts, eval) is built as a
 * jansson value and printed here, so string escaping and non-finite
 * numbers (null) are handled once, by a JSON library; and the JSON that
 * helper scripts print (bench's PyTorch twins) is read here, by the same
 * library. */
#ifndef GATELAB_CLI_JSON_H
#define GATELAB_CLI_JSON_H

#include <jansson.h>

/* A JSON number, or null when v is NaN or infinite (JSON has neither). */
json_t *cj_num(double v);

/* A JSON string of s; bytes that are not UTF-8 (a file name may hold
 * any) become U+FFFD, so the output is always valid JSON. */
json_t *cj_str(const char *s);

/* obj[key] = v (v's reference is taken, NULL is ignored); returns obj. */
json_t *cj_set(json_t *obj, const char *key, json_t *v);

/* Print v on stdout as one line and release it. 0, or -1 (a message on
 * stderr naming cmd) when it could not be built or written. */
int cj_print(const char *cmd, json_t *v);

/* Run the shell command cmd and parse the last line of its stdout that
 * is a JSON object (a helper script's result line). Returns the object
 * (the caller json_decref's it), or NULL when the command could not run,
 * exited non-zero or printed no such line. */
json_t *cj_popen_object(const char *cmd);

/* obj[key] as a double; NAN when absent or not a number. */
double cj_number(const json_t *obj, const char *key);

#endif
