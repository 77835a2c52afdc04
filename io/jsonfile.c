/* jsonfile.c — cJSON parsing with line/column errors, and "expected X, got Y" messages. */
#include "jsonfile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"
#include "readfile.h"

/* cJSON reports where parsing stopped as a pointer; people want a line and a column. */
static void parse_error(sid_error *err, const char *name, const char *text, const char *at)
{
    int line = 1, col = 1;
    for (const char *c = text; c < at && *c; c++) {
        if (*c == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    char near[24];
    size_t k = 0;
    for (const char *c = at; *c && *c != '\n' && *c != '\r' && k < sizeof near - 1; c++)
        near[k++] = *c;
    near[k] = '\0';
    if (k)
        sid_error_set(err, SID_ERR_INPUT, "%s: line %d, column %d: invalid JSON near '%s'",
                      name, line, col, near);
    else
        sid_error_set(err, SID_ERR_INPUT,
                      "%s: line %d, column %d: invalid JSON (unexpected end of input)", name,
                      line, col);
}

cJSON *jsonfile_parse(const char *name, const char *text, size_t len, sid_error *err)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    /* Anything but white space after the document is a mistake too (a second object). */
    if (root && end)
        end += strspn(end, " \t\r\n");
    if (!root || (end && *end)) {
        parse_error(err, name, text, end ? end : text);
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

cJSON *jsonfile_load(const char *path, sid_error *err)
{
    size_t len;
    char *text = readfile(path, &len, err);
    if (!text)
        return NULL;
    cJSON *root = jsonfile_parse(path, text, len, err);
    free(text);
    return root;
}

void jsonfile_describe(const cJSON *v, char *buf, size_t n)
{
    if (!v)
        snprintf(buf, n, "nothing");
    else if (cJSON_IsNumber(v)) {
        char num[NUMFMT_LEN];
        if (isfinite(v->valuedouble))
            numfmt(num, v->valuedouble);
        else
            snprintf(num, sizeof num, "%g", v->valuedouble);
        snprintf(buf, n, "%s", num);
    } else if (cJSON_IsString(v))
        snprintf(buf, n, "\"%.60s\"%s", v->valuestring,
                 strlen(v->valuestring) > 60 ? "..." : "");
    else if (cJSON_IsArray(v)) {
        int k = cJSON_GetArraySize(v);
        if (k == 0)
            snprintf(buf, n, "an empty array");
        else
            snprintf(buf, n, "an array of %d", k);
    } else if (cJSON_IsObject(v))
        snprintf(buf, n, "an object");
    else if (cJSON_IsTrue(v))
        snprintf(buf, n, "true");
    else if (cJSON_IsFalse(v))
        snprintf(buf, n, "false");
    else
        snprintf(buf, n, "null");
}

int jsonfile_expected(sid_error *err, const char *file, const char *path, const char *what,
                      const cJSON *v)
{
    char g[128];
    jsonfile_describe(v, g, sizeof g);
    sid_error_set(err, SID_ERR_INPUT, "%s: %s: expected %s, got %s", file, path, what, g);
    return -1;
}

int jsonfile_write(FILE *f, const cJSON *doc)
{
    if (cJSON_IsRaw(doc)) {
        fputs(doc->valuestring, f);
        return ferror(f) ? -1 : 0;
    }
    char *text = cJSON_Print(doc);
    if (!text)
        return -1;
    /* cJSON indents with tabs and writes ":\t"; inside strings it escapes tabs, so every raw
     * tab is layout: two spaces at a line start, one space elsewhere. */
    int line_start = 1;
    for (const char *s = text; *s; s++) {
        if (*s == '\t')
            fputs(line_start ? "  " : " ", f);
        else {
            fputc(*s, f);
            line_start = *s == '\n';
        }
    }
    fputc('\n', f);
    cJSON_free(text);
    return ferror(f) ? -1 : 0;
}

int jsonfile_check_duplicates(sid_error *err, const char *file, const cJSON *v, const char *path)
{
    int i = 0;
    for (const cJSON *c = v ? v->child : NULL; c; c = c->next, i++) {
        char p[256];
        if (cJSON_IsObject(v)) {
            for (const cJSON *d = v->child; d != c; d = d->next)
                if (strcmp(c->string, d->string) == 0) {
                    sid_error_set(err, SID_ERR_INPUT, "%s: %s%s%s: key given twice", file, path,
                                  *path ? "." : "", c->string);
                    return -1;
                }
            snprintf(p, sizeof p, "%s%s%s", path, *path ? "." : "", c->string);
        } else {
            snprintf(p, sizeof p, "%s[%d]", path, i);
        }
        if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && jsonfile_check_duplicates(err, file, c, p))
            return -1;
    }
    return 0;
}
