/* numfmt.c — shortest exact decimal forms of doubles, for CSV and JSON output. */
#include "numfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void numfmt(char *buf, double x)
{
    /* %.17g always round-trips an IEEE double; fewer digits are tried first because they
     * are what a person wrote (0.1, not 0.10000000000000001). */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, NUMFMT_LEN, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            return;
    }
}

cJSON *numfmt_json(double x)
{
    char buf[NUMFMT_LEN];
    if (!isfinite(x))
        return NULL;
    numfmt(buf, x);
    return cJSON_CreateRaw(buf);
}

int numfmt_json_tree(cJSON *item)
{
    for (cJSON *c = item ? item->child : NULL; c; c = c->next) {
        if (cJSON_IsNumber(c)) {
            char buf[NUMFMT_LEN];
            if (!isfinite(c->valuedouble))
                return -1;
            numfmt(buf, c->valuedouble);
            char *s = cJSON_malloc(strlen(buf) + 1);
            if (!s)
                return -1;
            strcpy(s, buf);
            /* Turn the number into a raw item in place, keeping its key and position. The
             * tree must own its strings (cJSON_Duplicate and cJSON_Parse give such trees). */
            c->type = cJSON_Raw | (c->type & cJSON_StringIsConst);
            c->valuestring = s;
        } else if (numfmt_json_tree(c) != 0) {
            return -1;
        }
    }
    return 0;
}
