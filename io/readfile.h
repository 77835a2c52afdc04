/* readfile.h — read a whole input file into memory, with messages that name it. */
#ifndef CLI_READFILE_H
#define CLI_READFILE_H

#include <stddef.h>

#include "sid.h"

/* Read path ("-" is stdin) into a new NUL-terminated buffer (free with free()); *len gets
 * its length without the NUL. An empty file is an error ("PATH: empty file"). */
char *readfile(const char *path, size_t *len, sid_error *err);

/* The same file in pieces, for inputs too large to want twice in memory (logs): open,
 * read until 0, close. Messages and the kept hash are those of readfile: "PATH: cannot
 * open", "PATH: cannot read", "PATH: empty file" (reported by the first read that finds
 * nothing). */
typedef struct readfile_stream readfile_stream;
readfile_stream *readfile_open(const char *path, sid_error *err);
/* Up to n bytes into buf: their count, 0 at the end, or -1 with err set. */
long readfile_read(readfile_stream *s, char *buf, size_t n, sid_error *err);
/* Close; the digest of what was read is kept (when hashes are) only if complete is set. */
void readfile_close(readfile_stream *s, int complete);

/* From now on, remember the SHA-256 of every file readfile reads (off by default: hashing
 * costs time that only a report needs). */
void readfile_keep_hashes(void);
/* The SHA-256 of the bytes readfile last read from path, into hex; 0 if it read none. The
 * digest is of what was read, so a pipe or standard input ("-") gets its own, not that of
 * reading the pipe a second time. */
int readfile_sha256(const char *path, char hex[65]);

#endif
