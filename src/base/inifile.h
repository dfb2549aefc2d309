/* inifile.h: the one INI reader of the config, the sweep file and the
 * protocol: inih's syntax (key = value, [section], ; and # comments) over
 * one line reader that counts lines, so every error is one line
 * "FILE:LINE: reason". A line is at most INI_LINE_MAX characters (without
 * its newline and CR), whether or not a newline ends it; leading blanks
 * are dropped (an indented line is a line of its own, never a
 * continuation). */
#ifndef GATELAB_INIFILE_H
#define GATELAB_INIFILE_H

#include <stddef.h>

#define INI_LINE_MAX 197 /* inih's 200-byte line buffer, less "\n\0" and slack */

/* What a handler sees: where it is and what the line says. */
typedef struct {
    const char *path; /* the name errors give */
    int line;         /* 1-based */
    const char *section;
    const char *key, *value; /* NULL for a section header */
} IniLine;

/* Called for every key (and, when on_section is set, every "[section]"
 * line before its keys, with key NULL). 0 to go on; -1 to stop after
 * filling why with the reason (without the location, which the reader
 * adds). */
typedef int (*IniFn)(void *user, const IniLine *l, char *why, size_t whylen);

typedef struct {
    IniFn on_key;
    IniFn on_section; /* or NULL */
    void *user;
} IniHandlers;

/* Read path (opened by input_fopen: a regular file), or, when text is not
 * NULL, the string text under the name path. 0, or -1 with
 * "PATH:LINE: reason" in err (a handler's reason, a syntax error, a line
 * too long, a read error), "PATH: reason" when it cannot be opened. */
int ini_read(const char *path, const char *text, const IniHandlers *h, char *err, size_t errlen);

#endif
