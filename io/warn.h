/* warn.h — io's warnings and notes go to a sink the program installs; io itself never prints.
 *
 * A warning names the place (file:line or JSON path) and the element, as every error does;
 * a note says what a reader chose on the user's behalf. With no sink installed both are
 * dropped. The sysid command installs one that prints "sysid: warning: ..." on stderr and
 * honours -q (cli/diag.c). What a program may call is in sid_io.h; this adds io's own calls.
 */
#ifndef IO_WARN_H
#define IO_WARN_H

#include "sid_io.h"   /* sid_io_msg_kind, sid_io_warn_fn, sid_io_set_warn: the public half */

void sid_io_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sid_io_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Whether a message would reach a sink now: lets a reader skip work done only to warn. */
int sid_io_warn_enabled(void);

/* Drop messages while mute is set (a file re-read whose import was warned about already);
 * returns the previous setting, for the caller to restore. */
int sid_io_warn_mute(int mute);

#endif
