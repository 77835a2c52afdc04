/* diag.h — how the command line reports: errors and warnings on stderr, exit codes.
 *
 * Every message starts with "sysid: error: " or "sysid: warning: " and then names the
 * place (file, JSON path or line and column) and what was expected, so that a user can
 * find the mistake without reading the source. Only cli/ prints; core/ fills sid_error.
 */
#ifndef CLI_DIAG_H
#define CLI_DIAG_H

#include "sid.h"

/* Exit codes of every command (listed in `sysid --help`). */
enum {
    EXIT_OK = 0,
    EXIT_GATE = 1,      /* finished, but a quality gate failed */
    EXIT_INPUT = 2,     /* usage error or invalid input; nothing written */
    EXIT_NUMERIC = 3,   /* numerical failure: diverged, non-finite, singular */
    EXIT_INTERRUPT = 130
};

/* When set, cli_warn prints nothing (the `-q` flag). */
extern int cli_quiet;

void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Route io's warnings and notes (io/warn.h) to stderr as cli_warn prints them, honouring -q. */
void cli_diag_install(void);
/* Print err's message as an error and return the exit code for its status. */
int cli_fail(const sid_error *err);
/* Exit code for a status: 0, 2 for bad input, 3 for numerical failures. */
int cli_exit_code(sid_status s);

#endif
