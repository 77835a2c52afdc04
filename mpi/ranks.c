/* ranks.c — the processes of one `sysid-mpi fit`: gathers, agreement, faults (ranks.h). */
#include "ranks.h"

#include <limits.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "diag.h"

static int rank, size = 1;
static int real_stderr = 2;      /* the launcher's stderr (ranks but 0 write theirs to capture) */
static FILE *capture;            /* ranks but 0: what they wrote on stderr, shown if they fail */
static volatile int agreed;      /* the signal every rank agreed on */
static long gathers;
static double gather_seconds;    /* wall time in agreements and gathers: waiting for the others, mostly */
static double gather_cpu, cpu0;  /* CPU time in them (MPI polls while it waits), CPU time at the start */

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static unsigned long long bytes_in, bytes_out;
static long fault_gather;        /* SYSID_MPI_FAULT_GATHER on SYSID_MPI_FAULT_RANK: that gather fails */

int ranks_rank(void) { return rank; }
int ranks_size(void) { return size; }
volatile const int *ranks_signal(void) { return &agreed; }

/* A line on the launcher's stderr. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    if (write(real_stderr, line, (size_t)n) < 0)
        return;
}

void ranks_say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    say("%s", line);
}

/* What this rank wrote on its stderr (ranks but 0), NUL-terminated; NULL if nothing. */
static char *captured(void)
{
    if (!capture)
        return NULL;
    fflush(stderr);
    long n = ftell(capture);
    char *text = n > 0 ? malloc((size_t)n + 1) : NULL;
    if (!text)
        return NULL;
    rewind(capture);
    size_t got = fread(text, 1, (size_t)n, capture);
    text[got] = '\0';
    return text;
}

/* Each line of text, after "sysid-mpi: rank R of N: ". */
static void say_lines(int who, const char *text)
{
    while (text && *text) {
        const char *end = strchr(text, '\n');
        const int len = end ? (int)(end - text) : (int)strlen(text);
        say("sysid-mpi: rank %d of %d: %.*s", who, size, len, text);
        text += len + (end != NULL);
    }
}

/* This rank cannot go on (an MPI call failed, an injected fault): say why and end the job. */
static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char *text = captured();
    say_lines(rank, text);
    free(text);
    say("sysid-mpi: error: rank %d of %d: %s; every rank stops, nothing written", rank, size, msg);
    MPI_Abort(MPI_COMM_WORLD, EXIT_NUMERIC);
    exit(EXIT_NUMERIC);
}

static void check(int code, const char *what)
{
    if (code == MPI_SUCCESS)
        return;
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "error %d", code);
    die("%s failed: %s", what, s);
}

/* The agreement (ranks.h). failed_rc: this rank's exit status if it failed, else 0. If a rank
 * failed, the lowest such rank's message goes to rank 0's stderr and every rank exits with its
 * status; otherwise the agreed signal is updated and it returns. */
static void agree(int failed_rc)
{
    int v[2] = { failed_rc ? size - rank : 0, cmd_fit_signal() }, all[2];
    check(MPI_Allreduce(v, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    if (all[1] && !agreed)
        agreed = all[1];
    if (!all[0])
        return;
    const int root = size - all[0];
    /* its status and what it said (rank 0 has said it already, on its own stderr) */
    char *text = rank == root ? captured() : NULL;
    int head[2] = { failed_rc, text ? (int)strlen(text) : 0 };
    check(MPI_Bcast(head, 2, MPI_INT, root, MPI_COMM_WORLD), "MPI_Bcast");
    if (rank != root && head[1] > 0)
        text = malloc((size_t)head[1] + 1);
    if (head[1] > 0 && text) {
        check(MPI_Bcast(text, head[1], MPI_CHAR, root, MPI_COMM_WORLD), "MPI_Bcast");
        text[head[1]] = '\0';
    } else if (head[1] > 0) {
        die("out of memory");
    }
    if (rank == 0 && root != 0) {
        say_lines(root, text);
        say("sysid-mpi: error: rank %d of %d failed (exit %d); every rank stops, nothing written", root, size, head[0]);
    }
    free(text);
    MPI_Finalize();
    exit(head[0]);
}

void ranks_init(int *argc, char ***argv)
{
    int provided;
    /* OpenMP threads run the windows; only the main thread calls MPI */
    check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
    cpu0 = cpu_now();
    const char *fr = getenv("SYSID_MPI_FAULT_RANK"), *fg = getenv("SYSID_MPI_FAULT_GATHER");
    if (fr && fg && atoi(fr) == rank)
        fault_gather = atol(fg);
    if (rank == 0)
        return;
    fflush(stdout);
    fflush(stderr);
    capture = tmpfile();
    real_stderr = dup(2);
    FILE *null = fopen("/dev/null", "w");
    if (!capture || real_stderr < 0 || !null || dup2(fileno(capture), 2) < 0 || dup2(fileno(null), 1) < 0)
        die("cannot redirect this rank's stdout and stderr");
    fclose(null);
}

sid_status ranks_gather(void *ctx, void *buf, const size_t *off, sid_error *err)
{
    (void)ctx, (void)err;
    const double t0 = MPI_Wtime(), c0 = cpu_now();
    agree(0);
    if (++gathers == fault_gather)
        die("injected fault (SYSID_MPI_FAULT_GATHER=%ld)", fault_gather);
    int *counts = malloc(2 * sizeof(int) * (size_t)size);
    if (!counts)
        die("out of memory");
    int *displs = counts + size;
    /* counts are ints: in doubles where the parts are (LM's blocks of many windows pass 2 GB) */
    size_t unit = 8;
    for (int r = 0; r <= size; r++)
        while (off[r] % unit)
            unit /= 2;
    const MPI_Datatype type = unit == 8 ? MPI_DOUBLE : unit == 4 ? MPI_INT : MPI_BYTE;
    if (unit == 2)
        unit = 1;
    for (int r = 0; r < size; r++) {
        if ((off[r + 1] - off[r]) / unit > (size_t)INT_MAX || off[r] / unit > (size_t)INT_MAX)
            die("a rank's part of %zu bytes is beyond MPI_Allgatherv's int counts", off[r + 1] - off[r]);
        counts[r] = (int)((off[r + 1] - off[r]) / unit);
        displs[r] = (int)(off[r] / unit);
    }
    check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, type, MPI_COMM_WORLD),
          "MPI_Allgatherv");
    const size_t mine = off[rank + 1] - off[rank];
    bytes_in += off[size] - off[0] - mine;
    bytes_out += (unsigned long long)mine * (unsigned long long)(size - 1);
    free(counts);
    gather_seconds += MPI_Wtime() - t0;
    gather_cpu += cpu_now() - c0;
    return SID_OK;
}

void *ranks_allgather_bytes(const void *mine, size_t n, size_t *off)
{
    const double t0 = MPI_Wtime(), c0 = cpu_now();
    agree(0);
    ++gathers;
    unsigned long long len = n, *all = malloc(sizeof *all * (size_t)size);
    int *counts = malloc(2 * sizeof(int) * (size_t)size);
    if (!all || !counts)
        die("out of memory");
    check(MPI_Allgather(&len, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD),
          "MPI_Allgather");
    int *displs = counts + size;
    off[0] = 0;
    for (int r = 0; r < size; r++) {
        off[r + 1] = off[r] + (size_t)all[r];
        if (all[r] > (unsigned long long)INT_MAX || off[r] > (size_t)INT_MAX)
            die("the logs' times and summaries, %zu bytes, are beyond MPI_Allgatherv's int counts", off[r + 1]);
        counts[r] = (int)all[r];
        displs[r] = (int)off[r];
    }
    char *buf = malloc(off[size] ? off[size] : 1);
    if (!buf)
        die("out of memory");
    check(MPI_Allgatherv(mine, (int)n, MPI_BYTE, buf, counts, displs, MPI_BYTE, MPI_COMM_WORLD), "MPI_Allgatherv");
    bytes_in += off[size] - n;
    bytes_out += (unsigned long long)n * (unsigned long long)(size - 1);
    free(all);
    free(counts);
    gather_seconds += MPI_Wtime() - t0;
    gather_cpu += cpu_now() - c0;
    return buf;
}

void ranks_before_write(void) { agree(0); }
void ranks_agree(void) { agree(0); }

void ranks_chain_recv(double *buf, int n)
{
    const double t0 = MPI_Wtime(), c0 = cpu_now();
    if (rank > 0) {
        check(MPI_Recv(buf, n, MPI_DOUBLE, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
        bytes_in += sizeof(double) * (size_t)n;
    }
    gather_seconds += MPI_Wtime() - t0;
    gather_cpu += cpu_now() - c0;
}

void ranks_chain_send(const double *buf, int n)
{
    const double t0 = MPI_Wtime(), c0 = cpu_now();
    if (rank + 1 < size) {
        check(MPI_Send(buf, n, MPI_DOUBLE, rank + 1, 0, MPI_COMM_WORLD), "MPI_Send");
        bytes_out += sizeof(double) * (size_t)n;
    }
    gather_seconds += MPI_Wtime() - t0;
    gather_cpu += cpu_now() - c0;
}

/* This process's peak resident memory (VmHWM) in kB, -1 if unknown. */
static long peak_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

int ranks_finish(int rc)
{
    const int failed = rc != EXIT_OK && rc != EXIT_GATE && rc < 128;
    agree(failed ? rc : 0);
    if (getenv("SYSID_MPI_STATS")) {
        /* what every rank received, summed: the job's traffic (each byte counted once, at its receiver) */
        unsigned long long mine[2] = { bytes_in, bytes_out }, all[2] = { 0, 0 };
        check(MPI_Reduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
        if (rank == 0)
            say("sysid-mpi: %d ranks, %ld gathers, %llu bytes received by all ranks (rank 0: %llu received, %llu sent)",
                size, gathers, all[0], bytes_in, bytes_out);
        say("sysid-mpi: rank %d of %d: %.3f s CPU computing, %.3f s in gathers (%.3f s CPU), peak RSS %ld kB", rank,
            size, cpu_now() - cpu0 - gather_cpu, gather_seconds, gather_cpu, peak_rss_kb());
    }
    MPI_Finalize();
    return rc;
}
