/* main.c — `mpirun -n N sysid-mpi fit ROBOT.json LOG.csv... [flags]`: one fit, its windows
 * shared by N processes, with the outputs of `sysid fit` to the byte.
 *
 * Every rank runs cli's `sysid fit` (cmd_fit) on the same command line. Through core's shard
 * (sid_shard_set_default) every problem the fit makes computes only this rank's block of its
 * chunks and gathers the others' partials wherever chunks are summed (ranks.c); the sums are
 * then added in chunk order on every rank, so every rank holds the same numbers, takes the
 * same optimizer steps and makes the same calls. Rank 0 prints and writes; the others compute
 * in silence (cmd_fit_embed.no_output) and speak only if they fail (ranks.h).
 *
 * Each rank reads in full only the logs its chunks of windows touch (shard_read.h), after a
 * count pass that gives every rank every log's times and summary; where the fit needs every
 * log's data on every rank ("window": "auto"), every rank reads every log,
 * and with --html rank 0 does (it plots them); rank 0 says so.
 *
 * Faults to test with (ranks.c, tests/cli_mpi.sh): on rank SYSID_MPI_FAULT_RANK, the command
 * line's argument OLD is NEW if SYSID_MPI_FAULT_ARG=OLD=NEW (a bad log on one rank), and its
 * gather number SYSID_MPI_FAULT_GATHER fails (a rank that cannot go on, mid-fit).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "diag.h"
#include "ranks.h"
#include "shard_read.h"
#include "sid.h"

static const char usage[] = "mpirun -n N sysid-mpi fit ROBOT.json LOG.csv... [flags of sysid fit]";

/* SYSID_MPI_FAULT_ARG=OLD=NEW on rank SYSID_MPI_FAULT_RANK: argument OLD becomes NEW. */
static void inject_fault(int argc, char **argv)
{
    const char *fr = getenv("SYSID_MPI_FAULT_RANK"), *fa = getenv("SYSID_MPI_FAULT_ARG");
    const char *eq = fa ? strchr(fa, '=') : NULL;
    if (!fr || !eq || atoi(fr) != ranks_rank())
        return;
    for (int i = 1; i < argc; i++)
        if (strlen(argv[i]) == (size_t)(eq - fa) && !strncmp(argv[i], fa, (size_t)(eq - fa)))
            argv[i] = (char *)eq + 1;
}

static int run(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: %s\n\n"
               "The fit of `sysid fit` (see `sysid fit --help`), its windows shared by the N ranks\n"
               "(mpirun, srun); outputs byte-identical to `sysid fit` for any N and any --threads.\n"
               "Each rank reads only the logs its windows need; with \"window\": \"auto\" every rank reads\n"
               "every log, with --html rank 0 does (it says so).\n"
               "Rank 0 prints and writes. A rank that fails stops every rank, nothing written.\n"
               "SYSID_MPI_STATS=1: each rank's logs read, CPU time, peak memory, and the traffic.\n", usage);
        return EXIT_OK;
    }
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("sysid-mpi %s\n", SID_VERSION);
        return EXIT_OK;
    }
    if (argc < 2 || strcmp(argv[1], "fit")) {
        cli_error("sysid-mpi runs `fit` only (usage: %s); the other commands are sysid's", usage);
        return EXIT_INPUT;
    }
    return cmd_fit(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
    ranks_init(&argc, &argv);
    cli_diag_install();
    if (ranks_size() > 1) {
        const sid_shard shard = { ranks_rank(), ranks_size(), ranks_gather, NULL };
        sid_shard_set_default(&shard);
        cmd_fit_embed = (cmd_fit_embedding){ ranks_signal(), ranks_rank() > 0, ranks_before_write, shard_read_logs };
        if (ranks_rank() > 0)
            cli_quiet = 1;
        inject_fault(argc, argv);
    }
    int rc = run(argc, argv);
    /* as sysid's main: what went to stdout must have got there */
    if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
        cli_error("cannot write to standard output: %s", strerror(errno));
        if (rc == EXIT_OK)
            rc = EXIT_INPUT;
    }
    return ranks_finish(rc);
}
