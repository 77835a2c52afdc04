/* json_edit.c — find a value's bytes by its JSON path and splice in new ones.
 *
 * The scanner skips values without building them: strings to their closing quote (escapes
 * skipped), objects and arrays by bracket depth outside strings, everything else to the next
 * delimiter. White space is any byte from 1 to 32, as cJSON (which parsed the text) has it,
 * and a byte order mark may come first.
 */
#include "json_edit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t skip_ws(const char *s, size_t i)
{
    while (s[i] && (unsigned char)s[i] <= 32)
        i++;
    return i;
}

/* The end of the string whose opening quote is at i. */
static size_t string_end(const char *s, size_t i)
{
    for (i++; s[i] && s[i] != '"'; i++)
        if (s[i] == '\\' && s[i + 1])
            i++;
    return s[i] ? i + 1 : i;
}

/* The end of the value that starts at i. */
static size_t value_end(const char *s, size_t i)
{
    if (s[i] == '"')
        return string_end(s, i);
    if (s[i] == '{' || s[i] == '[') {
        int depth = 0;
        while (s[i]) {
            if (s[i] == '"') {
                i = string_end(s, i);
                continue;
            }
            if (s[i] == '{' || s[i] == '[')
                depth++;
            else if ((s[i] == '}' || s[i] == ']') && --depth == 0)
                return i + 1;
            i++;
        }
        return i;
    }
    while ((unsigned char)s[i] > 32 && s[i] != ',' && s[i] != ']' && s[i] != '}')
        i++;
    return i;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Does the string whose quote is at i decode to key[0, n)? ("\u0061rmature" is "armature".) */
static int key_is(const char *s, size_t i, const char *key, size_t n)
{
    static const char esc[] = "\"\\/bfnrt", val[] = "\"\\/\b\f\n\r\t";
    size_t k = 0;
    for (i++; s[i] && s[i] != '"'; k++) {
        unsigned c = (unsigned char)s[i++];
        if (c == '\\') {
            const char e = s[i++];
            const char *at = e ? strchr(esc, e) : NULL;
            if (e == 'u') {
                c = 0;
                for (int h = 0; h < 4; h++, i++) {
                    int d = hex_digit(s[i]);
                    if (d < 0)
                        return 0;
                    c = 16 * c + (unsigned)d;
                }
                if (c >= 128)
                    return 0;   /* path keys are ASCII */
            } else if (at) {
                c = (unsigned char)val[at - esc];
            } else {
                return 0;
            }
        }
        if (k >= n || c != (unsigned char)key[k])
            return 0;
    }
    return k == n;
}

/* What locate found: the value, or where the first missing key of the path would go. */
typedef struct {
    size_t start, end;          /* the value */
    size_t open;                /* the '{' of the object that lacks the key */
    int has_last;               /* that object has members; its last: */
    size_t lead, key;           /* the white space before its key starts at lead; its key */
    size_t colon, value_start;  /* from the key's end to its value: the spacing around ':' */
    size_t value_stop;          /* the end of its value */
    const char *rest;           /* the missing part of the path (starts with the key) */
} spot;

static int locate(const char *s, const char *path, spot *sp)
{
    /* a UTF-8 byte order mark, which cJSON skips too */
    size_t i = skip_ws(s, strncmp(s, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0);
    const char *p = path;
    while (*p) {
        if (*p == '[') {
            char *e;
            long idx = strtol(p + 1, &e, 10);
            if (e == p + 1 || *e != ']' || idx < 0 || s[i] != '[')
                return -1;
            p = e + 1;
            size_t j = skip_ws(s, i + 1);
            if (s[j] == ']' || !s[j])
                return -1;
            for (long k = 0; k < idx; k++) {
                j = skip_ws(s, value_end(s, j));
                if (s[j] != ',')
                    return -1;
                j = skip_ws(s, j + 1);
            }
            i = j;
            continue;
        }
        if (*p == '.' && p != path)
            p++;
        const size_t n = strcspn(p, ".[");
        if (n == 0 || s[i] != '{')
            return -1;
        sp->open = i;
        sp->has_last = 0;
        size_t lead = i + 1, j = skip_ws(s, i + 1);
        int found = 0;
        while (s[j] == '"') {
            const size_t kend = string_end(s, j), colon = skip_ws(s, kend);
            if (s[colon] != ':')
                return -1;
            const size_t v = skip_ws(s, colon + 1), vend = value_end(s, v);
            *sp = (spot){ .open = sp->open, .has_last = 1, .lead = lead, .key = j, .colon = kend,
                          .value_start = v, .value_stop = vend };
            if (key_is(s, j, p, n)) {
                found = 1;
                i = v;
                break;
            }
            j = skip_ws(s, vend);
            if (s[j] != ',')
                break;
            lead = j + 1;
            j = skip_ws(s, j + 1);
        }
        if (!found) {
            sp->rest = p;
            return 0;
        }
        p += n;
    }
    sp->start = i;
    sp->end = value_end(s, i);
    return 1;
}

int json_edit_find(const char *text, const char *path, size_t *start, size_t *end)
{
    spot sp;
    const int r = locate(text, path, &sp);
    if (r == 1) {
        *start = sp.start;
        *end = sp.end;
    }
    return r;
}

/* *text with its bytes [from, to) replaced by add[0, n). */
static int splice(char **text, size_t from, size_t to, const char *add, size_t n)
{
    const size_t len = strlen(*text);
    char *out = malloc(len - (to - from) + n + 1);
    if (!out)
        return -1;
    memcpy(out, *text, from);
    memcpy(out + from, add, n);
    memcpy(out + from + n, *text + to, len - to + 1);
    free(*text);
    *text = out;
    return 0;
}

int json_edit_set(char **text, const char *path, const char *value)
{
    const char *s = *text;
    spot sp;
    const int r = locate(s, path, &sp);
    if (r < 0)
        return -1;
    if (r == 1)
        return splice(text, sp.start, sp.end, value, strlen(value));
    if (strchr(sp.rest, '['))
        return -1;   /* an array element: the caller writes the whole array */

    /* The new member, spaced as its future sibling: ",\n    \"key\": value" */
    const char *colon = ": ";
    int ncolon = 2;
    if (sp.has_last && !memchr(s + sp.colon, '\n', sp.value_start - sp.colon)) {
        colon = s + sp.colon;
        ncolon = (int)(sp.value_start - sp.colon);
    }
    char *member = NULL;
    size_t nmember = 0;
    FILE *f = open_memstream(&member, &nmember);
    if (!f)
        return -1;
    const int nlead = (int)(sp.key - sp.lead);
    if (sp.has_last && sp.lead == sp.open + 1 && !memchr(s + sp.lead, '\n', (size_t)nlead))
        /* after "{" on one line there is no separator to copy: compact if the colon is */
        fputs(nlead == 0 && ncolon == 1 ? "," : ", ", f);
    else if (sp.has_last)
        fprintf(f, ",%.*s", nlead, s + sp.lead);
    else
        fputc(' ', f);
    int depth = 0;
    for (const char *k = sp.rest;; depth++) {
        const size_t n = strcspn(k, ".");
        fprintf(f, "\"%.*s\"%.*s", (int)n, k, ncolon, colon);
        if (!k[n])
            break;
        fputs("{ ", f);
        k += n + 1;
    }
    fputs(value, f);
    while (depth-- > 0)
        fputs(" }", f);
    if (!sp.has_last)
        fputc(' ', f);
    if (fclose(f) != 0 || !member) {
        free(member);
        return -1;
    }
    /* after the last member's value, or between the braces of an empty object */
    const size_t from = sp.has_last ? sp.value_stop : sp.open + 1;
    const size_t to = sp.has_last ? sp.value_stop : skip_ws(s, sp.open + 1);
    const int rc = splice(text, from, to, member, nmember);
    free(member);
    return rc;
}
