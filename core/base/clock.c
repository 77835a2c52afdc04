/* clock.c — the one clock every timing reads: monotonic seconds (sid_clock_seconds, sid.h),
 * for a fit's time limit, progress lines and the seconds a report gives. */
#include "sid.h"

#include <time.h>

double sid_clock_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
