/* sha256.h — SHA-256 (FIPS 180-4) of byte strings and files, so a report names exactly
 * which data it was computed from (compare with `sha256sum FILE`).
 */
#ifndef CLI_SHA256_H
#define CLI_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "sid.h"

#define SHA256_HEX 65   /* 64 hex digits and a NUL */

typedef struct {
    uint32_t h[8];          /* chaining state */
    uint64_t nbytes;        /* message length so far */
    unsigned char buf[64];  /* a partial block */
    size_t nbuf;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
/* Finish and write the digest as 64 lowercase hex digits (sha256sum's form). */
void sha256_final_hex(sha256_ctx *c, char hex[SHA256_HEX]);
/* The digest of the file at path; 0, or -1 with err set (naming the file). */
int sha256_file(const char *path, char hex[SHA256_HEX], sid_error *err);

#endif
