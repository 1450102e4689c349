/*
 * The LLM runner: loads a bundle, wires shards, owns the KV cache and drives
 * one session per graph through the host's application API.
 *
 *  - Graph names (file stems) must match ^([A-Za-z]+_)?ar(N)_cl(N)_(N)_of_(N)$;
 *    AR, CL and shard sets come from them only.
 *  - One buffer per tensor name across every graph, sized for the largest
 *    variant; sessions read them in place (SY_INPUT_BORROW, bound once).
 *  - KV: past_key_L_in [H_kv,1,hd,kv_len] (keys transposed) and
 *    past_value_L_in [H_kv,1,kv_len,hd] with kv_len = CL - AR. After a run the
 *    n valid new rows of *_out are copied (strided) to column n_past.
 *  - Switching to a variant with another kv_len (CL promotion, prefill <->
 *    decode) restrides the buffers in place with memmove: backward when
 *    growing, forward when shrinking; the tail is filled with zero.
 *  - Additive mask [AR, CL]: past columns < n_past and causal in-chunk
 *    columns are 0, the rest (and padded rows) -1e9. RoPE cos/sin per row from
 *    position n_past + i (padded rows: position 0).
 */
#include "llm_internal.h"
#include "switchyard/sy_sdk.h"


#include <dirent.h>
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_VARIANTS 8
#define MASK_NEG -1e9f
#define STATE_MAGIC "SYLLMST1"

typedef struct graph_rt {
    char *name;
    int ar_i, cl_i, shard; /* shard 0-based */
    int ar, cl, kv;
    struct sy_model *model;
    struct sy_session *sess;
    size_t main_in;       /* index of input_ids / hidden input */
    size_t main_out;      /* index of logits / hidden output */
    size_t *kout, *vout;  /* per owned layer: output indices */
} graph_rt;

typedef struct shard_rt {
    int l0, l1; /* owned layers [l0, l1) */
    bool lm_head_only;
    bool has_logits;
    bool seen;
    char in_name[64], out_name[64];
} shard_rt;

struct sy_llm_runner {
    struct sy_env *env;
    const sy_app_api *app;
    char *dir;
    /* derived */
    int n_ar, n_cl, n_shards;
    int ar[MAX_VARIANTS], cl[MAX_VARIANTS];
    int n_layers, n_kv, hd, hidden, vocab, n_heads;
    graph_rt *graphs; /* index: (ar_i * n_cl + cl_i) * n_shards + shard; name NULL when absent */
    shard_rt *shards;
    /* config */
    int32_t bos, eos[4], n_eos, pad;
    float rope_theta;
    /* shared buffers */
    int32_t *ids;
    float *cos, *sin, *mask;
    float **kbuf, **vbuf; /* per layer */
    size_t kv_cap;        /* floats per layer buffer */
    float *rope_cos, *rope_sin; /* [max_pos, hd/2] tables */
    int max_pos;
    /* state */
    int n_past;
    int kv_stride; /* current kv_len layout of the buffers; 0 = none yet */
    int32_t pending;
    int32_t last_fed; /* last token evaluated (-1: none) */
    bool have_logits;
    float *logits;
    int active_cl;
    llm_tokenizer tok;
    llm_sampler smp;
    /* last result */
    int32_t *out_ids;
    size_t n_out, cap_out;
    char *text;
    size_t text_len, text_cap;
    /* stats */
    sy_llm_stats st;
    uint64_t restrides;
    uint64_t kernel_ns;
    int threads;
    bool profiling;
};

static inline uint64_t now_ns(void) { return llm_host->now_ns(); }

static graph_rt *G(sy_llm_runner *r, int ar_i, int cl_i, int shard)
{
    return &r->graphs[((size_t)ar_i * (size_t)r->n_cl + (size_t)cl_i) * (size_t)r->n_shards + (size_t)shard];
}

/* ---- bundle.ini ([llm] section), parsed by inih ------------------------- */
typedef struct kv_pair {
    char key[64];
    char val[256];
} kv_pair;

typedef struct ini_ctx {
    kv_pair *kv;
    int cap, n;
    bool too_long;
} ini_ctx;

static int ini_entry(void *user, const char *section, const char *name, const char *value)
{
    ini_ctx *c = user;
    if (strcmp(section, "llm"))
        return 1; /* other sections belong to other readers */
    size_t kl = strlen(name), vl = strlen(value);
    if (c->n == c->cap || kl >= sizeof c->kv->key || vl >= sizeof c->kv->val) {
        c->too_long = true;
        return 0;
    }
    memcpy(c->kv[c->n].key, name, kl + 1);
    memcpy(c->kv[c->n].val, value, vl + 1);
    c->n++;
    return 1;
}

static sy_status *read_ini(const char *path, kv_pair *kv, int cap, int *n)
{
    FILE *f = llm_fopen_regular(path, "r");
    if (!f)
        return LLM_ERR(errno == ENOENT ? SY_ERR_NOT_FOUND : SY_ERR_IO, "bundle config '%s': %s", path,
                       errno == EFTYPE_LLM ? "not a regular file" : strerror(errno));
    ini_ctx c = {kv, cap, 0, false};
    int rc = ini_parse_file(f, ini_entry, &c);
    fclose(f);
    *n = c.n;
    if (c.too_long)
        return LLM_ERR(SY_ERR_INVALID_CONFIG, "bundle config '%s' line %d: entry too long or too many entries", path, rc);
    if (rc)
        return LLM_ERR(SY_ERR_INVALID_CONFIG, "bundle config '%s' line %d: expected '[section]' or 'key = value'", path,
                       rc);
    return NULL;
}

static const char *ini_get(const kv_pair *kv, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(kv[i].key, key))
            return kv[i].val;
    return NULL;
}

static sy_status *ini_int(const char *path, const kv_pair *kv, int n, const char *key, int32_t def, int32_t *out)
{
    const char *v = ini_get(kv, n, key);
    if (!v) {
        *out = def;
        return NULL;
    }
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < -(1L << 30) || x > (1L << 30))
        return LLM_ERR(SY_ERR_INVALID_CONFIG, "bundle config '%s': %s = '%s' is not an integer", path, key, v);
    *out = (int32_t)x;
    return NULL;
}

/* ---- graph discovery -------------------------------------------------------- */
typedef struct found_graph {
    char *stem;
    int ar, cl, i, n;
} found_graph;

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

static int add_unique(int *set, int *n, int v)
{
    for (int i = 0; i < *n; i++)
        if (set[i] == v)
            return 0;
    if (*n == MAX_VARIANTS)
        return -1;
    set[(*n)++] = v;
    return 0;
}

static int index_of(const int *set, int n, int v)
{
    for (int i = 0; i < n; i++)
        if (set[i] == v)
            return i;
    return -1;
}

static sy_status *parse_num(const char *name, const char *s, regmatch_t m, int *out)
{
    long v = 0;
    for (regoff_t k = m.rm_so; k < m.rm_eo; k++) {
        v = v * 10 + (s[k] - '0');
        if (v > (1L << 24))
            return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': a number in the name is too large", name);
    }
    *out = (int)v;
    return NULL;
}

static sy_status *discover(sy_llm_runner *r, found_graph **out, int *n_out)
{
    DIR *d = opendir(r->dir);
    if (!d)
        return LLM_ERR(errno == ENOENT ? SY_ERR_NOT_FOUND : SY_ERR_IO, "bundle '%s': %s", r->dir, strerror(errno));
    regex_t re;
    if (regcomp(&re, "^([A-Za-z]+_)?ar([0-9]+)_cl([0-9]+)_([0-9]+)_of_([0-9]+)$", REG_EXTENDED)) {
        closedir(d);
        return LLM_ERR(SY_ERR_INTERNAL, "llm: cannot compile the graph-name regex");
    }
    found_graph *fg = NULL;
    int n = 0, cap = 0;
    sy_status *st = NULL;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l < 6 || strcmp(de->d_name + l - 5, ".onnx"))
            continue;
        char stem[256];
        if (l - 5 >= sizeof stem) {
            st = LLM_ERR(SY_ERR_INVALID_MODEL, "bundle '%s': graph file name '%s' is too long", r->dir, de->d_name);
            break;
        }
        memcpy(stem, de->d_name, l - 5);
        stem[l - 5] = '\0';
        regmatch_t m[6];
        if (regexec(&re, stem, 6, m, 0)) {
            st = LLM_ERR(SY_ERR_INVALID_MODEL,
                         "bundle '%s': graph '%s' (file %s) does not match the graph-name pattern "
                         "[prefix_]arN_clN_i_of_N",
                         r->dir, stem, de->d_name);
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            found_graph *g = realloc(fg, (size_t)cap * sizeof *g);
            if (!g) {
                st = LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory");
                break;
            }
            fg = g;
        }
        found_graph *g = &fg[n];
        memset(g, 0, sizeof *g);
        if ((st = parse_num(stem, stem, m[2], &g->ar)) || (st = parse_num(stem, stem, m[3], &g->cl)) ||
            (st = parse_num(stem, stem, m[4], &g->i)) || (st = parse_num(stem, stem, m[5], &g->n)))
            break;
        g->stem = strdup(stem);
        if (!g->stem) {
            st = LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory");
            break;
        }
        n++;
        if (g->ar < 1 || g->cl <= g->ar || g->n < 1 || g->i < 1 || g->i > g->n) {
            st = LLM_ERR(SY_ERR_INVALID_MODEL,
                         "bundle '%s': graph '%s': needs AR >= 1, CL > AR and shard 1 <= i <= N (AR %d, CL %d, %d of %d)",
                         r->dir, stem, g->ar, g->cl, g->i, g->n);
            break;
        }
    }
    closedir(d);
    regfree(&re);
    if (!st && n == 0)
        st = LLM_ERR(SY_ERR_NOT_FOUND, "bundle '%s': no graph (*.onnx) found", r->dir);
    if (st) {
        for (int i = 0; i < n; i++)
            free(fg[i].stem);
        free(fg);
        return st;
    }
    *out = fg;
    *n_out = n;
    return NULL;
}

/* ---- tensor-name helpers ---------------------------------------------------- */
static bool is_special(const char *nm)
{
    if (!strcmp(nm, "attention_mask") || !strcmp(nm, "position_ids") || !strcmp(nm, "position_ids_cos") ||
        !strcmp(nm, "position_ids_sin"))
        return true;
    size_t l = strlen(nm);
    bool kv = strstr(nm, "key") || strstr(nm, "value");
    return kv && ((l > 3 && !strcmp(nm + l - 3, "_in")) || (l > 4 && !strcmp(nm + l - 4, "_out")));
}

/* past_(key|value)_L_(in|out) -> layer, is_key, is_in; false if not one */
static bool parse_kv_name(const char *nm, int *layer, bool *is_key, bool *is_in)
{
    const char *p;
    if (!strncmp(nm, "past_key_", 9)) {
        *is_key = true;
        p = nm + 9;
    } else if (!strncmp(nm, "past_value_", 11)) {
        *is_key = false;
        p = nm + 11;
    } else {
        return false;
    }
    if (*p < '0' || *p > '9')
        return false;
    long v = 0;
    while (*p >= '0' && *p <= '9' && v < 100000)
        v = v * 10 + (*p++ - '0');
    if (!strcmp(p, "_in"))
        *is_in = true;
    else if (!strcmp(p, "_out"))
        *is_in = false;
    else
        return false;
    *layer = (int)v;
    return true;
}

static bool dims_eq(const sy_value_info *vi, int rank, const int64_t *d)
{
    if (vi->rank != rank)
        return false;
    for (int i = 0; i < rank; i++)
        if (vi->dims[i] != d[i])
            return false;
    return true;
}

static void fmt_dims(const sy_value_info *vi, char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < vi->rank && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? "," : "", (long long)vi->dims[i]);
    if (o < len)
        snprintf(buf + o, len - o, "]");
}

/* First pass over one graph: its layers (to derive the shard's layer range)
 * and the KV geometry. */
static sy_status *scan_graph(sy_llm_runner *r, graph_rt *g, int *l0, int *l1)
{
    const sy_app_api *A = r->app;
    size_t ni = A->model_input_count(g->model);
    *l0 = 1 << 30;
    *l1 = -1;
    for (size_t i = 0; i < ni; i++) {
        sy_value_info vi = {.struct_size = sizeof vi};
        A->model_input_info(g->model, i, &vi);
        int layer;
        bool is_key, is_in;
        if (!parse_kv_name(vi.name, &layer, &is_key, &is_in) || !is_in)
            continue;
        if (vi.dtype != SY_DT_FLOAT32)
            return LLM_ERR(SY_ERR_UNSUPPORTED, "graph '%s': KV input '%s' has dtype %s; this runner supports float32 KV",
                           g->name, vi.name, sy_dt_name_full(vi.dtype));
        if (vi.rank != 4)
            return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': KV input '%s' must have rank 4 ([H,1,hd,kv] / [H,1,kv,hd])",
                           g->name, vi.name);
        int H = (int)vi.dims[0], hd = (int)(is_key ? vi.dims[2] : vi.dims[3]);
        if (r->n_kv == 0) {
            r->n_kv = H;
            r->hd = hd;
        }
        *l0 = layer < *l0 ? layer : *l0;
        *l1 = layer + 1 > *l1 ? layer + 1 : *l1;
    }
    if (*l1 < 0)
        *l0 = *l1 = -1;
    return NULL;
}

/* Validate one graph's I/O against the declared contract, record indices. */
static sy_status *check_graph(sy_llm_runner *r, graph_rt *g, const shard_rt *sh)
{
    const sy_app_api *A = r->app;
    char buf[96];
    int64_t AR = g->ar, CL = g->cl, KV = g->kv, H = r->n_kv, hd = r->hd;
    size_t ni = A->model_input_count(g->model), no = A->model_output_count(g->model);
    int n_layers_own = sh->l1 - sh->l0;
    g->kout = calloc((size_t)(n_layers_own > 0 ? n_layers_own : 1), sizeof *g->kout);
    g->vout = calloc((size_t)(n_layers_own > 0 ? n_layers_own : 1), sizeof *g->vout);
    if (!g->kout || !g->vout)
        return LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory");
    bool main_in = false;
    int seen_k = 0, seen_v = 0;
    for (size_t i = 0; i < ni; i++) {
        sy_value_info vi = {.struct_size = sizeof vi};
        A->model_input_info(g->model, i, &vi);
        fmt_dims(&vi, buf, sizeof buf);
        int layer;
        bool is_key, is_in;
        if (parse_kv_name(vi.name, &layer, &is_key, &is_in)) {
            int64_t want[4] = {H, 1, is_key ? hd : KV, is_key ? KV : hd};
            if (!is_in || layer < sh->l0 || layer >= sh->l1 || !dims_eq(&vi, 4, want))
                return LLM_ERR(SY_ERR_INVALID_MODEL,
                               "graph '%s': input '%s' %s does not match the contract (%s [%lld,1,%lld,%lld], layers %d..%d "
                               "of shard %d)",
                               g->name, vi.name, buf, is_key ? "keys transposed" : "values",
                               (long long)want[0], (long long)want[2], (long long)want[3], sh->l0, sh->l1 - 1, g->shard + 1);
            is_key ? seen_k++ : seen_v++;
        } else if (!strcmp(vi.name, "attention_mask")) {
            int64_t want[4] = {1, 1, AR, CL};
            if (vi.dtype != SY_DT_FLOAT32 || !dims_eq(&vi, 4, want))
                return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': attention_mask %s must be float32 [1,1,%lld,%lld]",
                               g->name, buf, (long long)AR, (long long)CL);
        } else if (!strcmp(vi.name, "position_ids_cos") || !strcmp(vi.name, "position_ids_sin")) {
            int64_t want[4] = {1, 1, AR, hd / 2};
            if (vi.dtype != SY_DT_FLOAT32 || !dims_eq(&vi, 4, want))
                return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': %s %s must be float32 [1,1,%lld,%lld]", g->name,
                               vi.name, buf, (long long)AR, (long long)(hd / 2));
        } else if (!main_in) {
            main_in = true;
            g->main_in = i;
            if (g->shard == 0) {
                int64_t want[2] = {1, AR};
                if (strcmp(vi.name, "input_ids") || vi.dtype != SY_DT_INT32 || !dims_eq(&vi, 2, want))
                    return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': the first shard's input must be input_ids int32 [1,%lld], found '%s' %s",
                                   g->name, (long long)AR, vi.name, buf);
            } else if (strcmp(vi.name, r->shards[g->shard - 1].out_name)) {
                return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': input '%s' is not the previous shard's output '%s'",
                               g->name, vi.name, r->shards[g->shard - 1].out_name);
            } else if (vi.dtype != SY_DT_FLOAT32 || vi.rank != 3 || vi.dims[0] != 1 || vi.dims[1] != AR) {
                return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': hidden input '%s' %s must be float32 [1,%lld,hidden]",
                               g->name, vi.name, buf, (long long)AR);
            }
        } else {
            return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': unexpected input '%s'", g->name, vi.name);
        }
    }
    if (!main_in)
        return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': has no input_ids / hidden-state input", g->name);
    if (seen_k != n_layers_own || seen_v != n_layers_own)
        return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': expected past_key/past_value inputs for layers %d..%d", g->name,
                       sh->l0, sh->l1 - 1);
    bool main_out = false;
    seen_k = seen_v = 0;
    for (size_t i = 0; i < no; i++) {
        sy_value_info vi = {.struct_size = sizeof vi};
        A->model_output_info(g->model, i, &vi);
        fmt_dims(&vi, buf, sizeof buf);
        int layer;
        bool is_key, is_in;
        if (parse_kv_name(vi.name, &layer, &is_key, &is_in)) {
            int64_t want[4] = {H, 1, is_key ? hd : AR, is_key ? AR : hd};
            if (is_in || layer < sh->l0 || layer >= sh->l1 || vi.dtype != SY_DT_FLOAT32 || !dims_eq(&vi, 4, want))
                return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': output '%s' %s does not match the contract [%lld,1,%lld,%lld]",
                               g->name, vi.name, buf, (long long)want[0], (long long)want[2], (long long)want[3]);
            if (is_key) {
                g->kout[layer - sh->l0] = i;
                seen_k++;
            } else {
                g->vout[layer - sh->l0] = i;
                seen_v++;
            }
        } else if (!main_out && !is_special(vi.name)) {
            main_out = true;
            g->main_out = i;
            bool last = g->shard == r->n_shards - 1;
            if (last) {
                if (strcmp(vi.name, "logits") || vi.dtype != SY_DT_FLOAT32 || vi.rank != 3 || vi.dims[0] != 1 ||
                    vi.dims[1] != AR || vi.dims[2] < 1)
                    return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': the last shard's output must be logits float32 [1,%lld,vocab], found '%s' %s",
                                   g->name, (long long)AR, vi.name, buf);
                if (r->vocab == 0)
                    r->vocab = (int)vi.dims[2];
                else if (r->vocab != vi.dims[2])
                    return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': logits vocab %lld differs from %d", g->name,
                                   (long long)vi.dims[2], r->vocab);
            } else {
                if (vi.dtype != SY_DT_FLOAT32 || vi.rank != 3 || vi.dims[1] != AR)
                    return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': hidden output '%s' %s must be float32 [1,%lld,hidden]",
                                   g->name, vi.name, buf, (long long)AR);
                shard_rt *s = &r->shards[g->shard];
                if (!s->out_name[0])
                    snprintf(s->out_name, sizeof s->out_name, "%s", vi.name);
                else if (strcmp(s->out_name, vi.name))
                    return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': hidden output '%s' differs from '%s' of the other variants",
                                   g->name, vi.name, s->out_name);
                if (r->hidden == 0)
                    r->hidden = (int)vi.dims[2];
            }
        } else {
            return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': unexpected output '%s'", g->name, vi.name);
        }
    }
    if (!main_out)
        return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': has no logits / hidden-state output", g->name);
    if (seen_k != n_layers_own || seen_v != n_layers_own)
        return LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': expected past_key/past_value outputs for layers %d..%d",
                       g->name, sh->l0, sh->l1 - 1);
    return NULL;
}

/* Bind every input except the hidden edge, once, to the shared buffers. */
static sy_status *bind_graph(sy_llm_runner *r, graph_rt *g)
{
    const sy_app_api *A = r->app;
    size_t ni = A->model_input_count(g->model);
    for (size_t i = 0; i < ni; i++) {
        sy_value_info vi = {.struct_size = sizeof vi};
        A->model_input_info(g->model, i, &vi);
        sy_tensor t = {.struct_size = sizeof t, .dtype = vi.dtype, .rank = vi.rank};
        memcpy(t.dims, vi.dims, sizeof t.dims);
        int64_t numel = 1;
        for (int d = 0; d < vi.rank; d++)
            numel *= vi.dims[d];
        int layer;
        bool is_key, is_in;
        if (parse_kv_name(vi.name, &layer, &is_key, &is_in))
            t.data = is_key ? r->kbuf[layer] : r->vbuf[layer];
        else if (!strcmp(vi.name, "attention_mask"))
            t.data = r->mask;
        else if (!strcmp(vi.name, "position_ids_cos"))
            t.data = r->cos;
        else if (!strcmp(vi.name, "position_ids_sin"))
            t.data = r->sin;
        else if (!strcmp(vi.name, "input_ids"))
            t.data = r->ids;
        else
            continue; /* hidden edge: bound before each run */
        t.nbytes = (size_t)numel * (vi.dtype == SY_DT_INT32 || vi.dtype == SY_DT_FLOAT32 ? 4 : 0);
        sy_status *st = A->session_set_input_by_index(g->sess, i, &t, SY_INPUT_BORROW);
        if (st)
            return st;
    }
    return NULL;
}

/* ---- options ------------------------------------------------------------------ */
static sy_status *parse_options(sy_llm_runner *r, const char *opts)
{
    r->threads = 0;
    if (!opts)
        return NULL;
    const char *p = opts;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ';')
            p++;
        if (!*p)
            break;
        const char *e = p;
        while (*e && *e != '\n' && *e != ';')
            e++;
        char line[256];
        size_t l = (size_t)(e - p) < sizeof line - 1 ? (size_t)(e - p) : sizeof line - 1;
        memcpy(line, p, l);
        line[l] = '\0';
        p = e;
        if (line[0] == '#')
            continue;
        char *eq = strchr(line, '=');
        if (!eq)
            return LLM_ERR(SY_ERR_INVALID_CONFIG, "llm options: '%s' is not key=value", line);
        *eq = '\0';
        char *k = line, *v = eq + 1;
        while (*v == ' ')
            v++;
        size_t kl = strlen(k);
        while (kl && k[kl - 1] == ' ')
            k[--kl] = '\0';
        size_t vl = strlen(v);
        while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\r'))
            v[--vl] = '\0';
        char *end;
        long x = strtol(v, &end, 10);
        if (!strcmp(k, "threads")) {
            if (end == v || *end || x < 0 || x > 256)
                return LLM_ERR(SY_ERR_INVALID_CONFIG, "llm options: threads = '%s' must be 0..256", v);
            r->threads = (int)x;
        } else if (!strcmp(k, "profiling")) {
            if (end == v || *end || (x != 0 && x != 1))
                return LLM_ERR(SY_ERR_INVALID_CONFIG, "llm options: profiling = '%s' must be 0 or 1", v);
            r->profiling = x == 1;
        } else {
            return LLM_ERR(SY_ERR_INVALID_CONFIG, "llm options: unknown key '%s' (known: threads, profiling)", k);
        }
    }
    return NULL;
}

/* ---- creation ----------------------------------------------------------------- */
void llm_runner_release(sy_llm_runner *r);

static sy_status *alloc_buffers(sy_llm_runner *r)
{
    int maxar = r->ar[r->n_ar - 1], maxcl = r->cl[r->n_cl - 1];
    int maxkv = 0;
    for (int a = 0; a < r->n_ar; a++)
        for (int c = 0; c < r->n_cl; c++)
            if (r->cl[c] > r->ar[a] && r->cl[c] - r->ar[a] > maxkv)
                maxkv = r->cl[c] - r->ar[a];
    r->kv_cap = (size_t)r->n_kv * (size_t)r->hd * (size_t)maxkv;
    size_t half = (size_t)r->hd / 2;
    r->ids = calloc((size_t)maxar, sizeof *r->ids);
    r->cos = calloc((size_t)maxar * half, sizeof *r->cos);
    r->sin = calloc((size_t)maxar * half, sizeof *r->sin);
    r->mask = calloc((size_t)maxar * (size_t)maxcl, sizeof *r->mask);
    r->kbuf = calloc((size_t)r->n_layers, sizeof *r->kbuf);
    r->vbuf = calloc((size_t)r->n_layers, sizeof *r->vbuf);
    r->max_pos = maxcl;
    r->rope_cos = malloc((size_t)maxcl * half * sizeof(float));
    r->rope_sin = malloc((size_t)maxcl * half * sizeof(float));
    r->logits = calloc((size_t)r->vocab, sizeof *r->logits);
    if (!r->ids || !r->cos || !r->sin || !r->mask || !r->kbuf || !r->vbuf || !r->rope_cos || !r->rope_sin || !r->logits)
        return LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory");
    for (int l = 0; l < r->n_layers; l++) {
        r->kbuf[l] = llm_host->alloc(r->kv_cap * sizeof(float), 64);
        r->vbuf[l] = llm_host->alloc(r->kv_cap * sizeof(float), 64);
        if (!r->kbuf[l] || !r->vbuf[l])
            return LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory for the KV cache");
        memset(r->kbuf[l], 0, r->kv_cap * sizeof(float));
        memset(r->vbuf[l], 0, r->kv_cap * sizeof(float));
    }
    /* RoPE tables, the llama2.c way: freq = 1 / theta^(2j/hd), angle = pos * freq in float */
    for (int pos = 0; pos < maxcl; pos++)
        for (size_t j = 0; j < half; j++) {
            float freq = 1.0f / powf(r->rope_theta, (float)(2 * j) / (float)r->hd);
            float val = (float)pos * freq;
            r->rope_cos[(size_t)pos * half + j] = cosf(val);
            r->rope_sin[(size_t)pos * half + j] = sinf(val);
        }
    return NULL;
}

sy_status *llm_runner_create(struct sy_env *env, const char *bundle_dir, const char *options, sy_llm_runner **out)
{
    if (!env || !bundle_dir || !out)
        return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm runner_create: env, bundle_dir and out are required");
    if (!llm_host->app || llm_host->app->struct_size < sizeof(sy_app_api))
        return LLM_ERR(SY_ERR_UNSUPPORTED, "llm: the host offers no (or an older) application API table");
    sy_llm_runner *r = calloc(1, sizeof *r);
    if (!r)
        return LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory");
    r->env = env;
    r->app = llm_host->app;
    r->pending = -1;
    r->last_fed = -1;
    r->dir = strdup(bundle_dir);
    found_graph *fg = NULL;
    int nfg = 0;
    sy_status *st = NULL;
    char path[4352];
    if (!r->dir) {
        st = LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory");
        goto fail;
    }
    if ((st = parse_options(r, options)))
        goto fail;
    /* bundle.ini */
    kv_pair kv[32];
    int nkv = 0;
    snprintf(path, sizeof path, "%s/bundle.ini", r->dir);
    if ((st = read_ini(path, kv, 32, &nkv)))
        goto fail;
    const char *fmt = ini_get(kv, nkv, "format");
    if (!fmt || strcmp(fmt, "switchyard-llm-bundle")) {
        st = LLM_ERR(SY_ERR_INVALID_MODEL, "bundle config '%s': [llm] format must be 'switchyard-llm-bundle'", path);
        goto fail;
    }
    int32_t ver, nvocab, pair_ok = 1;
    if ((st = ini_int(path, kv, nkv, "version", 1, &ver)) || (st = ini_int(path, kv, nkv, "bos_token", 1, &r->bos)) ||
        (st = ini_int(path, kv, nkv, "n_vocab", 0, &nvocab)))
        goto fail;
    if (ver != 1) {
        st = LLM_ERR(SY_ERR_UNSUPPORTED, "bundle config '%s': version %d (this runner reads version 1)", path, ver);
        goto fail;
    }
    {
        const char *e = ini_get(kv, nkv, "eos_token");
        r->n_eos = 0;
        const char *p = e ? e : "2";
        while (*p && r->n_eos < 4) {
            char *end;
            long x = strtol(p, &end, 10);
            if (end == p) {
                st = LLM_ERR(SY_ERR_INVALID_CONFIG, "bundle config '%s': eos_token = '%s' must be ids separated by ','", path, e);
                goto fail;
            }
            r->eos[r->n_eos++] = (int32_t)x;
            p = end;
            while (*p == ',' || *p == ' ')
                p++;
        }
        if ((st = ini_int(path, kv, nkv, "pad_token", r->eos[0], &r->pad)))
            goto fail;
        const char *th = ini_get(kv, nkv, "rope_theta");
        r->rope_theta = th ? strtof(th, NULL) : 10000.0f;
        if (!(r->rope_theta > 1.0f)) {
            st = LLM_ERR(SY_ERR_INVALID_CONFIG, "bundle config '%s': rope_theta = '%s' must be > 1", path, th);
            goto fail;
        }
        const char *pr = ini_get(kv, nkv, "rope_pairing");
        pair_ok = !pr || !strcmp(pr, "interleaved");
        if (!pair_ok) {
            st = LLM_ERR(SY_ERR_UNSUPPORTED, "bundle config '%s': rope_pairing '%s' (this runner feeds cos/sin for interleaved pairs; the graph applies them)",
                         path, pr);
            goto fail;
        }
    }
    /* graphs */
    if ((st = discover(r, &fg, &nfg)))
        goto fail;
    r->n_shards = fg[0].n;
    for (int i = 0; i < nfg; i++) {
        if (fg[i].n != r->n_shards) {
            st = LLM_ERR(SY_ERR_INVALID_MODEL, "bundle '%s': graph '%s' says %d shards, graph '%s' says %d", r->dir,
                         fg[i].stem, fg[i].n, fg[0].stem, r->n_shards);
            goto fail;
        }
        if (add_unique(r->ar, &r->n_ar, fg[i].ar) || add_unique(r->cl, &r->n_cl, fg[i].cl)) {
            st = LLM_ERR(SY_ERR_UNSUPPORTED, "bundle '%s': more than %d AR or CL variants", r->dir, MAX_VARIANTS);
            goto fail;
        }
    }
    qsort(r->ar, (size_t)r->n_ar, sizeof *r->ar, cmp_int);
    qsort(r->cl, (size_t)r->n_cl, sizeof *r->cl, cmp_int);
    r->graphs = calloc((size_t)(r->n_ar * r->n_cl * r->n_shards), sizeof *r->graphs);
    r->shards = calloc((size_t)r->n_shards, sizeof *r->shards);
    if (!r->graphs || !r->shards) {
        st = LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory");
        goto fail;
    }
    for (int i = 0; i < nfg; i++) {
        graph_rt *g = G(r, index_of(r->ar, r->n_ar, fg[i].ar), index_of(r->cl, r->n_cl, fg[i].cl), fg[i].i - 1);
        if (g->name) {
            st = LLM_ERR(SY_ERR_INVALID_MODEL, "bundle '%s': graphs '%s' and '%s' are the same variant", r->dir, g->name,
                         fg[i].stem);
            goto fail;
        }
        g->name = fg[i].stem;
        fg[i].stem = NULL;
        g->ar_i = index_of(r->ar, r->n_ar, fg[i].ar);
        g->cl_i = index_of(r->cl, r->n_cl, fg[i].cl);
        g->shard = fg[i].i - 1;
        g->ar = fg[i].ar;
        g->cl = fg[i].cl;
        g->kv = g->cl - g->ar;
    }
    /* every (AR, CL > AR) has every shard; the decode AR (smallest) has every CL */
    for (int a = 0; a < r->n_ar; a++)
        for (int c = 0; c < r->n_cl; c++) {
            if (r->cl[c] <= r->ar[a])
                continue;
            for (int s = 0; s < r->n_shards; s++)
                if (!G(r, a, c, s)->name) {
                    st = LLM_ERR(SY_ERR_INVALID_MODEL, "bundle '%s': graph %s_ar%d_cl%d_%d_of_%d is missing (the names give AR {..%d..} and CL {..%d..})",
                                 r->dir, r->ar[a] == 1 ? "token" : "prompt", r->ar[a], r->cl[c], s + 1, r->n_shards,
                                 r->ar[a], r->cl[c]);
                    goto fail;
                }
        }
    /* load every graph; derive layer ranges per shard from the first variant */
    for (int i = 0; i < r->n_ar * r->n_cl * r->n_shards; i++) {
        graph_rt *g = &r->graphs[i];
        if (!g->name)
            continue;
        snprintf(path, sizeof path, "%s/%s.onnx", r->dir, g->name);
        if ((st = r->app->model_load(env, path, &g->model))) {
            sy_status *w = LLM_ERR(llm_host->status_code(st), "graph '%s': %s", g->name, llm_host->status_message(st));
            llm_host->status_free(st);
            st = w;
            goto fail;
        }
        int l0, l1;
        if ((st = scan_graph(r, g, &l0, &l1)))
            goto fail;
        shard_rt *sh = &r->shards[g->shard];
        if (!sh->seen) {
            sh->l0 = l0 < 0 ? 0 : l0;
            sh->l1 = l1 < 0 ? 0 : l1;
            sh->seen = true;
        } else if ((l0 < 0 ? 0 : l0) != sh->l0 || (l1 < 0 ? 0 : l1) != sh->l1) {
            st = LLM_ERR(SY_ERR_INVALID_MODEL, "graph '%s': owns layers %d..%d, other variants of shard %d own %d..%d",
                         g->name, l0, l1 - 1, g->shard + 1, sh->l0, sh->l1 - 1);
            goto fail;
        }
    }
    /* shards hold contiguous layer ranges in order */
    int next = 0;
    for (int s = 0; s < r->n_shards; s++) {
        shard_rt *sh = &r->shards[s];
        sh->has_logits = s == r->n_shards - 1;
        if (sh->l1 == sh->l0) {
            sh->l0 = sh->l1 = next;
            sh->lm_head_only = s > 0 && s == r->n_shards - 1;
            if (!sh->lm_head_only) {
                st = LLM_ERR(SY_ERR_INVALID_MODEL, "bundle '%s': shard %d has no KV layers and is not the LM-head shard",
                             r->dir, s + 1);
                goto fail;
            }
            continue;
        }
        if (sh->l0 != next) {
            st = LLM_ERR(SY_ERR_INVALID_MODEL, "bundle '%s': shard %d owns layers %d..%d; expected to start at layer %d",
                         r->dir, s + 1, sh->l0, sh->l1 - 1, next);
            goto fail;
        }
        next = sh->l1;
    }
    r->n_layers = next;
    if (r->n_kv <= 0 || r->hd <= 0 || r->hd % 2) {
        st = LLM_ERR(SY_ERR_INVALID_MODEL, "bundle '%s': cannot derive KV heads / head_dim from past_key inputs", r->dir);
        goto fail;
    }
    for (int s = 1; s < r->n_shards; s++)
        r->shards[s].in_name[0] = '\0';
    /* the hidden edge names come from check_graph: run shard by shard */
    for (int s = 0; s < r->n_shards; s++)
        for (int a = 0; a < r->n_ar; a++)
            for (int c = 0; c < r->n_cl; c++) {
                graph_rt *g = G(r, a, c, s);
                if (g->name && (st = check_graph(r, g, &r->shards[s])))
                    goto fail;
            }
    if (nvocab && nvocab != r->vocab) {
        st = LLM_ERR(SY_ERR_INVALID_MODEL, "bundle '%s': bundle.ini says n_vocab %d, the logits have %d", r->dir, nvocab,
                     r->vocab);
        goto fail;
    }
    /* tokenizer */
    {
        const char *tk = ini_get(kv, nkv, "tokenizer");
        snprintf(path, sizeof path, "%s/%s", r->dir, tk ? tk : "tokenizer.bin");
        if ((st = llm_tok_load(path, r->vocab, &r->tok)))
            goto fail;
        r->tok.bos = r->bos;
        r->tok.eos0 = r->eos[0];
    }
    /* special ids index the logits, the pieces and the embedding: all must be
     * in the vocabulary, checked now rather than when first used */
    {
        const char *which = NULL;
        int32_t bad = 0;
        if (r->bos < 0 || r->bos >= r->vocab)
            which = "bos_token", bad = r->bos;
        else if (r->pad < 0 || r->pad >= r->vocab)
            which = "pad_token", bad = r->pad;
        for (int i = 0; !which && i < r->n_eos; i++)
            if (r->eos[i] < 0 || r->eos[i] >= r->vocab)
                which = "eos_token", bad = r->eos[i];
        if (which) {
            snprintf(path, sizeof path, "%s/bundle.ini", r->dir);
            st = LLM_ERR(SY_ERR_INVALID_MODEL, "bundle config '%s': %s = %d is outside the vocabulary (0..%d)", path,
                         which, bad, r->vocab - 1);
            goto fail;
        }
    }
    if ((st = llm_sampler_init(&r->smp, r->vocab)) || (st = alloc_buffers(r)))
        goto fail;
    /* sessions: one per graph, inputs bound once to the shared buffers */
    for (int i = 0; i < r->n_ar * r->n_cl * r->n_shards; i++) {
        graph_rt *g = &r->graphs[i];
        if (!g->name)
            continue;
        sy_session_options so = {.struct_size = sizeof so, .threads = r->threads, .strict = -1, .profiling = r->profiling};
        if ((st = r->app->session_create(env, g->model, &so, &g->sess))) {
            sy_status *w = LLM_ERR(llm_host->status_code(st), "graph '%s': %s", g->name, llm_host->status_message(st));
            llm_host->status_free(st);
            st = w;
            goto fail;
        }
        if ((st = bind_graph(r, g)))
            goto fail;
    }
    for (int i = 0; i < nfg; i++)
        free(fg[i].stem);
    free(fg);
    r->active_cl = r->cl[0];
    *out = r;
    return NULL;
fail:
    for (int i = 0; i < nfg; i++)
        free(fg[i].stem);
    free(fg);
    llm_runner_release(r);
    return st;
}

void llm_runner_release(sy_llm_runner *r)
{
    if (!r)
        return;
    if (r->graphs)
        for (int i = 0; i < r->n_ar * r->n_cl * r->n_shards; i++) {
            graph_rt *g = &r->graphs[i];
            if (g->sess)
                r->app->session_release(g->sess);
            if (g->model)
                r->app->model_release(g->model);
            free(g->name);
            free(g->kout);
            free(g->vout);
        }
    free(r->graphs);
    free(r->shards);
    if (r->kbuf)
        for (int l = 0; l < r->n_layers; l++)
            llm_host->free(r->kbuf[l]);
    if (r->vbuf)
        for (int l = 0; l < r->n_layers; l++)
            llm_host->free(r->vbuf[l]);
    free(r->kbuf);
    free(r->vbuf);
    free(r->ids);
    free(r->cos);
    free(r->sin);
    free(r->mask);
    free(r->rope_cos);
    free(r->rope_sin);
    free(r->logits);
    free(r->out_ids);
    free(r->text);
    free(r->dir);
    llm_tok_free(&r->tok);
    llm_sampler_free(&r->smp);
    free(r);
}

/* ---- KV layout ----------------------------------------------------------------- */
/* Restride every KV buffer from the current kv_len to `stride` in place; only
 * the n_past valid rows move. Growing walks backward, shrinking forward. */
static void restride(sy_llm_runner *r, int stride)
{
    int old = r->kv_stride;
    if (old == stride)
        return;
    r->kv_stride = stride;
    if (old == 0 || r->n_past == 0) {
        return; /* nothing valid yet: the zero-filled buffers fit any stride */
    }
    r->restrides++;
    size_t nv = (size_t)r->n_past, os = (size_t)old, ns = (size_t)stride, H = (size_t)r->n_kv, hd = (size_t)r->hd;
    size_t rows = H * hd;
    for (int l = 0; l < r->n_layers; l++) {
        float *k = r->kbuf[l], *v = r->vbuf[l];
        if (ns > os) {
            for (size_t row = rows; row-- > 0;) {
                memmove(k + row * ns, k + row * os, nv * sizeof(float));
                memset(k + row * ns + nv, 0, (ns - nv) * sizeof(float));
            }
            for (size_t h = H; h-- > 0;) {
                memmove(v + h * ns * hd, v + h * os * hd, nv * hd * sizeof(float));
                memset(v + (h * ns + nv) * hd, 0, (ns - nv) * hd * sizeof(float));
            }
        } else {
            for (size_t row = 0; row < rows; row++) {
                memmove(k + row * ns, k + row * os, nv * sizeof(float));
                memset(k + row * ns + nv, 0, (ns - nv) * sizeof(float));
            }
            for (size_t h = 0; h < H; h++) {
                memmove(v + h * ns * hd, v + h * os * hd, nv * hd * sizeof(float));
                memset(v + (h * ns + nv) * hd, 0, (ns - nv) * hd * sizeof(float));
            }
        }
    }
}

/* Capacity: the most tokens the cache can hold (largest CL minus smallest AR). */
static int capacity(const sy_llm_runner *r) { return r->cl[r->n_cl - 1] - r->ar[0]; }

/* Pick (ar_i, cl_i) for n tokens at n_past: the smallest AR >= n (else the
 * largest that fits), and the smallest CL whose kv_len holds n_past + chunk. */
static bool pick_variant(const sy_llm_runner *r, int remaining, int *ar_i, int *cl_i, int *chunk)
{
    int order[MAX_VARIANTS], no = 0;
    for (int a = 0; a < r->n_ar; a++)
        if (r->ar[a] >= remaining)
            order[no++] = a;
    for (int a = r->n_ar - 1; a >= 0; a--)
        if (r->ar[a] < remaining)
            order[no++] = a;
    for (int k = 0; k < no; k++) {
        int a = order[k];
        int n = remaining < r->ar[a] ? remaining : r->ar[a];
        for (int c = 0; c < r->n_cl; c++)
            if (r->cl[c] > r->ar[a] && r->n_past + n <= r->cl[c] - r->ar[a]) {
                *ar_i = a;
                *cl_i = c;
                *chunk = n;
                return true;
            }
    }
    return false;
}

/* One chunk of n tokens through every shard. */
static sy_status *run_chunk(sy_llm_runner *r, const int32_t *toks, int n, int ar_i, int cl_i, bool need_logits)
{
    const sy_app_api *A = r->app;
    int AR = r->ar[ar_i], CL = r->cl[cl_i], KV = CL - AR;
    restride(r, KV);
    r->active_cl = CL;
    size_t half = (size_t)r->hd / 2;
    for (int i = 0; i < AR; i++) {
        r->ids[i] = i < n ? toks[i] : r->pad;
        int pos = i < n ? r->n_past + i : 0;
        memcpy(r->cos + (size_t)i * half, r->rope_cos + (size_t)pos * half, half * sizeof(float));
        memcpy(r->sin + (size_t)i * half, r->rope_sin + (size_t)pos * half, half * sizeof(float));
        float *m = r->mask + (size_t)i * (size_t)CL;
        if (i < n) {
            int np = r->n_past;
            for (int c = 0; c < np; c++)
                m[c] = 0.0f;
            for (int c = np; c < KV; c++)
                m[c] = MASK_NEG;
            for (int c = 0; c < AR; c++)
                m[KV + c] = c <= i ? 0.0f : MASK_NEG;
        } else {
            for (int c = 0; c < CL; c++)
                m[c] = MASK_NEG;
        }
    }
    const sy_tensor *prev = NULL;
    size_t H = (size_t)r->n_kv, hd = (size_t)r->hd, nn = (size_t)n, np = (size_t)r->n_past;
    for (int s = 0; s < r->n_shards; s++) {
        const shard_rt *sh = &r->shards[s];
        if (sh->lm_head_only && !need_logits)
            continue; /* LM head only on the final chunk */
        graph_rt *g = G(r, ar_i, cl_i, s);
        sy_status *st;
        if (s > 0) {
            if (!prev)
                return LLM_ERR(SY_ERR_INTERNAL, "graph '%s': no hidden state from the previous shard", g->name);
            if ((st = A->session_set_input_by_index(g->sess, g->main_in, prev, SY_INPUT_BORROW)))
                return st;
        }
        uint64_t t0 = now_ns();
        st = A->session_run(g->sess);
        r->kernel_ns += now_ns() - t0;
        if (st) {
            sy_status *w = LLM_ERR(llm_host->status_code(st), "graph '%s': %s", g->name, llm_host->status_message(st));
            llm_host->status_free(st);
            return w;
        }
        /* KV write-back: the n valid new rows of *_out to column n_past of *_in */
        for (int l = sh->l0; l < sh->l1; l++) {
            const sy_tensor *ko, *vo;
            if ((st = A->session_get_output(g->sess, g->kout[l - sh->l0], &ko)) ||
                (st = A->session_get_output(g->sess, g->vout[l - sh->l0], &vo)))
                return st;
            const float *ks = ko->data, *vs = vo->data;
            float *kd = r->kbuf[l], *vd = r->vbuf[l];
            for (size_t row = 0; row < H * hd; row++)
                memcpy(kd + row * (size_t)KV + np, ks + row * (size_t)AR, nn * sizeof(float));
            for (size_t h = 0; h < H; h++)
                memcpy(vd + (h * (size_t)KV + np) * hd, vs + h * (size_t)AR * hd, nn * hd * sizeof(float));
        }
        if ((st = A->session_get_output(g->sess, g->main_out, &prev)))
            return st;
    }
    r->n_past += n;
    r->last_fed = toks[n - 1];
    if (need_logits) {
        memcpy(r->logits, (const float *)prev->data + (size_t)(n - 1) * (size_t)r->vocab, (size_t)r->vocab * sizeof(float));
        r->have_logits = true;
    }
    return NULL;
}

/* Evaluate tokens (chunked); logits of the last one kept. */
static sy_status *eval_tokens(sy_llm_runner *r, const int32_t *toks, int n)
{
    if (r->n_past + n > capacity(r))
        return LLM_ERR(SY_ERR_CONTEXT_EXHAUSTED,
                       "bundle '%s': %d tokens do not fit: %d of %d context positions are in use", r->dir, n, r->n_past,
                       capacity(r));
    for (int i = 0; i < n; i++)
        if (toks[i] < 0 || toks[i] >= r->vocab)
            return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm: token id %d is outside the vocabulary (0..%d)", toks[i],
                           r->vocab - 1);
    int done = 0;
    r->have_logits = false;
    while (done < n) {
        int ar_i, cl_i, chunk;
        if (!pick_variant(r, n - done, &ar_i, &cl_i, &chunk))
            return LLM_ERR(SY_ERR_CONTEXT_EXHAUSTED, "bundle '%s': no graph variant holds %d past tokens", r->dir,
                           r->n_past);
        sy_status *st = run_chunk(r, toks + done, chunk, ar_i, cl_i, done + chunk == n);
        if (st)
            return st;
        done += chunk;
    }
    return NULL;
}

/* ---- results ----------------------------------------------------------------- */
static bool push_id(sy_llm_runner *r, int32_t id)
{
    if (r->n_out == r->cap_out) {
        size_t cap = r->cap_out ? r->cap_out * 2 : 256;
        int32_t *g = realloc(r->out_ids, cap * sizeof *g);
        if (!g)
            return false;
        r->out_ids = g;
        r->cap_out = cap;
    }
    r->out_ids[r->n_out++] = id;
    return true;
}

static bool push_text(sy_llm_runner *r, const char *s, size_t n)
{
    if (r->text_len + n + 1 > r->text_cap) {
        size_t cap = r->text_cap ? r->text_cap : 1024;
        while (cap < r->text_len + n + 1)
            cap *= 2;
        char *g = realloc(r->text, cap);
        if (!g)
            return false;
        r->text = g;
        r->text_cap = cap;
    }
    memcpy(r->text + r->text_len, s, n);
    r->text_len += n;
    r->text[r->text_len] = '\0';
    return true;
}

static bool is_eos(const sy_llm_runner *r, int32_t t)
{
    for (int i = 0; i < r->n_eos; i++)
        if (r->eos[i] == t)
            return true;
    return false;
}

/* first occurrence of any stop string in text[from..len) (starting at or after from) */
static long find_stop(const char *text, size_t len, size_t from, const sy_llm_params *p)
{
    long best = -1;
    for (uint32_t k = 0; k < p->n_stop; k++) {
        const char *s = p->stop[k];
        size_t sl = s ? strlen(s) : 0;
        if (!sl || sl > len)
            continue;
        size_t start = from >= sl ? from - sl + 1 : 0;
        for (size_t i = start; i + sl <= len; i++)
            if (!memcmp(text + i, s, sl)) {
                if (best < 0 || (long)i < best)
                    best = (long)i;
                break;
            }
    }
    return best;
}

/* longest suffix of text that is a proper prefix of a stop string */
static size_t stop_holdback(const char *text, size_t len, const sy_llm_params *p)
{
    size_t hold = 0;
    for (uint32_t k = 0; k < p->n_stop; k++) {
        const char *s = p->stop[k];
        size_t sl = s ? strlen(s) : 0;
        for (size_t h = sl ? sl - 1 : 0; h > hold; h--)
            if (h <= len && !memcmp(text + len - h, s, h)) {
                hold = h;
                break;
            }
    }
    return hold;
}

static sy_status *generate_common(sy_llm_runner *r, const int32_t *in, size_t n_in, const sy_llm_params *p_in,
                                  sy_llm_result *out)
{
    sy_llm_params p = sy_llm_params_default();
    if (p_in) {
        if (p_in->struct_size < offsetof(sy_llm_params, user) + sizeof(void *))
            return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm generate: params.struct_size %u is too small", p_in->struct_size);
        p = *p_in;
    }
    r->n_out = 0;
    r->text_len = 0;
    if (!push_text(r, "", 0))
        return LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory");
    uint64_t t0 = now_ns();
    r->kernel_ns = 0;
    memset(&r->st, 0, sizeof r->st);
    if (p.penalty_last_n > LLM_MAX_PENALTY_WINDOW)
        return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm generate: penalty_last_n %d is over the maximum window %d",
                       p.penalty_last_n, LLM_MAX_PENALTY_WINDOW);
    llm_sampler_cfg cfg = {.temperature = p.temperature, .top_k = p.top_k, .top_p = p.top_p, .min_p = p.min_p,
                           .rep_penalty = p.repetition_penalty, .last_n = p.penalty_last_n > 0 ? p.penalty_last_n : 64,
                           .seed = p.seed};
    llm_sampler_configure(&r->smp, &cfg);
    /* what to evaluate: a pending sampled token, then the input */
    size_t nf = n_in + (r->pending >= 0 ? 1 : 0);
    int32_t *feed = malloc((nf ? nf : 1) * sizeof *feed);
    if (!feed)
        return LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory");
    size_t k = 0;
    if (r->pending >= 0)
        feed[k++] = r->pending;
    if (n_in)
        memcpy(feed + k, in, n_in * sizeof *in);
    if (nf == 0 && !r->have_logits) {
        if (r->n_past > 0) {
            free(feed);
            return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm generate: nothing to continue from (no prompt and no pending token)");
        }
        feed[0] = r->bos;
        nf = 1;
    }
    if (nf) {
        sy_status *st = eval_tokens(r, feed, (int)nf);
        free(feed);
        if (st)
            return st;
        r->pending = -1;
    } else {
        free(feed);
    }
    uint64_t t_prefill = now_ns();
    r->st.prefill_tokens = nf;
    r->st.prefill_ns = t_prefill - t0;
    sy_llm_stop_reason stop = SY_LLM_STOP_NONE;
    llm_detok dt = {0};
    size_t emitted = 0; /* text bytes handed to the stream */
    int32_t prev = r->last_fed; /* the BOS rule strips the space of a piece right after BOS */
    uint64_t decode_steps = 0;
    for (;;) {
        int32_t tok = llm_sampler_sample(&r->smp, r->logits);
        if (r->n_out == 0)
            r->st.ttft_ns = now_ns() - t0;
        llm_sampler_accept(&r->smp, tok);
        r->have_logits = false;
        if (!push_id(r, tok))
            return LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory");
        if (is_eos(r, tok)) {
            stop = SY_LLM_STOP_EOS;
            break;
        }
        const char *piece;
        size_t plen;
        char bb[2];
        llm_tok_piece(&r->tok, prev, tok, &piece, &plen, bb);
        prev = tok;
        char tmp[64];
        char *ob = plen * 4 + 16 <= sizeof tmp ? tmp : malloc(plen * 4 + 16);
        if (!ob)
            return LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory");
        size_t ol = llm_detok_push(&dt, piece, plen, ob);
        size_t before = r->text_len;
        bool ok = push_text(r, ob, ol);
        if (ob != tmp)
            free(ob);
        if (!ok)
            return LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory");
        bool user_stop = false;
        if (p.n_stop) {
            long at = find_stop(r->text, r->text_len, before, &p);
            if (at >= 0) {
                r->text_len = (size_t)at;
                r->text[at] = '\0';
                stop = SY_LLM_STOP_STRING;
            }
        }
        size_t safe = r->text_len - (stop == SY_LLM_STOP_STRING || !p.n_stop ? 0 : stop_holdback(r->text, r->text_len, &p));
        if (safe > emitted) {
            if (p.stream && !p.stream(p.user, r->text + emitted, safe - emitted, tok))
                user_stop = true;
            emitted = safe;
        }
        if (stop == SY_LLM_STOP_STRING) {
            r->pending = tok;
            break;
        }
        if (user_stop) {
            stop = SY_LLM_STOP_USER;
            r->pending = tok;
            break;
        }
        if (p.max_tokens > 0 && r->n_out >= (size_t)p.max_tokens) {
            stop = SY_LLM_STOP_LENGTH;
            r->pending = tok;
            break;
        }
        if (r->n_past + 1 > capacity(r)) {
            stop = SY_LLM_STOP_CONTEXT;
            r->pending = tok;
            break;
        }
        sy_status *st = eval_tokens(r, &tok, 1);
        if (st)
            return st;
        decode_steps++;
    }
    /* flush an incomplete UTF-8 tail and held-back text */
    if (stop != SY_LLM_STOP_STRING) {
        char fb[16];
        size_t fl = llm_detok_flush(&dt, fb);
        if (fl && !push_text(r, fb, fl))
            return LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory");
    }
    if (r->text_len > emitted && p.stream)
        p.stream(p.user, r->text + emitted, r->text_len - emitted, r->n_out ? r->out_ids[r->n_out - 1] : -1);
    uint64_t t_end = now_ns();
    r->st.decode_ns = t_end - t_prefill;
    r->st.decode_tokens = decode_steps;
    r->st.prefill_tok_s = r->st.prefill_ns ? (double)r->st.prefill_tokens * 1e9 / (double)r->st.prefill_ns : 0;
    r->st.decode_tok_s = r->st.decode_ns ? (double)decode_steps * 1e9 / (double)r->st.decode_ns : 0;
    r->st.kernel_ns = r->kernel_ns;
    r->st.outside_ns = (t_end - t0) - r->kernel_ns;
    if (out) {
        if (out->struct_size < sizeof *out)
            return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm generate: result.struct_size %u is too small", out->struct_size);
        out->stop = stop;
        out->ids = r->out_ids;
        out->n_ids = r->n_out;
        out->text = r->text;
        out->text_len = r->text_len;
        out->n_prompt = nf;
    }
    return NULL;
}

sy_status *llm_generate(sy_llm_runner *r, const char *prompt, const sy_llm_params *p, sy_llm_result *out)
{
    if (!r)
        return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm generate: runner is NULL");
    const char *text = prompt ? prompt : "";
    size_t cap = strlen(text) + 3;
    int32_t *ids = malloc(cap * sizeof *ids);
    if (!ids)
        return LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory");
    size_t n = 0;
    sy_status *st = NULL;
    if (text[0])
        st = llm_tok_encode(&r->tok, text, r->n_past == 0 && r->pending < 0, ids, &n);
    if (!st)
        st = generate_common(r, ids, n, p, out);
    free(ids);
    return st;
}

sy_status *llm_generate_ids(sy_llm_runner *r, const int32_t *ids, size_t n, const sy_llm_params *p, sy_llm_result *out)
{
    if (!r || (n && !ids))
        return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm generate_ids: runner and ids are required");
    return generate_common(r, ids, n, p, out);
}

sy_status *llm_prefill(sy_llm_runner *r, const int32_t *ids, size_t n)
{
    if (!r || (n && !ids))
        return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm prefill: runner and ids are required");
    size_t nf = n + (r->pending >= 0 ? 1 : 0);
    if (!nf)
        return NULL;
    int32_t *feed = malloc(nf * sizeof *feed);
    if (!feed)
        return LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory");
    size_t k = 0;
    if (r->pending >= 0)
        feed[k++] = r->pending;
    memcpy(feed + k, ids, n * sizeof *ids);
    sy_status *st = eval_tokens(r, feed, (int)nf);
    free(feed);
    if (!st)
        r->pending = -1;
    return st;
}

sy_status *llm_logits(sy_llm_runner *r, const float **out, size_t *n)
{
    if (!r || !out || !n)
        return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm logits: arguments are required");
    if (!r->have_logits)
        return LLM_ERR(SY_ERR_NOT_FOUND, "llm logits: no current logits (evaluate tokens first)");
    *out = r->logits;
    *n = (size_t)r->vocab;
    return NULL;
}

sy_status *llm_encode(sy_llm_runner *r, const char *text, bool add_bos, int32_t *ids, size_t cap, size_t *n)
{
    if (!r || !text || !n)
        return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm encode: arguments are required");
    size_t need = strlen(text) + 3;
    int32_t *tmp = malloc(need * sizeof *tmp);
    if (!tmp)
        return LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm: out of memory");
    size_t m = 0;
    sy_status *st = llm_tok_encode(&r->tok, text, add_bos, tmp, &m);
    if (!st) {
        *n = m;
        if (m > cap || (m && !ids))
            st = LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm encode: %zu ids do not fit in %zu", m, cap);
        else
            memcpy(ids, tmp, m * sizeof *tmp);
    }
    free(tmp);
    return st;
}

sy_status *llm_decode(sy_llm_runner *r, const int32_t *ids, size_t n, char *buf, size_t cap, size_t *len)
{
    if (!r || (n && !ids) || !len)
        return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm decode: arguments are required");
    llm_detok dt = {0};
    size_t o = 0;
    int32_t prev = -1;
    char tmp[64];
    for (size_t i = 0; i <= n; i++) {
        size_t l;
        if (i < n) {
            if (ids[i] < 0 || ids[i] >= r->vocab)
                return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm decode: id %d is outside the vocabulary", ids[i]);
            const char *piece;
            size_t pl;
            char bb[2];
            llm_tok_piece(&r->tok, prev, ids[i], &piece, &pl, bb);
            prev = ids[i];
            if (pl * 4 + 16 > sizeof tmp)
                return LLM_ERR(SY_ERR_INTERNAL, "llm decode: token %d is longer than expected", ids[i]);
            l = llm_detok_push(&dt, piece, pl, tmp);
        } else {
            l = llm_detok_flush(&dt, tmp);
        }
        if (buf && o + l < cap)
            memcpy(buf + o, tmp, l);
        o += l;
    }
    *len = o;
    if (buf && cap)
        buf[o < cap ? o : cap - 1] = '\0';
    if (o + 1 > cap)
        return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm decode: %zu bytes do not fit in %zu", o + 1, cap);
    return NULL;
}

void llm_reset(sy_llm_runner *r)
{
    if (!r)
        return;
    for (int l = 0; l < r->n_layers; l++) {
        memset(r->kbuf[l], 0, r->kv_cap * sizeof(float));
        memset(r->vbuf[l], 0, r->kv_cap * sizeof(float));
    }
    r->n_past = 0;
    r->kv_stride = 0;
    r->pending = -1;
    r->last_fed = -1;
    r->have_logits = false;
    r->smp.configured = false;
    llm_sampler_clear(&r->smp);
    for (int i = 0; i < r->n_ar * r->n_cl * r->n_shards; i++)
        if (r->graphs[i].sess)
            r->app->session_reset(r->graphs[i].sess);
}

/* ---- state ----------------------------------------------------------------------
 * "SYLLMST1", u32 version 1, i32 n_layers, n_kv, hd, vocab, max_cl, n_past,
 * pending, have_logits, last_fed, sampler cfg (f32 temp, i32 top_k, f32 top_p, f32 min_p,
 * f32 penalty, i32 last_n, u64 seed), u8 configured, u64 rng, u32 n_hist,
 * i32 hist[n_hist], [f32 logits[vocab] if have_logits], then per layer the
 * n_past valid KV rows in compact order (keys [H,hd,n_past], values
 * [H,n_past,hd]), then u64 total size. Native-endian floats.
 */
typedef struct wbuf {
    uint8_t *p;
    size_t n, cap;
    bool oom;
} wbuf;

static void put(wbuf *w, const void *d, size_t n)
{
    if (w->oom)
        return;
    if (w->n + n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->n + n)
            cap *= 2;
        uint8_t *g = realloc(w->p, cap);
        if (!g) {
            w->oom = true;
            return;
        }
        w->p = g;
        w->cap = cap;
    }
    memcpy(w->p + w->n, d, n);
    w->n += n;
}

static void put_i32(wbuf *w, int32_t v) { put(w, &v, 4); }

sy_status *llm_save_state_buffer(sy_llm_runner *r, void **buf, size_t *size)
{
    if (!r || !buf || !size)
        return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm save_state: arguments are required");
    wbuf w = {0};
    put(&w, STATE_MAGIC, 8);
    uint32_t ver = 1;
    put(&w, &ver, 4);
    put_i32(&w, r->n_layers);
    put_i32(&w, r->n_kv);
    put_i32(&w, r->hd);
    put_i32(&w, r->vocab);
    put_i32(&w, r->cl[r->n_cl - 1]);
    put_i32(&w, r->n_past);
    put_i32(&w, r->pending);
    put_i32(&w, r->have_logits);
    put_i32(&w, r->last_fed);
    put(&w, &r->smp.cfg.temperature, 4);
    put_i32(&w, r->smp.cfg.top_k);
    put(&w, &r->smp.cfg.top_p, 4);
    put(&w, &r->smp.cfg.min_p, 4);
    put(&w, &r->smp.cfg.rep_penalty, 4);
    put_i32(&w, r->smp.cfg.last_n);
    put(&w, &r->smp.cfg.seed, 8);
    uint8_t conf = r->smp.configured;
    put(&w, &conf, 1);
    put(&w, &r->smp.rng, 8);
    uint32_t nh = (uint32_t)r->smp.n_hist;
    put(&w, &nh, 4);
    if (nh)
        put(&w, r->smp.hist, nh * sizeof(int32_t));
    if (r->have_logits)
        put(&w, r->logits, (size_t)r->vocab * sizeof(float));
    size_t H = (size_t)r->n_kv, hd = (size_t)r->hd, np = (size_t)r->n_past, S = (size_t)r->kv_stride;
    for (int l = 0; l < r->n_layers && np; l++) {
        for (size_t row = 0; row < H * hd; row++)
            put(&w, r->kbuf[l] + row * S, np * sizeof(float));
        for (size_t h = 0; h < H; h++)
            put(&w, r->vbuf[l] + h * S * hd, np * hd * sizeof(float));
    }
    uint64_t total = (uint64_t)w.n + 8;
    put(&w, &total, 8);
    if (w.oom) {
        free(w.p);
        return LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm save_state: out of memory");
    }
    *buf = w.p;
    *size = w.n;
    return NULL;
}

typedef struct rbuf {
    const uint8_t *p;
    size_t n, o;
} rbuf;

static bool get(rbuf *b, void *d, size_t n)
{
    if (b->o + n > b->n)
        return false;
    memcpy(d, b->p + b->o, n);
    b->o += n;
    return true;
}

sy_status *llm_load_state_buffer_named(sy_llm_runner *r, const void *buf, size_t size, const char *what)
{
    if (!r || !buf)
        return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm load_state: arguments are required");
    rbuf b = {.p = buf, .n = size};
    char magic[8];
    uint32_t ver;
    int32_t hdr[9];
    if (!get(&b, magic, 8) || memcmp(magic, STATE_MAGIC, 8) || !get(&b, &ver, 4) || ver != 1)
        return LLM_ERR(SY_ERR_INVALID_MODEL, "llm state %s: not a version-1 Switchyard LLM state", what);
    if (!get(&b, hdr, sizeof hdr))
        return LLM_ERR(SY_ERR_INVALID_MODEL, "llm state %s: truncated header", what);
    if (hdr[0] != r->n_layers || hdr[1] != r->n_kv || hdr[2] != r->hd || hdr[3] != r->vocab ||
        hdr[4] != r->cl[r->n_cl - 1])
        return LLM_ERR(SY_ERR_INVALID_MODEL,
                       "llm state %s: layout (%d layers, %d KV heads, head_dim %d, vocab %d, max CL %d) differs from the bundle's (%d, %d, %d, %d, %d)",
                       what, hdr[0], hdr[1], hdr[2], hdr[3], hdr[4], r->n_layers, r->n_kv, r->hd, r->vocab,
                       r->cl[r->n_cl - 1]);
    int32_t n_past = hdr[5], pending = hdr[6], have_logits = hdr[7], last_fed = hdr[8];
    if (n_past < 0 || n_past > capacity(r) || pending < -1 || pending >= r->vocab || (have_logits != 0 && have_logits != 1))
        return LLM_ERR(SY_ERR_INVALID_MODEL, "llm state %s: n_past %d / pending %d out of range", what, n_past, pending);
    llm_sampler_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    uint8_t conf;
    uint64_t rng;
    uint32_t nh;
    if (!get(&b, &cfg.temperature, 4) || !get(&b, &cfg.top_k, 4) || !get(&b, &cfg.top_p, 4) || !get(&b, &cfg.min_p, 4) ||
        !get(&b, &cfg.rep_penalty, 4) || !get(&b, &cfg.last_n, 4) || !get(&b, &cfg.seed, 8) || !get(&b, &conf, 1) ||
        !get(&b, &rng, 8) || !get(&b, &nh, 4) || nh > 1u << 20)
        return LLM_ERR(SY_ERR_INVALID_MODEL, "llm state %s: truncated sampler state", what);
    /* the window is reserved when the first id is accepted */
    if (cfg.last_n < 0 || cfg.last_n > LLM_MAX_PENALTY_WINDOW || nh > (uint32_t)(cfg.last_n > 0 ? cfg.last_n : 64))
        return LLM_ERR(SY_ERR_INVALID_MODEL, "llm state %s: penalty window last_n %d (history %u) outside 0..%d", what,
                       cfg.last_n, nh, LLM_MAX_PENALTY_WINDOW);
    size_t H = (size_t)r->n_kv, hd = (size_t)r->hd, np = (size_t)n_past;
    size_t need = nh * 4 + (have_logits ? (size_t)r->vocab * 4 : 0) + (size_t)r->n_layers * 2 * H * hd * np * 4 + 8;
    if (size - b.o != need)
        return LLM_ERR(SY_ERR_INVALID_MODEL, "llm state %s: %zu bytes follow the header, %zu expected", what, size - b.o,
                       need);
    /* validated: apply */
    llm_reset(r);
    r->smp.cfg = cfg;
    r->smp.configured = conf != 0;
    r->smp.rng = rng;
    r->smp.n_hist = 0;
    for (uint32_t i = 0; i < nh; i++) {
        int32_t id;
        get(&b, &id, 4);
        if (id >= 0 && id < r->vocab) /* an id outside the vocabulary has no logit to penalise */
            llm_sampler_accept(&r->smp, id);
    }
    if (have_logits)
        get(&b, r->logits, (size_t)r->vocab * 4);
    r->have_logits = have_logits != 0;
    r->pending = pending;
    r->last_fed = last_fed >= -1 && last_fed < r->vocab ? last_fed : -1;
    if (np) {
        /* pick the layout of the decode variant that holds n_past */
        int stride = r->cl[r->n_cl - 1] - r->ar[0];
        for (int c = 0; c < r->n_cl; c++)
            if (r->cl[c] > r->ar[0] && n_past <= r->cl[c] - r->ar[0]) {
                stride = r->cl[c] - r->ar[0];
                break;
            }
        r->kv_stride = stride;
        size_t S = (size_t)stride;
        for (int l = 0; l < r->n_layers; l++) {
            for (size_t row = 0; row < H * hd; row++)
                get(&b, r->kbuf[l] + row * S, np * 4);
            for (size_t h = 0; h < H; h++)
                get(&b, r->vbuf[l] + h * S * hd, np * hd * 4);
        }
    }
    r->n_past = n_past;
    return NULL;
}

sy_status *llm_load_state_buffer(sy_llm_runner *r, const void *buf, size_t size)
{
    return llm_load_state_buffer_named(r, buf, size, "buffer");
}

sy_status *llm_save_state(sy_llm_runner *r, const char *path)
{
    if (!path)
        return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm save_state: path is required");
    void *buf;
    size_t size;
    sy_status *st = llm_save_state_buffer(r, &buf, &size);
    if (st)
        return st;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        free(buf);
        return LLM_ERR(SY_ERR_IO, "llm state '%s': %s", tmp, strerror(errno));
    }
    bool ok = fwrite(buf, 1, size, f) == size;
    ok = fclose(f) == 0 && ok;
    free(buf);
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return LLM_ERR(SY_ERR_IO, "llm state '%s': cannot write: %s", path, strerror(e));
    }
    return NULL;
}

sy_status *llm_load_state(sy_llm_runner *r, const char *path)
{
    if (!r || !path)
        return LLM_ERR(SY_ERR_INVALID_ARGUMENT, "llm load_state: arguments are required");
    FILE *f = llm_fopen_regular(path, "rb");
    if (!f)
        return LLM_ERR(errno == ENOENT ? SY_ERR_NOT_FOUND : SY_ERR_IO, "llm state '%s': %s", path,
                       errno == EFTYPE_LLM ? "not a regular file" : strerror(errno));
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (sz < 0) {
        fclose(f);
        return LLM_ERR(SY_ERR_IO, "llm state '%s': cannot size the file", path);
    }
    /* the largest state this bundle can save: header and sampler (< 4 KiB),
     * the penalty window, the logits and a full KV cache */
    uint64_t most = 4096 + (uint64_t)LLM_MAX_PENALTY_WINDOW * 4 + (uint64_t)r->vocab * 4 +
                    (uint64_t)r->n_layers * 2 * (uint64_t)r->n_kv * (uint64_t)r->hd * (uint64_t)capacity(r) * 4;
    if ((uint64_t)sz > most) {
        fclose(f);
        return LLM_ERR(SY_ERR_INVALID_MODEL, "llm state '%s': %ld bytes; a state of this bundle has at most %llu",
                       path, sz, (unsigned long long)most);
    }
    void *buf = malloc((size_t)sz + 1);
    if (!buf) {
        fclose(f);
        return LLM_ERR(SY_ERR_OUT_OF_MEMORY, "llm state '%s': out of memory", path);
    }
    bool ok = fread(buf, 1, (size_t)sz, f) == (size_t)sz;
    fclose(f);
    char what[4200];
    snprintf(what, sizeof what, "'%s'", path);
    sy_status *st = ok ? llm_load_state_buffer_named(r, buf, (size_t)sz, what)
                       : LLM_ERR(SY_ERR_IO, "llm state '%s': short read", path);
    free(buf);
    return st;
}

bool llm_stats(const sy_llm_runner *r, sy_llm_stats *out)
{
    if (!r || !out || out->struct_size < sizeof *out)
        return false;
    sy_llm_stats s = r->st;
    s.struct_size = sizeof s;
    s.n_past = r->n_past;
    s.active_cl = r->active_cl;
    s.restrides = r->restrides;
    s.kv_bytes_in_use = (size_t)r->n_past * (size_t)r->n_layers * 2 * (size_t)r->n_kv * (size_t)r->hd * sizeof(float);
    s.kv_bytes_reserved = (size_t)r->n_layers * 2 * r->kv_cap * sizeof(float);
    *out = s;
    return true;
}

bool llm_info(const sy_llm_runner *r, sy_llm_info *out)
{
    if (!r || !out || out->struct_size < sizeof *out)
        return false;
    sy_llm_info s = {.struct_size = sizeof s};
    s.n_layers = r->n_layers;
    s.n_kv_heads = r->n_kv;
    s.head_dim = r->hd;
    s.hidden = r->hidden;
    s.n_heads = r->hidden && r->hd ? r->hidden / r->hd : 0;
    s.vocab = r->vocab;
    s.n_shards = r->n_shards;
    s.n_ar = r->n_ar;
    s.n_cl = r->n_cl;
    memcpy(s.ar, r->ar, sizeof s.ar);
    memcpy(s.cl, r->cl, sizeof s.cl);
    s.bos = r->bos;
    s.n_eos = r->n_eos;
    memcpy(s.eos, r->eos, sizeof s.eos);
    for (int i = 0; i < r->n_ar * r->n_cl * r->n_shards; i++)
        s.n_graphs += r->graphs[i].name != NULL;
    *out = s;
    return true;
}
