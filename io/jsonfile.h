/* jsonfile.h — JSON files: reading inputs (robot.json, fit specs) with located messages,
 * and writing documents the way every sysid output looks.
 *
 * A syntax error is reported with its line and column ("cfg.json: line 3, column 14:
 * invalid JSON near '}'"); a wrong value by its JSON path and what it is ("got -1", "got
 * an array of 2", "got nothing" for a missing key).
 */
#ifndef CLI_JSONFILE_H
#define CLI_JSONFILE_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "sid.h"

/* Parse path ("-": stdin) into a new document (cJSON_Delete); NULL with err set. */
cJSON *jsonfile_load(const char *path, sid_error *err);
/* Parse text (NUL-terminated) named `name` in messages, e.g. a --columns value. */
cJSON *jsonfile_parse(const char *name, const char *text, size_t len, sid_error *err);
/* What v is, for "got ...": the number or string itself, else its kind; NULL: "nothing". */
void jsonfile_describe(const cJSON *v, char *buf, size_t n);
/* Set err to "FILE: PATH: expected WHAT, got DESCRIBE(v)" (SID_ERR_INPUT); returns -1. */
int jsonfile_expected(sid_error *err, const char *file, const char *path, const char *what,
                      const cJSON *v);

/* A key given twice in any object of v (path: v's JSON path, "" at the top) sets err to
 * "FILE: PATH: key given twice" and returns -1: cJSON would silently use the first, and the
 * user probably edited the second. */
int jsonfile_check_duplicates(sid_error *err, const char *file, const cJSON *v, const char *path);

/* Write doc to f as indented JSON (two spaces, "key": value) and a newline; -1 if memory
 * ran out or f failed. Every JSON sysid writes goes through here, so outputs diff alike.
 * A raw item is a document already in text (a user's file, robot_json_fitted): written as
 * it is, byte for byte. */
int jsonfile_write(FILE *f, const cJSON *doc);

#endif
