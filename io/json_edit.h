/* json_edit.h — change values at JSON paths in a JSON text, keeping every other byte.
 *
 * A user's file has its own layout (key order, indentation, number spellings such as 0.50 or
 * 1e-3); printing a parsed document anew would lose all of it. These functions find the bytes
 * of one value and splice in new ones, so that a diff shows only what changed.
 *
 * A path is keys joined by dots, with array elements as [index]: "joints[2].friction.viscous",
 * "links[1].com[2]", "gravity[0]". Its keys are ASCII; a key in the text is compared with its
 * escapes decoded, as a parser reads it. The text must be valid JSON (parse it first): the
 * scanner trusts its structure and only stops at its end.
 */
#ifndef CLI_JSON_EDIT_H
#define CLI_JSON_EDIT_H

#include <stddef.h>

/* The value at path: 1 with its bytes at text[*start, *end); 0 when a key on the way is
 * missing; -1 when the path runs through anything else (a number where an object should be,
 * an index past an array's end). */
int json_edit_find(const char *text, const char *path, size_t *start, size_t *end);

/* Put value (JSON text: "0.25", "[0, 0, 1]") at path in *text (malloc'ed; replaced by a new
 * one on success). A present value's bytes are replaced. A missing key becomes the last
 * member of the innermost object that is there, laid out as that object's last member (the
 * same line break and indentation before the key, the same spacing around ':'; after a lone
 * member on its "{" line, "," if written as {"a":1}, else ", "), with the
 * objects missing on the way created on one line ({ "key": value }); an empty object gets
 * { "key": value }. Arrays never grow. Returns 0, or -1 (the path runs through something
 * else or needs a missing array element; out of memory) with *text unchanged. */
int json_edit_set(char **text, const char *path, const char *value);

#endif
