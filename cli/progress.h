/* progress.h — what a long-running command shows while it works, on stderr.
 *
 * On a terminal one line is redrawn in place (at most ten times a second); in a pipe or a CI
 * log a line is printed at most once a second, and the last state always; with -v every
 * update is a line of its own; with -q nothing. A phase ("fit", "covariance") is one such
 * line: progress_update for each step, progress_end when it is over.
 */
#ifndef CLI_PROGRESS_H
#define CLI_PROGRESS_H

typedef enum { PROGRESS_QUIET, PROGRESS_TTY, PROGRESS_LINES, PROGRESS_EVERY } progress_mode;

typedef struct {
    progress_mode mode;
    double t0, last;     /* monotonic seconds: phase start, last line drawn */
    int drawn;           /* a terminal line without its newline is on screen */
    int pending;         /* an update not yet shown (printed by progress_end in LINES mode) */
    char line[256];
} progress;

/* The mode from -q, -v and whether stderr is a terminal. */
progress_mode progress_mode_for(int quiet, int verbose);
void progress_begin(progress *p, progress_mode mode);
/* Offer a new state of the phase (printf-style); shown or not by the mode's rate. */
void progress_update(progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* End the phase: show the last state if it was not, and end the terminal line. */
void progress_end(progress *p);

#endif
