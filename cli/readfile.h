/* readfile.h — read a whole input file into memory, with messages that name it. */
#ifndef CLI_READFILE_H
#define CLI_READFILE_H

#include <stddef.h>

#include "sid.h"

/* Read path ("-" is stdin) into a new NUL-terminated buffer (free with free()); *len gets
 * its length without the NUL. An empty file is an error ("PATH: empty file"). */
char *readfile(const char *path, size_t *len, sid_error *err);

#endif
