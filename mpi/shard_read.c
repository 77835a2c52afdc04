/* shard_read.c — each rank reads only the logs its windows need (shard_read.h).
 *
 * The count pass: rank r parses its share of the logs, the fitted then the validation ones in
 * order, logs [ntot r / N, ntot (r + 1) / N): every log is checked by one rank (a bad one fails
 * there, named), and the rank keeps what every rank needs of each: its time column (the
 * windows, the tape's size, the step's work limits), its summary (sid_log_summarize: the sample
 * count, which columns it has, the per-column partial sums of the residual scales, its
 * velocity noise), its digest for the report and the warnings reading it gave. These are
 * all-gathered (rank order is log order), so every rank holds the same stubs (sid_traj_stub),
 * cuts the same windows into the same chunks, and knows which logs its chunks touch
 * (sid_shard_logs_needed); it then keeps or reads those in full and frees the rest. A log
 * whose windows straddle two ranks' chunks is read by both. Memory per rank: its logs (at
 * most its share and its chunks' logs while the two differ) and every log's time column.
 *
 * Why a share rather than every rank scanning the time columns: a CSV's time column cannot
 * be read without reading the whole file, so every rank would read every byte; this way each
 * byte is read by about two ranks (the share's and the chunks' reader, mostly the same one).
 * Warnings: rank 0 repeats, in log order, what every log's reader was warned of, so the
 * messages are those of `sysid fit`.
 */
#include "shard_read.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "ranks.h"
#include "readfile.h"
#include "sha256.h"
#include "traj_csv.h"
#include "warn.h"

/* The warnings and notes of reading one log, each as its kind byte, its text and a NUL. */
typedef struct {
    char *buf;
    size_t n, cap;
} said;

static void capture(void *ctx, sid_io_msg_kind kind, const char *msg)
{
    said *s = ctx;
    const size_t len = strlen(msg) + 2;
    if (s->n + len > s->cap) {
        const size_t cap = (s->n + len) * 2;
        char *b = realloc(s->buf, cap);
        if (!b)
            return;   /* a warning lost, never the fit */
        s->buf = b, s->cap = cap;
    }
    s->buf[s->n++] = (char)kind;
    memcpy(s->buf + s->n, msg, len - 1);
    s->n += len - 1;
}

/* A growing byte buffer: one rank's records. */
typedef struct {
    char *buf;
    size_t n, cap;
    int failed;
} bytes;

static void put(bytes *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        const size_t cap = (b->n + n) * 2;
        char *nb = realloc(b->buf, cap);
        if (!nb) {
            b->failed = 1;
            return;
        }
        b->buf = nb, b->cap = cap;
    }
    memcpy(b->buf + b->n, p, n);
    b->n += n;
}

/* Read log j in full into l->tr[j] (its warnings to s; s NULL: muted); its digest into l->sha256[j]. */
static int read_log(const cmd_fit_logs *l, int j, said *s, sid_error *err)
{
    if (s)
        sid_io_set_warn(capture, s);
    const int mute = sid_io_warn_mute(!s);
    const int bad = traj_csv_load(l->path[j], l->m, &l->spec->columns, &l->tr[j], err);
    sid_io_warn_mute(mute);
    cli_diag_install();
    if (bad)
        return -1;
    if (!readfile_sha256(l->path[j], l->sha256[j]) && sha256_file(l->path[j], l->sha256[j], err))
        return -1;
    return 0;
}

/* One log's record: samples (int64), summary, digest, said's length (uint64) and bytes, times. */
static void put_record(bytes *b, const cmd_fit_logs *l, int j, const double *sum, size_t nsum, const said *s)
{
    const int64_t n = l->tr[j]->n;
    const uint64_t ns = s->n;
    put(b, &n, sizeof n);
    put(b, sum, sizeof(double) * nsum);
    put(b, l->sha256[j], SHA256_HEX);
    put(b, &ns, sizeof ns);
    put(b, s->buf, s->n);
    put(b, l->tr[j]->t, sizeof(double) * (size_t)n);
}

int shard_read_logs(const cmd_fit_logs *l, sid_error *err)
{
    const int size = ranks_size(), rank = ranks_rank(), ntot = l->nlog + l->nval;
    if (l->all_why) {
        if (rank == 0 && !cli_quiet)
            fprintf(stderr, "sysid-mpi: every rank reads every log: %s\n", l->all_why);
        return 1;
    }
    const size_t nsum = sid_log_summary_size(l->m);
    const int j0 = (int)((long)ntot * rank / size), j1 = (int)((long)ntot * (rank + 1) / size);
    double *sum = malloc(sizeof(double) * (nsum ? nsum : 1) * (size_t)(ntot > 0 ? ntot : 1));   /* every log's */
    int *need = calloc((size_t)(ntot > 0 ? ntot : 1), sizeof *need);
    bytes mine = { 0 };
    int rc = -1;
    if (!sum || !need)
        goto nomem;

    /* the count pass: this rank's share, in full */
    said *s = calloc((size_t)(j1 > j0 ? j1 - j0 : 1), sizeof *s);
    double *sums = malloc(sizeof(double) * (nsum + 1) * (size_t)(j1 > j0 ? j1 - j0 : 1));
    double *prev = malloc(sizeof(double) * (nsum + 1));
    int bad = !s || !sums || !prev;
    for (int j = j0; !bad && j < j1; j++)
        if (read_log(l, j, &s[j - j0], err))
            bad = 2;
    /* the summaries: the running sums go down the ranks' shares in log order, one pass over
     * every log as one process makes it (the fitted logs' list, then the validation logs') */
    if (!bad)
        ranks_agree();   /* (a rank that failed meets the others in its ranks_finish) */
    if (!bad) {
        prev[0] = 0;   /* [0]: 1 if [1..] is the summary of the log before */
        ranks_chain_recv(prev, (int)nsum + 1);
        for (int j = j0; j < j1; j++) {
            double *cur = sums + (size_t)(j - j0) * (nsum + 1);
            const int first = j == 0 || j == l->nlog;
            sid_log_summarize(l->m, l->tr[j], first || !prev[0] ? NULL : prev + 1, cur + 1);
            cur[0] = 1;
            memcpy(prev, cur, sizeof(double) * (nsum + 1));
        }
        ranks_chain_send(prev, (int)nsum + 1);
        for (int j = j0; j < j1; j++)
            put_record(&mine, l, j, sums + (size_t)(j - j0) * (nsum + 1) + 1, nsum, &s[j - j0]);
    }
    for (int j = j0; s && j < j1; j++)
        free(s[j - j0].buf);
    free(s);
    free(sums);
    free(prev);
    if (bad == 2)
        goto done;
    if (bad || mine.failed)
        goto nomem;
    size_t *off = malloc(sizeof(size_t) * (size_t)(size + 1));
    char *all = off ? ranks_allgather_bytes(mine.buf, mine.n, off) : NULL;
    free(off);
    if (!all)
        goto nomem;

    /* every log: the stub of the others' share, their warnings said by rank 0 */
    const char *at = all;
    for (int j = 0; j < ntot; j++) {
        int64_t n;
        uint64_t ns;
        memcpy(&n, at, sizeof n);
        at += sizeof n;
        const char *summary = at;
        at += sizeof(double) * nsum;
        const char *digest = at;
        at += SHA256_HEX;
        memcpy(&ns, at, sizeof ns);
        at += sizeof ns;
        for (const char *m = at; rank == 0 && m < at + ns; m += strlen(m + 1) + 2) {
            if (m[0] == SID_IO_NOTE)
                sid_io_note("%s", m + 1);
            else
                sid_io_warn("%s", m + 1);
        }
        at += ns;
        memcpy(sum + (size_t)j * nsum, summary, sizeof(double) * nsum);
        if (j < j0 || j >= j1) {
            double *t = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
            if (t)
                memcpy(t, at, sizeof(double) * (size_t)n);
            l->tr[j] = t ? sid_traj_stub(l->m, (int)n, t, sum + (size_t)j * nsum) : NULL;
            free(t);
            if (!l->tr[j]) {
                free(all);
                goto nomem;
            }
            memcpy(l->sha256[j], digest, SHA256_HEX);
        }
        at += sizeof(double) * (size_t)n;
    }
    free(all);

    /* the logs this rank's chunks touch, in the fit's problems and the validation's */
    sid_loss_opts lo;
    fitspec_loss_opts(l->spec, &lo);
    const sid_shard shard = { rank, size, NULL, NULL };
    sid_shard_logs_needed((const sid_traj *const *)l->tr, l->nlog, &lo, &shard, need);
    lo.estimate_start = 0;
    if (l->nval)
        sid_shard_logs_needed((const sid_traj *const *)l->tr + l->nlog, l->nval, &lo, &shard, need + l->nlog);
    if (l->first_why && rank == 0) {   /* rank 0 writes what needs them all */
        for (int j = 0; j < ntot; j++)
            need[j] = 1;
        if (!cli_quiet)
            fprintf(stderr, "sysid-mpi: rank 0 reads every log: %s\n", l->first_why);
    }
    for (int j = 0; j < ntot; j++) {
        if (need[j] == sid_traj_is_stub(l->tr[j])) {
            sid_traj *had = l->tr[j];
            if (need[j]) {   /* read it (its warnings were said) */
                l->tr[j] = NULL;
                if (read_log(l, j, NULL, err)) {
                    sid_traj_free(had);
                    goto done;
                }
            } else {         /* read in the count pass, not needed: a stub */
                if (!(l->tr[j] = sid_traj_stub(l->m, had->n, had->t, sum + (size_t)j * nsum))) {
                    l->tr[j] = had;
                    goto nomem;
                }
            }
            sid_traj_free(had);
        }
    }
    if (getenv("SYSID_MPI_STATS")) {   /* which logs this rank holds (tests/cli_mpi.sh) */
        char list[512];
        size_t k = 0;
        list[0] = '\0';
        for (int j = 0; j < ntot && k + 16 < sizeof list; j++)
            if (need[j])
                k += (size_t)snprintf(list + k, sizeof list - k, " %d", j + 1);
        char share[48] = "none";
        if (j1 > j0)
            snprintf(share, sizeof share, "%d..%d", j0 + 1, j1);
        ranks_say("sysid-mpi: rank %d of %d: logs read in full:%s (of %d; the count pass read %s)", rank, size,
                  k ? list : " none", ntot, share);
    }
    rc = 0;
    goto done;
nomem:
    sid_error_set(err, SID_ERR_NOMEM, "out of memory reading the logs");
done:
    free(mine.buf);
    free(need);
    free(sum);
    return rc;
}
