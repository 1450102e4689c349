/*
 * llama2.c-format tokenizer: int32 max_token_length, then per id
 * (f32 score, int32 length, bytes). Encoding is the llama2.c algorithm:
 * optional BOS, a dummy-prefix space, one token per UTF-8 code point (byte
 * fallback <0xXX> = id byte+3 when the code point is not in the vocabulary),
 * then repeatedly merge the adjacent pair whose concatenation is a token
 * with the highest score (leftmost on ties).
 */
#include "llm_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const llm_tok_entry *)a)->str, ((const llm_tok_entry *)b)->str);
}

void llm_tok_free(llm_tokenizer *t)
{
    if (t->pieces)
        for (int32_t i = 0; i < t->vocab; i++)
            free(t->pieces[i]);
    free(t->pieces);
    free(t->lens);
    free(t->scores);
    free(t->sorted);
    free(t->scratch);
    memset(t, 0, sizeof *t);
}

static int32_t rd32(const unsigned char *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

sy_status *llm_tok_load(const char *path, int32_t vocab, llm_tokenizer *t)
{
    memset(t, 0, sizeof *t);
    FILE *f = llm_fopen_regular(path, "rb");
    if (!f)
        return LLM_ERR(errno == ENOENT ? SY_ERR_NOT_FOUND : SY_ERR_IO, "tokenizer '%s': %s", path,
                       errno == EFTYPE_LLM ? "not a regular file" : strerror(errno));
    unsigned char hdr[8];
    sy_status *st = NULL;
    if (fread(hdr, 1, 4, f) != 4) {
        st = LLM_ERR(SY_ERR_INVALID_MODEL, "tokenizer '%s': too short for a llama2.c tokenizer", path);
        goto out;
    }
    t->max_len = rd32(hdr);
    if (t->max_len <= 0 || t->max_len > 4096) {
        st = LLM_ERR(SY_ERR_INVALID_MODEL, "tokenizer '%s': max_token_length %d is not plausible", path, t->max_len);
        goto out;
    }
    t->vocab = vocab;
    t->pieces = calloc((size_t)vocab, sizeof *t->pieces);
    t->lens = calloc((size_t)vocab, sizeof *t->lens);
    t->scores = calloc((size_t)vocab, sizeof *t->scores);
    t->sorted = calloc((size_t)vocab, sizeof *t->sorted);
    t->scratch = malloc((size_t)t->max_len * 2 + 8);
    if (!t->pieces || !t->lens || !t->scores || !t->sorted || !t->scratch) {
        st = LLM_ERR(SY_ERR_OUT_OF_MEMORY, "tokenizer '%s': out of memory", path);
        goto out;
    }
    for (int32_t i = 0; i < vocab; i++) {
        if (fread(hdr, 1, 8, f) != 8) {
            st = LLM_ERR(SY_ERR_INVALID_MODEL, "tokenizer '%s': ends in entry %d of %d", path, i, vocab);
            goto out;
        }
        float sc;
        uint32_t u = (uint32_t)rd32(hdr);
        memcpy(&sc, &u, 4);
        int32_t len = rd32(hdr + 4);
        if (len < 0 || len > t->max_len) {
            st = LLM_ERR(SY_ERR_INVALID_MODEL, "tokenizer '%s': entry %d has length %d (max_token_length %d)", path, i,
                         len, t->max_len);
            goto out;
        }
        t->scores[i] = sc;
        t->lens[i] = (uint32_t)len;
        t->pieces[i] = malloc((size_t)len + 1);
        if (!t->pieces[i]) {
            st = LLM_ERR(SY_ERR_OUT_OF_MEMORY, "tokenizer '%s': out of memory", path);
            goto out;
        }
        if (len && fread(t->pieces[i], 1, (size_t)len, f) != (size_t)len) {
            st = LLM_ERR(SY_ERR_INVALID_MODEL, "tokenizer '%s': ends in entry %d of %d", path, i, vocab);
            goto out;
        }
        t->pieces[i][len] = '\0';
        t->sorted[i].str = t->pieces[i];
        t->sorted[i].id = i;
    }
    if (fgetc(f) != EOF) {
        st = LLM_ERR(SY_ERR_INVALID_MODEL, "tokenizer '%s': has bytes after the %d entries the model's vocab asks for",
                     path, vocab);
        goto out;
    }
    qsort(t->sorted, (size_t)vocab, sizeof *t->sorted, cmp_entry);
out:
    fclose(f);
    if (st)
        llm_tok_free(t);
    return st;
}

static int32_t lookup(const llm_tokenizer *t, const char *s)
{
    llm_tok_entry key = {.str = s};
    const llm_tok_entry *e = bsearch(&key, t->sorted, (size_t)t->vocab, sizeof *t->sorted, cmp_entry);
    return e ? e->id : -1;
}

sy_status *llm_tok_encode(llm_tokenizer *t, const char *text, bool bos, int32_t *ids, size_t *n_out)
{
    size_t n = 0;
    if (bos)
        ids[n++] = t->bos;
    if (text[0]) {
        int32_t sp = lookup(t, " ");
        if (sp < 0)
            return LLM_ERR(SY_ERR_INVALID_MODEL, "tokenizer has no ' ' token for the dummy prefix");
        ids[n++] = sp;
    }
    char *buf = t->scratch;
    size_t bl = 0;
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        /* a new code point starts at a byte that is not 10xxxxxx */
        if ((*c & 0xC0) != 0x80)
            bl = 0;
        buf[bl++] = (char)*c;
        buf[bl] = '\0';
        if ((c[1] & 0xC0) == 0x80 && bl < 4)
            continue; /* the code point continues */
        int32_t id = lookup(t, buf);
        if (id >= 0) {
            ids[n++] = id;
        } else {
            for (size_t i = 0; i < bl; i++) {
                int32_t fb = (int32_t)(unsigned char)buf[i] + 3; /* <0xXX> byte fallback */
                if (fb >= t->vocab)
                    return LLM_ERR(SY_ERR_INVALID_ARGUMENT,
                                   "tokenizer: byte 0x%02x has no token and its byte-fallback id %d is outside the "
                                   "vocabulary of %d (llama2.c vocabularies have the 256 byte tokens at 3..258)",
                                   (unsigned char)buf[i], fb, t->vocab);
                ids[n++] = fb;
            }
        }
        bl = 0;
    }
    /* merge the best-scoring adjacent pair until none is in the vocabulary */
    for (;;) {
        float best = -1e10f;
        int32_t best_id = -1;
        size_t best_i = 0;
        for (size_t i = 0; i + 1 < n; i++) {
            size_t la = t->lens[ids[i]], lb = t->lens[ids[i + 1]];
            if (la + lb > (size_t)t->max_len * 2)
                continue;
            memcpy(buf, t->pieces[ids[i]], la);
            memcpy(buf + la, t->pieces[ids[i + 1]], lb);
            buf[la + lb] = '\0';
            int32_t id = lookup(t, buf);
            if (id >= 0 && t->scores[id] > best) {
                best = t->scores[id];
                best_id = id;
                best_i = i;
            }
        }
        if (best_id < 0)
            break;
        ids[best_i] = best_id;
        memmove(ids + best_i + 1, ids + best_i + 2, (n - best_i - 2) * sizeof *ids);
        n--;
    }
    *n_out = n;
    return NULL;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

void llm_tok_piece(const llm_tokenizer *t, int32_t prev, int32_t tok, const char **p, size_t *len, char byte_buf[2])
{
    *p = "";
    *len = 0;
    if (tok < 0 || tok >= t->vocab || tok == t->bos || tok == t->eos0 || tok == 0)
        return;
    const char *s = t->pieces[tok];
    size_t l = t->lens[tok];
    if (prev == t->bos && l && s[0] == ' ') { /* llama2.c: no leading space right after BOS */
        s++;
        l--;
    }
    if (l == 6 && s[0] == '<' && s[1] == '0' && s[2] == 'x' && s[5] == '>' && hexval(s[3]) >= 0 && hexval(s[4]) >= 0) {
        byte_buf[0] = (char)(hexval(s[3]) * 16 + hexval(s[4]));
        byte_buf[1] = '\0';
        *p = byte_buf;
        *len = 1;
        return;
    }
    *p = s;
    *len = l;
}

/* ---- UTF-8 stream detokenizer ---------------------------------------------- */
static size_t seq_len(unsigned char c)
{
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return 2;
    if (c >= 0xE0 && c <= 0xEF)
        return 3;
    if (c >= 0xF0 && c <= 0xF4)
        return 4;
    return 0; /* continuation or invalid lead */
}

static const char REPL[3] = {(char)0xEF, (char)0xBF, (char)0xBD};

/* Emits complete sequences from buf[0..n); returns bytes consumed (the rest
 * is an incomplete sequence). */
static size_t emit(const unsigned char *buf, size_t n, char *out, size_t *o, bool final)
{
    size_t i = 0;
    while (i < n) {
        size_t l = seq_len(buf[i]);
        if (l == 0) {
            memcpy(out + *o, REPL, 3);
            *o += 3;
            i++;
            continue;
        }
        if (i + l > n) {
            /* check that what we have is a valid prefix; otherwise replace */
            bool ok = true;
            for (size_t k = 1; k < n - i; k++)
                ok &= (buf[i + k] & 0xC0) == 0x80;
            if (ok && !final)
                return i;
            memcpy(out + *o, REPL, 3);
            *o += 3;
            i++;
            continue;
        }
        bool ok = true;
        for (size_t k = 1; k < l; k++)
            ok &= (buf[i + k] & 0xC0) == 0x80;
        if (!ok) {
            memcpy(out + *o, REPL, 3);
            *o += 3;
            i++;
            continue;
        }
        memcpy(out + *o, buf + i, l);
        *o += l;
        i += l;
    }
    return i;
}

size_t llm_detok_push(llm_detok *d, const char *bytes, size_t len, char *out)
{
    size_t o = 0;
    /* complete the held sequence first, byte by byte */
    size_t used = 0;
    while (d->n_hold && used < len) {
        d->hold[d->n_hold++] = bytes[used++];
        size_t c = emit((const unsigned char *)d->hold, d->n_hold, out, &o, false);
        memmove(d->hold, d->hold + c, d->n_hold - c);
        d->n_hold -= c;
    }
    size_t c = emit((const unsigned char *)bytes + used, len - used, out, &o, false);
    size_t rest = len - used - c;
    memcpy(d->hold + d->n_hold, bytes + used + c, rest);
    d->n_hold += rest;
    return o;
}

size_t llm_detok_flush(llm_detok *d, char *out)
{
    size_t o = 0;
    emit((const unsigned char *)d->hold, d->n_hold, out, &o, true);
    d->n_hold = 0;
    return o;
}
