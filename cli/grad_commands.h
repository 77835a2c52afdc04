/* grad_commands.h — `sysid grad --wrt commands`: the loss's gradient with respect to every
 * logged command as a CSV, and its --check against central differences (grad_commands.c). */
#ifndef CLI_GRAD_COMMANDS_H
#define CLI_GRAD_COMMANDS_H

#include "sid.h"

/* Compute d loss / d u for every sample of logs (the problem's, in order), write the CSV to
 * out (NULL or "-": stdout; else atomically) and, with check, compare a sample of entries
 * with central differences of the loss (a summary on stderr). Returns the exit code: 0, 1 a
 * checked entry failed, 2 invalid input or a write error, 3 the simulation diverged. */
int grad_commands_run(sid_problem *p, const double *theta, sid_traj **logs, int nlog, const char *out, int check);

#endif
