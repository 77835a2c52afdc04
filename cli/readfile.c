/* readfile.c — slurp a file; inputs are small enough (logs of a few MB) to hold whole. */
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

static void keep(const char *path, const char *buf, size_t n)
{
    kept_hash *k = realloc(kept, (size_t)(nkept + 1) * sizeof *k);
    if (!k)
        return;   /* the report then hashes the file itself */
    kept = k;
    k += nkept;
    if (!(k->path = malloc(strlen(path) + 1)))
        return;
    strcpy(k->path, path);
    sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, buf, n);
    sha256_final_hex(&c, k->hex);
    nkept++;
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
