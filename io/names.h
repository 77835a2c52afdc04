/* names.h — the choices a message expects, spelled from one of core's name tables
 * (sid_integrator_name, sid_contact_model_name): "\"euler\" or \"rk4\"" for a JSON file,
 * "euler or rk4" for a flag. */
#ifndef SID_NAMES_H
#define SID_NAMES_H

#include <stddef.h>

/* Every name of the table (name(i) for i = 0, 1, ... until NULL), the last joined with " or ",
 * the others with ", "; quoted: each in double quotes. Returns buf. */
const char *names_choice(char *buf, size_t n, const char *(*name)(int), int quoted);

#endif
