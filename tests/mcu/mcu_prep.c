/*
 * mcu_prep: inputs and checks for the MCU tests (tests/mcu/test_mcu.sh).
 *
 *   mcu_prep png FILE OUT       mnist sample (8-bit PNG, 28x28) -> int8 [1,28,28]
 *                               (scale 1/255, zero point -128: q = pixel - 128)
 *   mcu_prep bmp FILE OUT       person_detect image (96x96 BMP) -> int8 [1,96,96,1]
 *                               (the BMP bytes are the model's int8 input, as in TFLite Micro)
 *   mcu_prep hello f|i X OUT    hello_world input x as float32 or int8 [1,1]
 *   mcu_prep argmax TXT N       the int8 output "out0" of TXT has its maximum at N
 *   mcu_prep person TXT 1|0     person score above (1) / below (0) the no-person score
 *   mcu_prep sin TXT f|i X      the hello_world output is within 0.25 of sin(X)
 *
 * OUT names two files: OUT.npy (for switchyard) and OUT.bin (raw bytes, the
 * input0.bin a generated main reads). PNG decoding uses zlib (test only).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static unsigned char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            unsigned char *g = realloc(buf, cap);
            if (!g) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = g;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (!got)
            break;
    }
    fclose(f);
    *size = n;
    return buf;
}

static int write_out(const char *out, const char *descr, const int64_t *dims, int rank, const void *data, size_t n)
{
    char path[4096], hdr[256], shape[96] = "";
    size_t at = 0;
    for (int i = 0; i < rank; i++)
        at += (size_t)snprintf(shape + at, sizeof shape - at, "%lld,%s", (long long)dims[i], rank == 1 ? "" : " ");
    if (rank > 1 && at >= 1)
        shape[at - 1] = '\0';
    int len = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
    int total = 10 + len + 1;
    int pad = (64 - total % 64) % 64;
    snprintf(path, sizeof path, "%s.npy", out);
    FILE *f = fopen(path, "wb");
    if (!f)
        return 1;
    uint16_t hl = (uint16_t)(len + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc(hl & 0xff, f);
    fputc(hl >> 8, f);
    fwrite(hdr, 1, (size_t)len, f);
    for (int i = 0; i < pad; i++)
        fputc(' ', f);
    fputc('\n', f);
    fwrite(data, 1, n, f);
    if (fclose(f))
        return 1;
    snprintf(path, sizeof path, "%s.bin", out);
    f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n)
        return 1;
    return fclose(f) ? 1 : 0;
}

static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* 8-bit grayscale (or RGB/GA/RGBA averaged), non-interlaced PNG */
static int read_png_gray(const char *path, uint8_t *pix, uint32_t w, uint32_t h)
{
    size_t n;
    unsigned char *b = read_all(path, &n);
    if (!b || n < 33 || memcmp(b, "\x89PNG\r\n\x1a\n", 8)) {
        free(b);
        return 1;
    }
    uint32_t pw = be32(b + 16), ph = be32(b + 20);
    int depth = b[24], ct = b[25], interlace = b[28];
    int ch = ct == 0 ? 1 : ct == 2 ? 3 : ct == 4 ? 2 : ct == 6 ? 4 : 0;
    if (pw != w || ph != h || depth != 8 || !ch || interlace) {
        free(b);
        return 1;
    }
    unsigned char *z = malloc(n);
    size_t zn = 0;
    for (size_t p = 8; z && p + 12 <= n;) {
        uint32_t len = be32(b + p);
        if (len > n - p - 12)
            break;
        if (!memcmp(b + p + 4, "IDAT", 4)) {
            memcpy(z + zn, b + p + 8, len);
            zn += len;
        }
        p += 12 + len;
    }
    size_t stride = (size_t)w * (size_t)ch;
    uLongf rawn = (uLongf)((stride + 1) * h);
    unsigned char *raw = malloc(rawn);
    int rc = 1;
    if (z && raw && uncompress(raw, &rawn, z, (uLong)zn) == Z_OK && rawn == (stride + 1) * h) {
        rc = 0;
        for (uint32_t y = 0; y < h && !rc; y++) {
            unsigned char *row = raw + y * (stride + 1) + 1;
            const unsigned char *up = y ? raw + (y - 1) * (stride + 1) + 1 : NULL;
            int f = row[-1];
            for (size_t x = 0; x < stride; x++) {
                int a = x >= (size_t)ch ? row[x - (size_t)ch] : 0, c = up && x >= (size_t)ch ? up[x - (size_t)ch] : 0;
                int u = up ? up[x] : 0;
                int pred = 0;
                switch (f) {
                case 0: pred = 0; break;
                case 1: pred = a; break;
                case 2: pred = u; break;
                case 3: pred = (a + u) / 2; break;
                case 4: {
                    int p = a + u - c, pa = abs(p - a), pb = abs(p - u), pc = abs(p - c);
                    pred = pa <= pb && pa <= pc ? a : pb <= pc ? u : c;
                    break;
                }
                default: rc = 1; break;
                }
                row[x] = (unsigned char)(row[x] + pred);
            }
            for (uint32_t x = 0; x < w; x++) {
                int s = 0, nc = ct == 4 ? 1 : ct == 6 ? 3 : ch;
                for (int k = 0; k < nc; k++)
                    s += row[x * (size_t)ch + (size_t)k];
                pix[y * w + x] = (uint8_t)(s / nc);
            }
        }
    }
    free(raw);
    free(z);
    free(b);
    return rc;
}

static int read_bmp_gray(const char *path, uint8_t *pix, int w, int h)
{
    size_t n;
    unsigned char *b = read_all(path, &n);
    if (!b || n < 54 || b[0] != 'B' || b[1] != 'M') {
        free(b);
        return 1;
    }
    uint32_t off = b[10] | b[11] << 8 | (uint32_t)b[12] << 16 | (uint32_t)b[13] << 24;
    int32_t bw = (int32_t)(b[18] | b[19] << 8 | (uint32_t)b[20] << 16 | (uint32_t)b[21] << 24);
    int32_t bh = (int32_t)(b[22] | b[23] << 8 | (uint32_t)b[24] << 16 | (uint32_t)b[25] << 24);
    int bpp = b[28] | b[29] << 8;
    int bottom_up = bh > 0;
    if (bh < 0)
        bh = -bh;
    size_t stride = ((size_t)bw * (size_t)bpp / 8 + 3) & ~(size_t)3;
    if (bw != w || bh != h || (bpp != 8 && bpp != 24) || off + stride * (size_t)h > n) {
        free(b);
        return 1;
    }
    const unsigned char *pal = b + 54;
    for (int y = 0; y < h; y++) {
        const unsigned char *row = b + off + stride * (size_t)(bottom_up ? h - 1 - y : y);
        for (int x = 0; x < w; x++) {
            const unsigned char *c = bpp == 8 ? pal + 4 * row[x] : row + 3 * x;
            pix[y * w + x] = (uint8_t)((c[0] + c[1] + c[2]) / 3);
        }
    }
    free(b);
    return 0;
}

/* the bytes of line "out0 N: xx xx ..." of a run's output */
static int read_out0(const char *path, uint8_t *bytes, size_t cap, size_t *n)
{
    size_t len;
    unsigned char *t = read_all(path, &len);
    if (!t)
        return 1;
    char *s = realloc(t, len + 1);
    if (!s) {
        free(t);
        return 1;
    }
    s[len] = '\0';
    char *line = strstr(s, "out0 ");
    if (!line || (line != s && line[-1] != '\n')) {
        free(s);
        return 1;
    }
    char *p = strchr(line, ':');
    *n = 0;
    if (!p) {
        free(s);
        return 1;
    }
    p++;
    while (*n < cap) {
        while (*p == ' ')
            p++;
        char *end;
        unsigned long v = strtoul(p, &end, 16);
        if (end == p)
            break;
        bytes[(*n)++] = (uint8_t)v;
        p = end;
    }
    free(s);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "png")) {
        uint8_t pix[28 * 28];
        int8_t q[28 * 28];
        if (read_png_gray(argv[2], pix, 28, 28)) {
            fprintf(stderr, "mcu_prep: cannot decode %s as a 28x28 8-bit PNG\n", argv[2]);
            return 1;
        }
        for (int i = 0; i < 28 * 28; i++)
            q[i] = (int8_t)(pix[i] - 128);
        int64_t dims[3] = {1, 28, 28};
        return write_out(argv[3], "|i1", dims, 3, q, sizeof q);
    }
    if (argc >= 4 && !strcmp(argv[1], "bmp")) {
        uint8_t pix[96 * 96];
        int8_t q[96 * 96];
        if (read_bmp_gray(argv[2], pix, 96, 96)) {
            fprintf(stderr, "mcu_prep: cannot read %s as a 96x96 BMP\n", argv[2]);
            return 1;
        }
        for (int i = 0; i < 96 * 96; i++)
            q[i] = (int8_t)(pix[i] >= 128 ? pix[i] - 256 : pix[i]);
        int64_t dims[4] = {1, 96, 96, 1};
        return write_out(argv[3], "|i1", dims, 4, q, sizeof q);
    }
    if (argc >= 5 && !strcmp(argv[1], "hello")) {
        double x = atof(argv[3]);
        int64_t dims[2] = {1, 1};
        if (argv[2][0] == 'f') {
            float v = (float)x;
            return write_out(argv[4], "<f4", dims, 2, &v, sizeof v);
        }
        long q = lround(x / 0.024480115622282028) - 128;
        int8_t v = (int8_t)(q > 127 ? 127 : q);
        return write_out(argv[4], "|i1", dims, 2, &v, sizeof v);
    }
    uint8_t out[4096];
    size_t n = 0;
    if (argc >= 4 && (!strcmp(argv[1], "argmax") || !strcmp(argv[1], "person") || !strcmp(argv[1], "sin"))) {
        if (read_out0(argv[2], out, sizeof out, &n) || !n) {
            fprintf(stderr, "mcu_prep: no out0 line in %s\n", argv[2]);
            return 1;
        }
    }
    if (argc >= 4 && !strcmp(argv[1], "argmax")) {
        size_t best = 0;
        for (size_t i = 1; i < n; i++)
            if ((int8_t)out[i] > (int8_t)out[best])
                best = i;
        printf("argmax %zu (expected %s)\n", best, argv[3]);
        return best == (size_t)atoi(argv[3]) ? 0 : 1;
    }
    if (argc >= 4 && !strcmp(argv[1], "person")) {
        int no = (int8_t)out[0], yes = n > 1 ? (int8_t)out[1] : 0;
        printf("no-person %d person %d\n", no, yes);
        return atoi(argv[3]) ? !(yes > no) : !(no > yes);
    }
    if (argc >= 5 && !strcmp(argv[1], "sin")) {
        double x = atof(argv[4]), y;
        if (argv[3][0] == 'f') {
            float v;
            memcpy(&v, out, 4);
            y = v;
        } else {
            y = 0.008290956728160381 * ((int8_t)out[0] - 5);
        }
        printf("x %.3f y %.4f sin x %.4f\n", x, y, sin(x));
        return fabs(y - sin(x)) < 0.25 ? 0 : 1;
    }
    fprintf(stderr, "usage: see the comment at the top of tests/mcu/mcu_prep.c\n");
    return 2;
}
