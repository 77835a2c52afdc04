/* shard_read.h — the logs of one `sysid-mpi fit` (mpi/main.c): each rank reads in full only
 * the logs its chunks of windows touch and holds the others as stubs (core's sid_traj_stub:
 * their times and summaries), after a count pass in which each rank reads a share of them
 * (shard_read.c). Every rank makes the same calls (its collectives are ranks.c's). */
#ifndef SID_MPI_SHARD_READ_H
#define SID_MPI_SHARD_READ_H

#include "cmd.h"

/* cmd_fit_embedding.load_logs: 0 with l->tr and l->in set, -1 with err set (this rank's log
 * failed; the others learn it at their next agreement), 1 if l->all_why (every rank then
 * reads every log, and rank 0 says why). */
int shard_read_logs(const cmd_fit_logs *l, sid_error *err);

#endif
