/*
 * Compile cache: the compiled partitions of a session, written by
 * sy_session_save_compiled (`switchyard compile`) and read back through
 * sy_session_options.compiled_cache so that loading skips the providers'
 * compile. A cache is tied to one model (a fingerprint of its graph) and to
 * each provider's compatibility string (provider, version, SoC, options)
 * extended with the requantization forms of the partition's integer nodes;
 * any mismatch or corruption is refused with both sides named, never run.
 *
 * Layout (little-endian):
 *   "SYCCACHE" | u32 format (1) | 32-byte sha256 of the rest |
 *   str model fingerprint | u32 n | n x (str provider | str compat |
 *   str node names, '\n'-joined | u64 size | bytes)
 * where str = u32 length + bytes.
 */
#include "session.h"
#include "status.h"
#include "util.h"

#include <errno.h>
#include <sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define CACHE_MAGIC "SYCCACHE"
#define CACHE_FORMAT 1u

/* ---- a growable byte buffer ---- */
typedef struct bytes {
    uint8_t *p;
    size_t len, cap;
    bool oom;
} bytes;

static void put(bytes *b, const void *data, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n > b->cap) {
        size_t cap = (b->cap + n) * 2;
        uint8_t *grown = realloc(b->p, cap);
        if (!grown) {
            b->oom = true;
            return;
        }
        b->p = grown;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void put_u32(bytes *b, uint32_t v)
{
    uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(b, le, 4);
}

static void put_u64(bytes *b, uint64_t v)
{
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}

static void put_str(bytes *b, const char *s, size_t n)
{
    put_u32(b, (uint32_t)n);
    put(b, s, n);
}

/* ---- a bounds-checked reader ---- */
typedef struct reader {
    const uint8_t *p;
    size_t len, at;
    bool bad;
} reader;

static uint32_t get_u32(reader *r)
{
    if (r->bad || r->len - r->at < 4) {
        r->bad = true;
        return 0;
    }
    const uint8_t *q = r->p + r->at;
    r->at += 4;
    return (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
}

static uint64_t get_u64(reader *r)
{
    uint64_t lo = get_u32(r);
    return lo | (uint64_t)get_u32(r) << 32;
}

static const uint8_t *get_bytes(reader *r, uint64_t n)
{
    if (r->bad || n > r->len - r->at) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *q = r->p + r->at;
    r->at += (size_t)n;
    return q;
}

/* ---- identities ---- */
static void model_fingerprint(const struct sy_session *s, char out[SHA256_DIGEST_STRING_LENGTH])
{
    SHA2_CTX ctx;
    SHA256Init(&ctx);
    for (uint32_t i = 0; i < s->g->n_nodes; i++) {
        const ir_node *n = &s->g->nodes[i];
        SHA256Update(&ctx, (const uint8_t *)n->name, strlen(n->name) + 1);
        SHA256Update(&ctx, (const uint8_t *)n->op, strlen(n->op) + 1);
        SHA256Update(&ctx, (const uint8_t *)n->domain, strlen(n->domain) + 1);
    }
    for (uint32_t i = 0; i < s->g->n_inputs; i++) {
        const sy_tensor *t = &s->values[s->g->inputs[i]].t;
        SHA256Update(&ctx, (const uint8_t *)&t->dtype, sizeof t->dtype);
        SHA256Update(&ctx, (const uint8_t *)t->dims, sizeof(int64_t) * (size_t)t->rank);
    }
    SHA256End(&ctx, out);
}

static char *partition_nodes(const struct sy_session *s, const sy_part_rt *p)
{
    bytes b = {0};
    for (uint32_t m = 0; m < p->n_nodes; m++) {
        const char *name = s->nodes[p->nodes[m]].view.ir->name;
        if (m)
            put(&b, "\n", 1);
        put(&b, name, strlen(name));
    }
    put(&b, "", 1);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return (char *)b.p;
}

static const char *compat_of(const sy_part_rt *p)
{
    const char *c = p->provider->def.compat ? p->provider->def.compat(p->provider->state) : NULL;
    return c ? c : p->provider->def.name;
}

/* The provider's compatibility string plus the requantization forms its
 * integer nodes were compiled with (" requant=gemmlowp", or per node when
 * they differ), so a cache made with one form is refused under another.
 * Unchanged for partitions without integer nodes. NULL: out of memory. */
static char *partition_compat(const struct sy_session *s, const sy_part_rt *p)
{
    bytes b = {0};
    const char *base = compat_of(p), *first = NULL;
    bool mixed = false;
    put(&b, base, strlen(base));
    for (uint32_t m = 0; m < p->n_nodes; m++) {
        const char *f = s->nodes[p->nodes[m]].view.rq_form;
        if (f && !first)
            first = f;
        else if (f && strcmp(f, first))
            mixed = true;
    }
    if (first && !mixed) {
        put(&b, " requant=", 9);
        put(&b, first, strlen(first));
    } else if (mixed) {
        put(&b, " requant=", 9);
        for (uint32_t m = 0, k = 0; m < p->n_nodes; m++) {
            const struct sy_node *v = &s->nodes[p->nodes[m]].view;
            if (!v->rq_form)
                continue;
            if (k++)
                put(&b, ",", 1);
            put(&b, v->ir->name, strlen(v->ir->name));
            put(&b, ":", 1);
            put(&b, v->rq_form, strlen(v->rq_form));
        }
    }
    put(&b, "", 1);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return (char *)b.p;
}

SY_EXPORT sy_status *sy_session_save_compiled(const sy_session *s, const char *path)
{
    if (!s || !path)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_session_save_compiled: session and path are required");
    bytes body = {0};
    char fp[SHA256_DIGEST_STRING_LENGTH];
    model_fingerprint(s, fp);
    put_str(&body, fp, strlen(fp));
    uint32_t n = 0;
    for (uint32_t q = 0; q < s->n_parts; q++)
        n += s->parts[q].compiled && s->parts[q].provider->def.serialize;
    if (!n) {
        free(body.p);
        return sy_error(SY_ERR_NOT_FOUND, "%s: no provider compiled a partition of %s, so there is nothing to cache",
                        path, s->model->ir->path);
    }
    put_u32(&body, n);
    for (uint32_t q = 0; q < s->n_parts; q++) {
        const sy_part_rt *p = &s->parts[q];
        if (!p->compiled || !p->provider->def.serialize)
            continue;
        void *blob = NULL;
        size_t size = 0;
        sy_status *st = p->provider->def.serialize(p->compiled, &blob, &size);
        if (st) {
            free(body.p);
            return sy_error_wrap(st, "%s: provider '%s' could not serialize partition %u", path,
                                 p->provider->def.name, p->group_id);
        }
        char *names = partition_nodes(s, p);
        char *compat = partition_compat(s, p);
        put_str(&body, p->provider->def.name, strlen(p->provider->def.name));
        put_str(&body, compat ? compat : "", compat ? strlen(compat) : 0);
        put_str(&body, names ? names : "", names ? strlen(names) : 0);
        put_u64(&body, size);
        put(&body, blob, size);
        free(names);
        free(compat);
        sy_aligned_free(blob); /* host->alloc memory */
        if (!names || !compat)
            body.oom = true;
    }
    if (body.oom) {
        free(body.p);
        return sy_error_oom();
    }
    uint8_t digest[SHA256_DIGEST_LENGTH];
    SHA2_CTX ctx;
    SHA256Init(&ctx);
    SHA256Update(&ctx, body.p, body.len);
    SHA256Final(digest, &ctx);

    char *tmp = sy_asprintf("%s.tmp.XXXXXX", path);
    int fd = tmp ? mkstemp(tmp) : -1;
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        sy_status *st = sy_error(SY_ERR_IO, "%s: cannot create the cache file: %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        free(tmp);
        free(body.p);
        return st;
    }
    bytes head = {0};
    put(&head, CACHE_MAGIC, 8);
    put_u32(&head, CACHE_FORMAT);
    put(&head, digest, sizeof digest);
    bool ok = !head.oom && fwrite(head.p, 1, head.len, f) == head.len && fwrite(body.p, 1, body.len, f) == body.len;
    ok = (fclose(f) == 0) && ok;
    free(head.p);
    free(body.p);
    if (!ok || rename(tmp, path) != 0) {
        sy_status *st = sy_error(SY_ERR_IO, "%s: cannot write the cache file: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return st;
    }
    free(tmp);
    return NULL;
}

/* Load the cache file and deserialize every partition it holds; the
 * partitions it does not hold are compiled as usual. */
sy_status *sy_compile_cache_load(struct sy_session *s)
{
    const char *path = s->cache_path;
    struct stat sb;
    int fd = sy_open_regular(path, &sb);
    if (fd == -2)
        return sy_error(SY_ERR_IO, "compile cache %s: not a regular file (%s)", path, sy_file_kind(sb.st_mode));
    if (fd >= 0 && (uint64_t)sb.st_size > s->env->cfg.limits.max_file_bytes) {
        close(fd);
        return sy_error(SY_ERR_BUDGET, "compile cache %s: %lld bytes, over max_file_bytes = %llu", path,
                        (long long)sb.st_size, (unsigned long long)s->env->cfg.limits.max_file_bytes);
    }
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        sy_status *st = sy_error(SY_ERR_NOT_FOUND, "compile cache %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return st;
    }
    bytes file = {0};
    uint8_t chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        put(&file, chunk, got);
    bool read_err = ferror(f);
    fclose(f);
    if (file.oom || read_err) {
        free(file.p);
        return file.oom ? sy_error_oom() : sy_error(SY_ERR_IO, "compile cache %s: read error", path);
    }
    sy_status *st = NULL;
    const sy_config *cfg = &s->env->cfg;
    if (cfg->n_cache_pins) {
        /* the deployment pinned its caches: the whole file must be one of them,
         * checked before a byte of it is parsed */
        char digest[SHA256_DIGEST_STRING_LENGTH];
        SHA2_CTX pc;
        SHA256Init(&pc);
        SHA256Update(&pc, file.p, file.len);
        SHA256End(&pc, digest);
        bool pinned = false;
        for (uint32_t i = 0; i < cfg->n_cache_pins && !pinned; i++)
            pinned = !strcasecmp(digest, cfg->cache_pins[i]);
        if (!pinned) {
            st = sy_error(SY_ERR_INVALID_MODEL,
                          "compile cache %s: sha256 pin mismatch: the file is %s, [switchyard] "
                          "compiled_cache_sha256 of %s allows %s%s",
                          path, digest, cfg->origin, cfg->cache_pins[0], cfg->n_cache_pins > 1 ? " (and others)" : "");
            goto done;
        }
    }
    reader r = {file.p, file.len, 0, false};
    const uint8_t *magic = get_bytes(&r, 8);
    uint32_t format = get_u32(&r);
    const uint8_t *digest = get_bytes(&r, SHA256_DIGEST_LENGTH);
    if (r.bad || memcmp(magic, CACHE_MAGIC, 8)) {
        st = sy_error(SY_ERR_INVALID_MODEL, "compile cache %s: not a Switchyard compile cache", path);
        goto done;
    }
    if (format != CACHE_FORMAT) {
        st = sy_error(SY_ERR_ABI_MISMATCH, "compile cache %s: format %u, this build reads format %u", path, format,
                      CACHE_FORMAT);
        goto done;
    }
    uint8_t actual[SHA256_DIGEST_LENGTH];
    SHA2_CTX ctx;
    SHA256Init(&ctx);
    SHA256Update(&ctx, file.p + r.at, file.len - r.at);
    SHA256Final(actual, &ctx);
    if (memcmp(actual, digest, sizeof actual)) {
        st = sy_error(SY_ERR_INVALID_MODEL, "compile cache %s: checksum mismatch (the file is corrupt or was modified)",
                      path);
        goto done;
    }
    uint32_t fp_len = get_u32(&r);
    const uint8_t *fp = get_bytes(&r, fp_len);
    char want[SHA256_DIGEST_STRING_LENGTH];
    model_fingerprint(s, want);
    if (r.bad || fp_len != strlen(want) || memcmp(fp, want, fp_len)) {
        st = sy_error(SY_ERR_INVALID_MODEL, "compile cache %s was made for another model (or other input shapes) than %s",
                      path, s->model->ir->path);
        goto done;
    }
    uint32_t n = get_u32(&r);
    for (uint32_t e = 0; e < n && !st && !r.bad; e++) {
        uint32_t len = get_u32(&r);
        const uint8_t *prov = get_bytes(&r, len);
        uint32_t clen = get_u32(&r);
        const uint8_t *compat = get_bytes(&r, clen);
        uint32_t nlen = get_u32(&r);
        const uint8_t *names = get_bytes(&r, nlen);
        uint64_t size = get_u64(&r);
        const uint8_t *blob = get_bytes(&r, size);
        if (r.bad)
            break;
        sy_part_rt *match = NULL;
        for (uint32_t q = 0; q < s->n_parts && !match; q++) {
            sy_part_rt *p = &s->parts[q];
            const char *pname = p->provider->def.name;
            if (strlen(pname) != len || memcmp(pname, prov, len))
                continue;
            char *mine = partition_nodes(s, p);
            if (mine && strlen(mine) == nlen && !memcmp(mine, names, nlen))
                match = p;
            free(mine);
        }
        if (match && match->compiled) {
            st = sy_error(SY_ERR_INVALID_MODEL,
                          "compile cache %s: entry %u (provider '%.*s') repeats the partition of an earlier entry",
                          path, e, (int)len, prov);
            break;
        }
        if (!match) {
            st = sy_error(SY_ERR_INVALID_MODEL,
                          "compile cache %s: entry %u (provider '%.*s') matches no partition of this session "
                          "(made with another configuration?)",
                          path, e, (int)len, prov);
            break;
        }
        char *have = partition_compat(s, match);
        if (!have) {
            st = sy_error_oom();
            break;
        }
        if (strlen(have) != clen || memcmp(have, compat, clen)) {
            st = sy_error(SY_ERR_ABI_MISMATCH,
                          "compile cache %s: partition for provider '%s' was compiled for \"%.*s\"; this provider is "
                          "\"%s\"",
                          path, match->provider->def.name, (int)clen, compat, have);
            free(have);
            break;
        }
        free(have);
        if (!match->provider->def.deserialize || !match->provider->def.run_compiled) {
            st = sy_error(SY_ERR_UNSUPPORTED, "compile cache %s: provider '%s' cannot load compiled partitions", path,
                          match->provider->def.name);
            break;
        }
        sy_partition desc = {sizeof desc,           match->views,   match->n_nodes, match->inputs, match->n_inputs,
                             (const sy_tensor *const *)match->outputs, match->n_outputs};
        st = match->provider->def.deserialize(match->provider->state, &desc, blob, (size_t)size, &match->compiled);
        if (st) {
            st = sy_error_wrap(st, "compile cache %s: provider '%s' refused its partition", path,
                               match->provider->def.name);
            break;
        }
        match->from_cache = true;
    }
    if (!st && (r.bad || r.at != r.len))
        st = sy_error(SY_ERR_INVALID_MODEL, "compile cache %s: truncated or malformed entry table", path);
done:
    free(file.p);
    return st;
}

SY_EXPORT size_t sy_session_partition_count(const sy_session *s) { return s ? s->n_parts : 0; }

SY_EXPORT bool sy_session_partition_info(const sy_session *s, size_t index, const char **provider,
                                         uint32_t *n_nodes, bool *compiled, bool *from_cache)
{
    if (!s || index >= s->n_parts)
        return false;
    const sy_part_rt *p = &s->parts[index];
    if (provider)
        *provider = p->provider->def.name;
    if (n_nodes)
        *n_nodes = p->n_nodes;
    if (compiled)
        *compiled = p->compiled != NULL;
    if (from_cache)
        *from_cache = p->from_cache;
    return true;
}
