/* readfile.c — slurp a file (robots, specs: small), or read one in pieces (logs). */
#include "readfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"

/* path -> digest of what was read, when kept */
typedef struct {
    char *path;
    char hex[SHA256_HEX];
} kept_hash;
static kept_hash *kept;
static int nkept, keeping;

void readfile_keep_hashes(void)
{
    keeping = 1;
}

/* Remember c's digest for path (c is finished here). */
static void keep_ctx(const char *path, sha256_ctx *c)
{
    kept_hash *k = realloc(kept, (size_t)(nkept + 1) * sizeof *k);
    if (!k)
        return;   /* the report then hashes the file itself */
    kept = k;
    k += nkept;
    if (!(k->path = malloc(strlen(path) + 1)))
        return;
    strcpy(k->path, path);
    sha256_final_hex(c, k->hex);
    nkept++;
}

static void keep(const char *path, const char *buf, size_t n)
{
    sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, buf, n);
    keep_ctx(path, &c);
}

int readfile_sha256(const char *path, char hex[SHA256_HEX])
{
    for (int i = nkept - 1; i >= 0; i--)
        if (strcmp(kept[i].path, path) == 0) {
            memcpy(hex, kept[i].hex, SHA256_HEX);
            return 1;
        }
    return 0;
}

char *readfile(const char *path, size_t *len, sid_error *err)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        sid_error_set(err, SID_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        char *grown = realloc(buf, cap * 2);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    /* ferror also catches reading a directory (EISDIR). */
    int failed = ferror(f);
    int e = errno;
    if (!is_stdin)
        fclose(f);
    if (!buf) {
        sid_error_set(err, SID_ERR_NOMEM, "%s: out of memory", path);
        return NULL;
    }
    if (failed) {
        free(buf);
        sid_error_set(err, SID_ERR_INPUT, "%s: cannot read: %s", path, strerror(e));
        return NULL;
    }
    if (n == 0) {
        free(buf);
        sid_error_set(err, SID_ERR_INPUT, "%s: empty file", path);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    if (keeping)
        keep(path, buf, n);
    return buf;
}

struct readfile_stream {
    FILE *f;
    const char *path;
    int is_stdin;
    size_t total;
    sha256_ctx hash;
};

readfile_stream *readfile_open(const char *path, sid_error *err)
{
    readfile_stream *s = calloc(1, sizeof *s);
    if (!s) {
        sid_error_set(err, SID_ERR_NOMEM, "%s: out of memory", path);
        return NULL;
    }
    s->path = path;
    s->is_stdin = strcmp(path, "-") == 0;
    s->f = s->is_stdin ? stdin : fopen(path, "rb");
    if (!s->f) {
        sid_error_set(err, SID_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
        free(s);
        return NULL;
    }
    sha256_init(&s->hash);
    return s;
}

long readfile_read(readfile_stream *s, char *buf, size_t n, sid_error *err)
{
    size_t got = fread(buf, 1, n, s->f);
    /* ferror also catches reading a directory (EISDIR). */
    if (got == 0 && ferror(s->f)) {
        sid_error_set(err, SID_ERR_INPUT, "%s: cannot read: %s", s->path, strerror(errno));
        return -1;
    }
    if (got == 0 && s->total == 0) {
        sid_error_set(err, SID_ERR_INPUT, "%s: empty file", s->path);
        return -1;
    }
    if (keeping)
        sha256_update(&s->hash, buf, got);
    s->total += got;
    return (long)got;
}

void readfile_close(readfile_stream *s, int complete)
{
    if (!s)
        return;
    if (!s->is_stdin)
        fclose(s->f);
    if (complete && keeping)
        keep_ctx(s->path, &s->hash);
    free(s);
}
