/* atomic.h — write a file so that readers see the old file or the whole new one.
 *
 * The data go to a temporary file in the target's directory (a rename is atomic only
 * within one file system), which is flushed, fsync'ed and renamed over the target. If
 * anything fails, or the user presses Ctrl-C, the temporary file is removed and the target
 * is untouched: "nothing written" is what exit code 2 and 3 promise.
 * A target that is a symbolic link is written through: the file it points to is replaced and
 * the link stays. A target that is not a regular file (a device such as /dev/null or
 * /dev/stdout, a FIFO) is written to directly: replacing it by a file would be wrong.
 * Path "-" is standard output (every command's "-o -").
 */
#ifndef CLI_ATOMIC_H
#define CLI_ATOMIC_H

#include <stdio.h>

#include "sid.h"

typedef struct {
    FILE *f;            /* write the contents here */
    char *path;         /* target */
    char *tmp;          /* temporary file next to it; NULL when writing a device directly */
} atomic_file;

/* Do paths a and b name one file (the same inode, or the same not-yet-existing name)? */
int atomic_same_file(const char *a, const char *b);

/* Create the temporary file for path; af->f is open for writing. */
sid_status atomic_open(atomic_file *af, const char *path, sid_error *err);
/* Flush, fsync and rename over the target; on failure the target is untouched. */
sid_status atomic_commit(atomic_file *af, sid_error *err);
/* The two halves of atomic_commit, for several outputs that must all be written or none:
 * finish each (flush, fsync, close: where writes fail), then publish each (the renames). On
 * failure a half aborts af itself; the caller aborts the others. */
sid_status atomic_finish(atomic_file *af, sid_error *err);
sid_status atomic_publish(atomic_file *af, sid_error *err);
/* Drop the temporary file (safe to call after a commit or a failed open). */
void atomic_abort(atomic_file *af);

#endif
