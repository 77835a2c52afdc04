/* atomic.c — temporary file + fsync + rename, and cleanup on SIGINT/SIGTERM/SIGHUP. */
#define _XOPEN_SOURCE 700   /* realpath */
#include "atomic.h"

#include <errno.h>
#include <limits.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary file a signal handler must remove. One at a time is all sysid needs. */
static char pending[4096];
static volatile sig_atomic_t have_pending = 0;
/* The signals that end a command; the handlers in place before ours. A command with handlers
 * of its own (fit: stop, then write the best point) keeps them: the write then completes. */
static const int end_signal[3] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction old_action[3];
static int installed = 0;

static void restore(void)
{
    for (int k = 0; installed && k < 3; k++)
        sigaction(end_signal[k], &old_action[k], NULL);
    installed = 0;
}

static void on_signal(int sig)
{
    /* unlink, sigaction and raise are async-signal-safe; re-raising with the default
     * handler gives the shell the usual status (130, 143, 129). */
    if (have_pending)
        unlink(pending);
    have_pending = 0;
    restore();
    raise(sig);
}

static void track(const char *tmp)
{
    have_pending = 0;
    if (strlen(tmp) >= sizeof pending)
        return;
    strcpy(pending, tmp);
    have_pending = 1;
    struct sigaction cur;
    if (installed || sigaction(SIGINT, NULL, &cur) != 0 || cur.sa_handler != SIG_DFL)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < 3; k++)
        sigaction(end_signal[k], &sa, &old_action[k]);
    installed = 1;
}

static void untrack(void)
{
    have_pending = 0;
    restore();
}

/* Remove the temporary files ".BASE.sysid-PID.XXXXXX" in dir that a killed run (SIGKILL, a
 * crash: no handler ran) left behind: those whose process no longer exists. */
static void remove_stale(const char *dir, const char *base)
{
    DIR *d = opendir(*dir ? dir : ".");
    if (!d)
        return;
    char prefix[4200];
    snprintf(prefix, sizeof prefix, ".%s.sysid-", base);
    const size_t lp = strlen(prefix);
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, prefix, lp) != 0)
            continue;
        char *end;
        long pid = strtol(e->d_name + lp, &end, 10);
        if (end == e->d_name + lp || *end != '.' || pid <= 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;   /* that run is still going (or not ours to judge) */
        char path[8400];
        snprintf(path, sizeof path, "%s%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
}

static char *dup_str(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    return d ? strcpy(d, s) : NULL;
}

int atomic_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
        return 0;   /* stdout is no input file */
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
    if (strcmp(path, "-") == 0) {   /* stdout, as every command's -o - asks */
        af->f = stdout;
        af->path = dup_str("standard output");
        return af->path ? SID_OK : sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    }
    struct stat st, lst;
    const int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return sid_error_set(err, SID_ERR_INPUT, "%s: expected a file name, got a directory", path);
    if (exists && !S_ISREG(st.st_mode))
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
    af->tmp = malloc(dirlen + strlen(base) + 48);
    if (!af->path || !af->tmp) {
        atomic_abort(af);
        return sid_error_set(err, SID_ERR_NOMEM, "%s: out of memory", path);
    }
    /* ".name.sysid-PID.XXXXXX" in the same directory: hidden, on the target's file system,
     * and recognisable as this run's (so a later run can remove it if this one is killed) */
    memcpy(af->tmp, path, dirlen);
    af->tmp[dirlen] = '\0';
    remove_stale(af->tmp, base);
    sprintf(af->tmp + dirlen, ".%s.sysid-%ld.XXXXXX", base, (long)getpid());
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

sid_status atomic_finish(atomic_file *af, sid_error *err)
{
    /* a device is not fsync'ed (/dev/null refuses) */
    int failed = fflush(af->f) != 0 || ferror(af->f) || (af->tmp && fsync(fileno(af->f)) != 0);
    int e = errno;
    if (af->f != stdout && fclose(af->f) != 0 && !failed) {
        failed = 1;
        e = errno;
    }
    af->f = NULL;
    if (failed) {
        sid_error_set(err, SID_ERR_INPUT, "%s: cannot write: %s", af->path, strerror(e));
        atomic_abort(af);
        return SID_ERR_INPUT;
    }
    return SID_OK;
}

sid_status atomic_publish(atomic_file *af, sid_error *err)
{
    if (af->tmp && rename(af->tmp, af->path) != 0) {
        sid_error_set(err, SID_ERR_INPUT, "%s: cannot write: %s", af->path, strerror(errno));
        atomic_abort(af);
        return SID_ERR_INPUT;
    }
    untrack();
    free(af->tmp);
    af->tmp = NULL;
    atomic_abort(af);
    return SID_OK;
}

sid_status atomic_commit(atomic_file *af, sid_error *err)
{
    sid_status s = atomic_finish(af, err);
    return s ? s : atomic_publish(af, err);
}

void atomic_abort(atomic_file *af)
{
    if (af->f) {
        if (af->f != stdout)
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
