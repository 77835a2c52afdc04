/* reallog.c — rewrite a sysid log (t, q.J, qd.J, u.J in SI units, as `sysid simulate`
 * writes) the way real robots log, for the fixtures of data/double_pendulum (see
 * tests/tools/mkreallogs.sh):
 *
 *   reallog ros2 <in.csv >out.csv
 *       a ROS 2 sensor_msgs/JointState export as rosbag-to-CSV tools write it: receive time
 *       in ns since the epoch, header.stamp split in sec and nanosec, the joint names in
 *       name[i] cells, position[i], velocity[i], effort[i] (the commands) by index;
 *   reallog controller <in.csv >out.csv
 *       a controller's log from a European spreadsheet: ';' between cells, decimal commas,
 *       time in ns since the epoch, positions in degrees, velocities in degrees per second,
 *       commands times 1000 (mN*m for a torque-driven joint, mA for a current-driven one).
 *
 * Times are written as integers: t_ns = T0 + round(t * 1e9), exact for any log shorter than
 * 104 days, so that sysid must read them back to the nanosecond.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#define MAXCOL 64
#define MAXLINE 8192

static int ncol;
static char name[MAXCOL][64];

static int split(char *line, char **cell)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *s = strtok(line, ","); s && n < MAXCOL; s = strtok(NULL, ","))
        cell[n++] = s;
    return n;
}

/* %.17g, with a decimal comma when comma is set */
static void num(double x, int comma, char sep, int first)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", x);
    if (comma)
        for (char *p = buf; *p; p++)
            if (*p == '.')
                *p = ',';
    if (!first)
        putchar(sep);
    fputs(buf, stdout);
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "ros2") && strcmp(argv[1], "controller"))) {
        fprintf(stderr, "usage: reallog ros2|controller <in.csv >out.csv\n");
        return 2;
    }
    const int ros = strcmp(argv[1], "ros2") == 0;
    static char line[MAXLINE];
    char *cell[MAXCOL];
    if (!fgets(line, sizeof line, stdin))
        return 1;
    ncol = split(line, cell);
    int nj = 0;
    for (int c = 0; c < ncol; c++) {
        snprintf(name[c], sizeof name[c], "%s", cell[c]);
        nj += strncmp(cell[c], "q.", 2) == 0;
    }
    if (ncol != 1 + 3 * nj || strcmp(name[0], "t") != 0) {
        fprintf(stderr, "reallog: expected the columns t, q.J..., qd.J..., u.J... of a "
                        "robot whose joints all have motors\n");
        return 1;
    }
    const long long t0 = ros ? 1700000000123456789LL : 1764586800000000000LL;
    if (ros) {
        printf("time,header.stamp.sec,header.stamp.nanosec,header.frame_id");
        for (int j = 0; j < nj; j++)
            printf(",name[%d]", j);
        const char *field[3] = { "position", "velocity", "effort" };
        for (int f = 0; f < 3; f++)
            for (int j = 0; j < nj; j++)
                printf(",%s[%d]", field[f], j);
    } else {
        printf("timestamp_ns");
        const char *suffix[3] = { "pos_deg", "vel_dps", "cmd" };
        for (int f = 0; f < 3; f++)
            for (int j = 0; j < nj; j++)
                printf(";%s_%s", name[1 + j] + 2, suffix[f]);
    }
    putchar('\n');
    while (fgets(line, sizeof line, stdin)) {
        if (split(line, cell) != ncol) {
            fprintf(stderr, "reallog: a row with another number of cells\n");
            return 1;
        }
        const long long ns = t0 + llround(strtod(cell[0], NULL) * 1e9);
        if (ros) {
            /* the message was stamped 0.25 ms before it was received */
            const long long stamp = ns - 250000;
            printf("%lld,%lld,%lld,", ns, stamp / 1000000000LL, stamp % 1000000000LL);
            for (int j = 0; j < nj; j++)
                printf(",%s", name[1 + j] + 2);
            for (int c = 1; c < ncol; c++)
                num(strtod(cell[c], NULL), 0, ',', 0);
        } else {
            printf("%lld", ns);
            for (int c = 1; c < ncol; c++) {
                double x = strtod(cell[c], NULL);
                x = c <= 2 * nj ? x * 180 / M_PI : x * 1000;   /* deg, deg/s; mN*m or mA */
                num(x, 1, ';', 0);
            }
        }
        putchar('\n');
    }
    return 0;
}
