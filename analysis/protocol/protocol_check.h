/* protocol_check.h: how far a directory's protocol can be shown declared
 * before its runs (the report's headline, report_confirm.c). The protocol
 * file's pins (protocol_pin.h) are held to git and to the run files:
 *   - each pinned file (sweep file, includes, presets) hashes as `git
 *     cat-file blob COMMIT:REL` in the pinned repository (git without
 *     GIT_* variables, gitrun.h);
 *   - the protocol's [primary] lines are those of the sweep file at its
 *     pinned commit (protocol.ini and the run files' /protocol edited
 *     together are caught here);
 *   - its run list is the committed files' runs ([run NAME] sections x
 *     each file's seeds, seedlist.h), so a list shortened together with
 *     the runs is caught;
 *   - the rules it pins are the rules this build applies (pin_rules);
 *   - no results.csv in the repository's tree at the sweep file's pinned
 *     commit holds a declared seed (a committed study ran it first);
 *   - every declared run (names x seeds) has its run file here, or its
 *     row joined from results.csv (a study run in pieces, report_join.c);
 *   - the sweep did not run with --uncommitted.
 * What no file here can show is stated too: whether a declared seed was
 * run at the study's setting before the commit and never committed
 * (deterministic training makes such a run a preview); tests/check_seeds.sh
 * holds the committed claims studies' seeds fresh. */
#ifndef GATELAB_PROTOCOL_CHECK_H
#define GATELAB_PROTOCOL_CHECK_H

#include <stdio.h>

#include "row.h" /* Row */

/* The checks for the protocol file path over rows[n] (the run files of
 * its directory). Writes, when f is not NULL, one bullet per check
 * ("- ...\n"), the failures in bold, then the build that writes the
 * report. Returns 1 when every check holds, else 0. */
int protocol_status(FILE *f, const char *path, const Row *rows, int n);

/* How many of the runs the protocol file path declares ([runs]) have no
 * row in rows[n]: 0 when every one is here; -1 when it declares none or
 * cannot be read. */
int protocol_runs_missing(const char *path, const Row *rows, int n);

#endif
