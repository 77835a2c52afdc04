/* xml_text.h — XML robot files (URDF, MJCF) read with libxml2, and changed in place.
 *
 * Reading: libxml2 parses; numbers in attributes are read strictly (every token a finite
 * number, the count as the format wants) and a mistake names the file, the line and the element.
 * Writing back keeps the user's file: libxml2 would print a parsed document anew (quotes,
 * spacing, entity spellings, attribute order all normalised), so changes are byte edits of
 * the original text instead. The element a libxml2 node came from is found again in the text
 * by its position among the start tags (document order is the order of start tags), and the
 * attribute inside that tag by name; an edit replaces only the bytes of one value (or of one
 * number in a list of them), so a diff of the output shows the changed numbers and nothing else.
 */
#ifndef CLI_XML_TEXT_H
#define CLI_XML_TEXT_H

#include <stddef.h>

#include <libxml/tree.h>

#include "sid.h"

/* Parse text (len bytes, read from path) keeping line numbers, with no network access and no
 * entity expansion; NULL with err "path:line: what libxml2 said". Free with xmlFreeDoc. */
xmlDoc *xml_text_parse(const char *path, const char *text, size_t len, sid_error *err);

/* The line of node in its file (for messages). */
long xml_line(const xmlNode *node);

/* Attribute attr of element node read as numbers (separated by XML whitespace, each finite):
 * returns how many were read (min..max), 0 when absent, -1 when a token is not a number or the
 * count is outside min..max (err: "path:LINE: <tag name=\"x\"> attr=\"...\": expected N numbers"). */
int xml_attr_numbers(const char *path, const xmlNode *node, const char *attr, int min, int max,
                     double *out, sid_error *err);

/* The bytes of attribute attr's value (inside its quotes) in text, the buffer the document was
 * parsed from: 1 with text[*start, *end), 0 when the element has no such attribute, -1 when the
 * element cannot be found in text. */
int xml_attr_span(const char *text, size_t len, const xmlNode *node, const char *attr,
                  size_t *start, size_t *end);

/* The bytes of the whole element node in text, from its "<" to the ">" that ends its end tag (or
 * its "/>"): 0 with text[*start, *end), -1 when it cannot be found. */
int xml_element_span(const char *text, size_t len, const xmlNode *node, size_t *start, size_t *end);

/* Byte replacements of one text, collected and then applied at once. */
typedef struct xml_edits xml_edits;
xml_edits *xml_edits_new(void);
void xml_edits_free(xml_edits *e);
/* Replace attribute attr's value of node by value (written as given: numbers need no escaping),
 * or add ` attr="value"` after the start tag's last attribute when absent. 0, or -1 (element not
 * found, out of memory). */
int xml_edits_set_attr(xml_edits *e, const char *text, size_t len, const xmlNode *node,
                       const char *attr, const char *value);
/* In the number list of attribute attr of node, replace component k by numfmt(v[k]) where
 * changed[k] is nonzero; the other tokens and all spacing stay. 0, or -1 (absent, not n tokens,
 * out of memory). */
int xml_edits_set_numbers(xml_edits *e, const char *text, size_t len, const xmlNode *node,
                          const char *attr, int n, const double *v, const unsigned char *changed);
/* Remove attribute attr (with the whitespace before it) from node's start tag. 0 (also when
 * absent), or -1. */
int xml_edits_remove_attr(xml_edits *e, const char *text, size_t len, const xmlNode *node,
                          const char *attr);
/* Insert raw (as given) at byte offset at. 0, or -1 (out of memory). */
int xml_edits_insert(xml_edits *e, size_t at, const char *raw);
/* text with every edit applied; *out malloc'ed and NUL-terminated, *outlen its length. Edits
 * may not overlap (-1 then; also when out of memory). */
int xml_edits_apply(const xml_edits *e, const char *text, size_t len, char **out, size_t *outlen);

#endif
