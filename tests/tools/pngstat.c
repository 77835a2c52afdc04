/* pngstat.c — is a screenshot blank? Prints "WIDTH HEIGHT COLOURS NONWHITE" for an 8-bit RGB or
 * RGBA PNG (what chromium --screenshot writes): its distinct colours and the fraction of pixels
 * that are not white. tests/cli_html.sh uses it to check a browser drew the report; a blank
 * or failed render is one colour. zlib inflates; the scanline filters are undone here (PNG
 * specification, section 9). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static int paeth(int a, int b, int c)
{
    const int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: pngstat FILE.png\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *png = malloc((size_t)n), *idat = malloc((size_t)n);
    if (!png || !idat || fread(png, 1, (size_t)n, f) != (size_t)n || n < 33 || memcmp(png, "\x89PNG\r\n\x1a\n", 8)) {
        fprintf(stderr, "%s: not a PNG\n", argv[1]);
        return 2;
    }
    fclose(f);
    uint32_t w = be32(png + 16), h = be32(png + 20);
    const int depth = png[24], type = png[25], interlace = png[28];
    if (depth != 8 || (type != 2 && type != 6) || interlace) {
        fprintf(stderr, "%s: only 8-bit RGB or RGBA, not interlaced (depth %d, type %d)\n", argv[1], depth, type);
        return 2;
    }
    size_t ni = 0;
    for (long p = 8; p + 12 <= n;) {
        const uint32_t len = be32(png + p);
        if (p + 12 + (long)len > n)
            break;
        if (!memcmp(png + p + 4, "IDAT", 4)) {
            memcpy(idat + ni, png + p + 8, len);
            ni += len;
        }
        p += 12 + (long)len;
    }
    const int bpp = type == 6 ? 4 : 3;
    const size_t stride = (size_t)w * (size_t)bpp + 1;
    uLongf raw_len = (uLongf)(stride * h);
    unsigned char *raw = malloc(raw_len), *bits = calloc(1 << 21, 1);
    if (!raw || !bits || uncompress(raw, &raw_len, idat, (uLong)ni) != Z_OK || raw_len != stride * h) {
        fprintf(stderr, "%s: cannot inflate the image data\n", argv[1]);
        return 2;
    }
    long colours = 0, nonwhite = 0;
    for (uint32_t y = 0; y < h; y++) {
        unsigned char *row = raw + y * stride + 1, *prev = y ? raw + (y - 1) * stride + 1 : NULL;
        const int filter = row[-1];
        for (size_t x = 0; x < stride - 1; x++) {
            const int a = x >= (size_t)bpp ? row[x - (size_t)bpp] : 0, b = prev ? prev[x] : 0,
                      c = prev && x >= (size_t)bpp ? prev[x - (size_t)bpp] : 0;
            const int pred = filter == 1 ? a : filter == 2 ? b : filter == 3 ? (a + b) / 2 : filter == 4 ? paeth(a, b, c) : 0;
            row[x] = (unsigned char)(row[x] + pred);
        }
        for (uint32_t x = 0; x < w; x++) {
            const unsigned char *px = row + (size_t)x * (size_t)bpp;
            const uint32_t rgb = (uint32_t)px[0] << 16 | (uint32_t)px[1] << 8 | px[2];
            if (!(bits[rgb >> 3] & (1 << (rgb & 7)))) {
                bits[rgb >> 3] |= (unsigned char)(1 << (rgb & 7));
                colours++;
            }
            nonwhite += rgb != 0xffffff;
        }
    }
    printf("%u %u %ld %.4f\n", w, h, colours, (double)nonwhite / ((double)w * h));
    free(png), free(idat), free(raw), free(bits);   /* make debug builds this tool with LeakSanitizer */
    return 0;
}
