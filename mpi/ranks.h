/* ranks.h — the processes of one `sysid-mpi fit` (mpi/main.c): their chunk partials gathered
 * (core's sid_shard), their agreement on failures and signals, and their byte counts.
 *
 * Every rank runs the same fit on the same inputs and makes the same calls in the same order;
 * the only collectives are the ones here, so they match rank for rank. Each gather (and the
 * point before rank 0 writes, and the end) starts with an agreement: an MPI_Allreduce (MAX)
 * of {a failed rank's key, the signal this rank caught}. A rank that failed (bad log, out of
 * memory) joins the agreement from its way out; the others learn it there, rank 0 prints the
 * failed rank's message, and every rank exits with its status before anything is written. A
 * rank that dies (killed) is mpirun's to report: it ends the job. The signal flag the fit
 * reads is the agreed one, set only in an agreement, so every rank stops at the same
 * evaluation. */
#ifndef SID_MPI_RANKS_H
#define SID_MPI_RANKS_H

#include "sid.h"

/* MPI_Init; this rank's place; ranks other than 0 keep their stderr for a failure's message
 * and send stdout nowhere. */
void ranks_init(int *argc, char ***argv);
int ranks_rank(void);
int ranks_size(void);
/* The signal every rank agreed on (0: none), for cmd_fit_embed.interrupt. */
volatile const int *ranks_signal(void);
/* core's gather (sid_shard): off[r] .. off[r + 1] is rank r's part of buf. */
sid_status ranks_gather(void *ctx, void *buf, const size_t *off, sid_error *err);
/* Every rank's bytes, after an agreement: mine (n bytes) in, all ranks' parts concatenated in
 * rank order out (malloc'd; free it), rank r's at off[r] .. off[r + 1] (off: size + 1). */
void *ranks_allgather_bytes(const void *mine, size_t n, size_t *off);
/* The agreement alone: returns only if no rank failed (before point-to-point steps, which a
 * failed rank would never join). */
void ranks_agree(void);
/* A chain through the ranks in order, after ranks_agree: rank r receives n doubles from rank
 * r - 1 (rank 0: nothing, buf untouched), then sends its n to rank r + 1 (the last: nothing). */
void ranks_chain_recv(double *buf, int n);
void ranks_chain_send(const double *buf, int n);
/* A line on the launcher's stderr from this rank (for SYSID_MPI_STATS). */
void ranks_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Meet the others before rank 0 writes: returns only if no rank failed. */
void ranks_before_write(void);
/* The end: rc is this rank's exit status (2, 3 and other statuses that are not 0, 1 or a
 * signal's: failed). Returns the status to exit with, after MPI_Finalize. */
int ranks_finish(int rc);

#endif
