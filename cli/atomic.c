/* atomic.c — temporary file + fsync + rename, and cleanup on SIGINT/SIGTERM. */
#define _XOPEN_SOURCE 700   /* realpath */
#include "atomic.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary file a signal handler must remove. One at a time is all sysid needs. */
static char pending[4096];
static volatile sig_atomic_t have_pending = 0;
/* The handlers in place before ours (a command may have its own, e.g. to stop a fit). */
static struct sigaction old_int, old_term;
static int installed = 0;

static void on_signal(int sig)
{
    /* unlink, sigaction and raise are async-signal-safe; re-raising with the handler that
     * was there before (by default: terminate) gives the shell the usual status, 130. */
    if (have_pending)
        unlink(pending);
    have_pending = 0;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    installed = 0;
    raise(sig);
}

static void track(const char *tmp)
{
    have_pending = 0;
    if (strlen(tmp) >= sizeof pending)
        return;
    strcpy(pending, tmp);
    have_pending = 1;
    if (!installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        installed = 1;
    }
}

static void untrack(void)
{
    have_pending = 0;
    if (installed) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        installed = 0;
    }
}

static char *dup_str(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    return d ? strcpy(d, s) : NULL;
}

int atomic_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (strcmp(a, b) == 0)
        return 1;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* A device or FIFO: open it as it is (no temporary file, no rename). */
static sid_status open_direct(atomic_file *af, const char *path, sid_error *err)
{
    af->path = dup_str(path);
    af->f = af->path ? fopen(path, "w") : NULL;
    if (!af->f) {
        int e = errno;
        atomic_abort(af);
        return sid_error_set(err, SID_ERR_INPUT, "%s: cannot open: %s", path, strerror(e));
    }
    return SID_OK;
}

sid_status atomic_open(atomic_file *af, const char *path, sid_error *err)
{
    memset(af, 0, sizeof *af);
    struct stat st, lst;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return sid_error_set(err, SID_ERR_INPUT, "%s: expected a file name, got a directory", path);
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return open_direct(af, path, err);
    char *resolved = NULL;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && (resolved = realpath(path, NULL))) {
        /* write through the link: the rename replaces its target, not the link */
        sid_status s = atomic_open(af, resolved, err);
        free(resolved);
        return s;
    }
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path + 1) : 0;
    const char *base = slash ? slash + 1 : path;
    if (!*base)
        return sid_error_set(err, SID_ERR_INPUT, "%s: expected a file name, got a directory", path);
    af->path = dup_str(path);
    af->tmp = malloc(dirlen + strlen(base) + 16);
    if (!af->path || !af->tmp) {
        atomic_abort(af);
        return sid_error_set(err, SID_ERR_NOMEM, "%s: out of memory", path);
    }
    /* ".name.XXXXXX" in the same directory: hidden, and on the target's file system. */
    memcpy(af->tmp, path, dirlen);
    sprintf(af->tmp + dirlen, ".%s.XXXXXX", base);
    int fd = mkstemp(af->tmp);
    if (fd < 0) {
        int e = errno;
        free(af->tmp);
        af->tmp = NULL;
        atomic_abort(af);
        return sid_error_set(err, SID_ERR_INPUT, "%s: cannot create a file there: %s", path,
                             strerror(e));
    }
    track(af->tmp);
    /* mkstemp makes 0600; a result file should get the usual 0666 & ~umask. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    af->f = fdopen(fd, "w");
    if (!af->f) {
        close(fd);
        atomic_abort(af);
        return sid_error_set(err, SID_ERR_NOMEM, "%s: cannot open: %s", path, strerror(errno));
    }
    return SID_OK;
}

sid_status atomic_commit(atomic_file *af, sid_error *err)
{
    /* a device is not fsync'ed (/dev/null refuses) and not renamed */
    int failed = fflush(af->f) != 0 || ferror(af->f) || (af->tmp && fsync(fileno(af->f)) != 0);
    int e = errno;
    if (fclose(af->f) != 0 && !failed) {
        failed = 1;
        e = errno;
    }
    af->f = NULL;
    if (!failed && af->tmp && rename(af->tmp, af->path) != 0) {
        failed = 1;
        e = errno;
    }
    if (failed) {
        sid_error_set(err, SID_ERR_INPUT, "%s: cannot write: %s", af->path, strerror(e));
        atomic_abort(af);
        return SID_ERR_INPUT;
    }
    untrack();
    free(af->tmp);
    af->tmp = NULL;
    atomic_abort(af);
    return SID_OK;
}

void atomic_abort(atomic_file *af)
{
    if (af->f) {
        fclose(af->f);
        af->f = NULL;
    }
    if (af->tmp) {
        untrack();
        unlink(af->tmp);
        free(af->tmp);
        af->tmp = NULL;
    }
    free(af->path);
    af->path = NULL;
}
