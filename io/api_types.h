/* api_types.h — what sid_io.h's handles hold (internal: programs see only the names). */
#ifndef IO_API_TYPES_H
#define IO_API_TYPES_H

#include <cjson/cJSON.h>

#include "fitspec.h"
#include "sid.h"

struct sid_io_robot {
    char *path;
    sid_model *m;
    double *theta0;     /* sid_alloc'ed (robot_model) */
    cJSON *doc;         /* the file's robot.json text, for the writer */
};

struct sid_io_spec {
    char *path;         /* NULL: the defaults */
    fitspec spec;
    int nflag;          /* the flags applied, in order (the report's "spec_flags") */
    char **flag, **value;
};

struct sid_io_logs {
    int n;
    sid_traj **tr;
    char **path;
};

#endif
