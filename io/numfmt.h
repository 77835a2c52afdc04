/* numfmt.h — numbers as text that read back to the same double.
 *
 * Every number sysid writes (CSV cells, JSON values) must parse back to the exact double
 * that was computed, or a fit written and re-read would drift. cJSON's own printer accepts
 * a 15-digit form that is only within an epsilon of the value, so JSON numbers go through
 * numfmt_json instead. The shortest of %.15g, %.16g, %.17g that reads back exactly is used,
 * so that 0.1 stays "0.1" while a fitted 0.10000000000000002 keeps all its digits.
 */
#ifndef CLI_NUMFMT_H
#define CLI_NUMFMT_H

#include <cjson/cJSON.h>

#define NUMFMT_LEN 32

/* Shortest round-trip decimal form of a finite x into buf (NUMFMT_LEN bytes). */
void numfmt(char *buf, double x);
/* A cJSON raw number item holding numfmt(x); NULL if x is not finite or out of memory. */
cJSON *numfmt_json(double x);
/* Replace every number in the tree by its numfmt raw form (so printing is exact). */
int numfmt_json_tree(cJSON *item);

#endif
