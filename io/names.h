/* names.h — names spelled from core's tables: the choices a message expects (from
 * sid_integrator_name, sid_contact_model_name: "\"euler\" or \"rk4\"" for a JSON file, "euler or
 * rk4" for a flag), and a parameter kind's key in robot.json (from the parameter table). */
#ifndef SID_NAMES_H
#define SID_NAMES_H

#include "sid.h"

#include <stddef.h>

/* Every name of the table (name(i) for i = 0, 1, ... until NULL), the last joined with " or ",
 * the others with ", "; quoted: each in double quotes. Returns buf. */
const char *names_choice(char *buf, size_t n, const char *(*name)(int), int quoted);

/* A kind's key in its robot.json object, the last part of its path: "viscous" for
 * friction.viscous (the importers write the objects around it). */
const char *param_key(sid_param_kind kind);

#endif
