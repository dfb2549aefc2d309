/* report_twin.h: the report over a directory of run files and over its
 * results.csv alone, for tests of a section that must read the same from
 * both (test_report_lcsv, test_report_quant). */
#ifndef GATELAB_REPORT_TWIN_H
#define GATELAB_REPORT_TWIN_H

/* Reports the run files in runs, copies runs/results.csv into the empty
 * directory csv and reports that alone; fails the cmocka test unless both
 * reports succeed, csv's results.csv is written back byte for byte, and
 * both REPORT.md hold the section that starts at heading (tu_md_section)
 * with the same text. Returns that section (malloc'd). */
char *report_twin_section(const char *runs, const char *csv, const char *heading);

#endif
