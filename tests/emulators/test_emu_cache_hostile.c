/*
 * The compile cache is untrusted input. An attacker who edits a cache can
 * recompute its SHA-256, so the checksum proves nothing: each kernel record
 * an emulator reads back (scratch size, kernel shape, strides, pads, axis,
 * perm, start/step, fp16 flag, weights) must be the one it derives from the
 * graph itself. This test compiles graphs/tiny_cnn.onnx on htp and aic,
 * then for every 8-byte word of every member's record writes a hostile
 * value, recomputes the checksum and expects the session to be refused
 * naming the member (before the fix a changed scratch size or kernel shape
 * overflowed run_conv's buffer). Also: a cache entry given twice (leaked the
 * first program), a FIFO as the cache path (must not block), and a pinned
 * cache (sy_session_options / INI compiled_cache_sha256).
 *
 * Cache layout (framework/src/compile_cache.c): "SYCCACHE" | u32 format |
 * sha256 of the rest | str fingerprint | u32 n | n x (str provider | str
 * compat | str names | u64 size | bytes), str = u32 length + bytes. Emulator
 * program (providers/htp/emu/emu.c): magic[8] | u32 version | u32 record
 * size | u32 n | n x (u32 len | op name | record | ...).
 */
#include "emu_test.h"

#include <sha2.h>
#include <sys/stat.h>

#define TINY_CNN EMU_SOURCE_DIR "/graphs/tiny_cnn.onnx"

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)sz + 1);
    if (p && fread(p, 1, (size_t)sz, f) != (size_t)sz) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *n = (size_t)sz;
    return p;
}

/* write bytes with a recomputed checksum over everything after the digest */
static bool write_resealed(const char *path, uint8_t *p, size_t n)
{
    SHA2_CTX ctx;
    SHA256Init(&ctx);
    SHA256Update(&ctx, p + 12 + 32, n - 12 - 32);
    SHA256Final(p + 12, &ctx);
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(p, 1, n, f) == n;
    return (fclose(f) == 0) && ok;
}

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static char ini[2048];

static bool ok_or_free(sy_status *st)
{
    if (st) {
        fprintf(stderr, "  %s\n", sy_status_get_message(st));
        sy_status_free(st);
    }
    return st == NULL;
}

static sy_status *open_with(const char *cache, sy_env **env, sy_model **m, sy_session **s)
{
    *env = NULL;
    *m = NULL;
    *s = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, env);
    if (!st)
        st = sy_model_load(*env, TINY_CNN, m);
    sy_session_options o = {.struct_size = sizeof o, .threads = 1, .strict = -1, .compiled_cache = cache};
    if (!st)
        st = sy_session_create(*env, *m, &o, s);
    return st;
}

static void close_all(sy_env *env, sy_model *m, sy_session *s)
{
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);
}

/* Run once with the session's pattern input: the output bytes. */
static bool run_once(sy_session *s, float *y10)
{
    float in[64];
    for (int i = 0; i < 64; i++)
        in[i] = (float)((i * 37) % 17) / 16.0f - 0.5f;
    int64_t dims[4] = {1, 1, 8, 8};
    sy_tensor t = emu_tensor(SY_DT_FLOAT32, in, 4, dims);
    const sy_tensor *out = NULL;
    if (ok_or_free(sy_session_set_input_by_index(s, 0, &t, SY_INPUT_COPY)) &&
        ok_or_free(sy_session_run(s)) && ok_or_free(sy_session_get_output(s, 0, &out)) &&
        out->nbytes == 10 * sizeof(float)) {
        memcpy(y10, out->data, 10 * sizeof(float));
        return true;
    }
    return false;
}

static void hostile_case(const char *target)
{
    snprintf(ini, sizeof ini, "[switchyard]\nplugin_dirs = %s\nproviders = %s, cpu_ref\n", EMU_PLUGIN_DIR, target);
    char path[] = "/tmp/sy_cache_hostile.XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0)
        close(fd);
    sy_env *env = NULL;
    sy_model *m = NULL;
    sy_session *s = NULL;
    uint8_t *orig = NULL, *work = NULL;
    size_t n = 0;
    PT_REQUIRE(fd >= 0, "mkstemp");
    PT_REQUIRE(emu_ok(open_with(NULL, &env, &m, &s), "session"), "session");
    float want[10], got[10];
    PT_REQUIRE(run_once(s, want), "run");
    PT_REQUIRE(emu_ok(sy_session_save_compiled(s, path), "save"), "save");
    close_all(env, m, s);
    env = NULL, m = NULL, s = NULL;
    PT_REQUIRE((orig = slurp(path, &n)) && (work = malloc(n)), "read back");

    /* walk to the first entry's program */
    size_t at = 12 + 32;
    at += 4 + rd32(orig + at); /* fingerprint */
    uint32_t entries = rd32(orig + at);
    at += 4;
    PT_REQUIRE(entries >= 1, "%s: cache has entries", target);
    size_t entry = at;
    for (int k = 0; k < 3; k++)
        at += 4 + rd32(orig + at); /* provider, compat, names */
    uint64_t size = rd32(orig + at) | (uint64_t)rd32(orig + at + 4) << 32;
    at += 8;
    size_t prog = at, entry_end = at + (size_t)size;
    PT_REQUIRE(entry_end == n || entries > 1, "%s: one entry spans the rest", target);
    PT_REQUIRE(!memcmp(orig + prog, "SYEMUPRG", 8), "%s: an emulator program", target);
    uint32_t rec = rd32(orig + prog + 12), members = rd32(orig + prog + 16);
    printf("%s: program of %u members, %u-byte records, %llu bytes\n", target, members, rec,
           (unsigned long long)size);

    /* every 8-byte word of each record, overwritten with values that steer
     * memory accesses (huge, negative, one): refused each time */
    size_t refused = 0, tried = 0, found = 0;
    for (size_t pos = prog + 20; pos + 4 < entry_end;) {
        /* a member starts with its op name (u32 length + letters); the
         * weights between records are skipped by this scan */
        uint32_t len = rd32(orig + pos);
        bool name = len >= 3 && len < 32 && pos + 4 + len + rec <= entry_end;
        for (uint32_t c = 0; name && c < len; c++)
            name = (orig[pos + 4 + c] >= 'A' && orig[pos + 4 + c] <= 'Z') ||
                   (orig[pos + 4 + c] >= 'a' && orig[pos + 4 + c] <= 'z');
        if (!name) {
            pos++;
            continue;
        }
        size_t r0 = pos + 4 + len;
        found++;
        for (size_t w = 0; w + 8 <= rec; w += 8) {
            static const uint64_t hostile[] = {0x7fffffffffffffffull, 0xffffffffffffff00ull};
            for (size_t h = 0; h < 2; h++) {
                memcpy(work, orig, n);
                if (!memcmp(work + r0 + w, &hostile[h], 8))
                    continue;
                memcpy(work + r0 + w, &hostile[h], 8);
                PT_REQUIRE(write_resealed(path, work, n), "write");
                sy_status *st = open_with(path, &env, &m, &s);
                tried++;
                if (st && sy_status_get_code(st) == SY_ERR_INVALID_MODEL &&
                    strstr(sy_status_get_message(st), "differs from the program")) {
                    refused++;
                } else {
                    PT_CHECK(0, "%s: member %zu (%.*s) word %zu = %#llx: %s", target, found - 1, (int)len,
                             (const char *)orig + pos + 4, w, (unsigned long long)hostile[h],
                             st ? sy_status_get_message(st) : "accepted");
                    if (!st && run_once(s, got))
                        PT_CHECK(!memcmp(got, want, sizeof got), "and then ran to another answer");
                }
                sy_status_free(st);
                close_all(env, m, s);
                env = NULL, m = NULL, s = NULL;
            }
        }
        pos = r0 + rec;
    }
    PT_CHECK(found == members, "%s: found %zu of %u members", target, found, members);
    PT_CHECK(refused == tried && tried > 0, "%s: %zu of %zu hostile records refused", target, refused, tried);
    printf("%s: %zu of %zu hostile kernel records refused\n", target, refused, tried);

    /* a hostile byte anywhere in the program (every 17th byte, all members,
     * weights included): refused */
    refused = tried = 0;
    for (size_t b = prog + 20; b < entry_end; b += 17) {
        memcpy(work, orig, n);
        work[b] ^= 0x41;
        PT_REQUIRE(write_resealed(path, work, n), "write");
        sy_status *st = open_with(path, &env, &m, &s);
        tried++;
        refused += st != NULL;
        if (!st)
            PT_CHECK(0, "%s: byte %zu of the program changed: accepted", target, b - prog);
        sy_status_free(st);
        close_all(env, m, s);
        env = NULL, m = NULL, s = NULL;
    }
    PT_CHECK(refused == tried, "%s: %zu of %zu altered programs refused", target, refused, tried);
    printf("%s: %zu of %zu altered programs refused\n", target, refused, tried);

    /* the same entry twice: refused (it used to leak the first program) */
    {
        size_t elen = entry_end - entry;
        uint8_t *dup = malloc(n + elen);
        PT_REQUIRE(dup, "oom");
        memcpy(dup, orig, entry_end);
        memcpy(dup + entry_end, orig + entry, elen);
        memcpy(dup + entry_end + elen, orig + entry_end, n - entry_end);
        uint32_t e2 = entries + 1;
        memcpy(dup + entry - 4, &e2, 4);
        bool w = write_resealed(path, dup, n + elen);
        free(dup);
        PT_REQUIRE(w, "write");
        sy_status *st = open_with(path, &env, &m, &s);
        PT_CHECK(st && sy_status_get_code(st) == SY_ERR_INVALID_MODEL, "%s: duplicated entry refused", target);
        PT_HAS(pt_msg(st), "repeats the partition");
        close_all(env, m, s);
        env = NULL, m = NULL, s = NULL;
    }

    /* the untouched cache still loads and gives the same bits */
    PT_REQUIRE(write_resealed(path, orig, n), "write");
    PT_REQUIRE(emu_ok(open_with(path, &env, &m, &s), "session from cache"), "from cache");
    PT_CHECK(run_once(s, got) && !memcmp(got, want, sizeof got), "%s: cached run == compiled run", target);
    close_all(env, m, s);
    env = NULL, m = NULL, s = NULL;

    /* a deployment pins its cache: the pinned file loads, any other (even a
     * valid cache) is refused before it is parsed */
    {
        char digest[SHA256_DIGEST_STRING_LENGTH], base[1024];
        SHA256Data(orig, n, digest);
        snprintf(base, sizeof base, "%.1000s", ini);
        snprintf(ini, sizeof ini, "%scompiled_cache_sha256 = %s\n", base, digest);
        sy_status *st = open_with(path, &env, &m, &s);
        PT_CHECK(st == NULL, "%s: the pinned cache loads: %s", target, st ? sy_status_get_message(st) : "");
        sy_status_free(st);
        close_all(env, m, s);
        env = NULL, m = NULL, s = NULL;
        snprintf(ini, sizeof ini,
                 "%scompiled_cache_sha256 = 00000000000000000000000000000000000000000000000000000000000000ff\n", base);
        st = open_with(path, &env, &m, &s);
        PT_CHECK(st && sy_status_get_code(st) == SY_ERR_INVALID_MODEL, "%s: an unpinned cache is refused", target);
        PT_HAS(pt_msg(st), "sha256 pin mismatch: the file is");
        close_all(env, m, s);
        env = NULL, m = NULL, s = NULL;
        snprintf(ini, sizeof ini, "%scompiled_cache_sha256 = abc\n", base);
        sy_env *e2 = NULL;
        st = sy_env_create_from_string(ini, NULL, &e2);
        PT_HAS(pt_msg(st), "compiled_cache_sha256 = 'abc' is not 64 hexadecimal digits");
        sy_env_release(e2);
    }
done:
    close_all(env, m, s);
    free(orig);
    free(work);
    unlink(path);
}

static void test_htp(void) { hostile_case("htp"); }
static void test_aic(void) { hostile_case("aic"); }

/* A FIFO as the cache: refused at once, never waited on. */
static void test_fifo_cache(void)
{
    snprintf(ini, sizeof ini, "[switchyard]\nplugin_dirs = %s\nproviders = htp, cpu_ref\n", EMU_PLUGIN_DIR);
    char dir[] = "/tmp/sy_cache_fifo.XXXXXX", fifo[600];
    sy_env *env = NULL;
    sy_model *m = NULL;
    sy_session *s = NULL;
    PT_REQUIRE(mkdtemp(dir), "mkdtemp");
    snprintf(fifo, sizeof fifo, "%s/cache.bin", dir);
    PT_REQUIRE(mkfifo(fifo, 0600) == 0, "mkfifo");
    alarm(20); /* a hang fails the test instead of the CTest timeout */
    sy_status *st = open_with(fifo, &env, &m, &s);
    alarm(0);
    PT_CHECK(st != NULL, "a FIFO cache is refused");
    PT_HAS(pt_msg(st), "not a regular file (a FIFO)");
done:
    close_all(env, m, s);
    unlink(fifo);
    rmdir(dir);
}

int main(void)
{
    PT_RUN(test_htp);
    PT_RUN(test_aic);
    PT_RUN(test_fifo_cache);
    return pt_result();
}
