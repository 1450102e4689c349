/*
 * Control flow and value kinds under hostile and plain input (issue 20):
 *
 *   nesting        If inside If 70 deep is refused at load (the import's
 *                  depth limit); 8 deep runs, each level reading the top
 *                  graph's input through the outer scope
 *   missing_outer  a branch reading a name no graph defines: refused at load,
 *                  naming the name
 *   loop_limit     a Loop with trip count INT64_MAX, and one with no trip
 *                  count and a condition that stays true, stop at
 *                  max_loop_iterations with BUDGET; a Loop of 5 gives the
 *                  hand-worked carried value and scan output
 *   if_cond        a float condition is refused with TYPE at run
 *   sequences      a host feeds a sequence, reads the sequence and length
 *                  SequenceInsert/SequenceLength make (hand-worked values);
 *                  a plugin op given a sequence is refused naming the input
 *   scan_axes      Scan along axis 1, input reversed, outputs stacked on axis
 *                  1 forward and reversed (hand-worked running sums)
 *   sequence_ops   SplitToSequence, SequenceErase/At/Length and
 *                  ConcatFromSequence (with new_axis), which no node test
 *                  feeds directly, on hand-worked values
 */
#include "pt_common.h"

#include <stdint.h>

#define PT_BOOL ONNX__TENSOR_PROTO__DATA_TYPE__BOOL

/* a value of type sequence(tensor(elem)) */
static Onnx__ValueInfoProto *seq_info(pt_model *m, const char *name, int elem)
{
    Onnx__TypeProto__Tensor *tt = pt_alloc(m, sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = elem;
    Onnx__TypeProto *et = pt_alloc(m, sizeof *et);
    onnx__type_proto__init(et);
    et->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    et->tensor_type = tt;
    Onnx__TypeProto__Sequence *sq = pt_alloc(m, sizeof *sq);
    onnx__type_proto__sequence__init(sq);
    sq->elem_type = et;
    Onnx__TypeProto *tp = pt_alloc(m, sizeof *tp);
    onnx__type_proto__init(tp);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
    tp->sequence_type = sq;
    Onnx__ValueInfoProto *vi = pt_alloc(m, sizeof *vi);
    onnx__value_info_proto__init(vi);
    vi->name = pt_strdup(m, name);
    vi->type = tp;
    return vi;
}

/* If nested `depth` deep: each level's then_branch is the next level, its
 * else_branch a leaf (both branches the same graph would make the file
 * 2^depth graphs); the innermost and the leaves read the top graph's x.
 * bodies[] gets the models to free (2 per level). */
/* a session of m (*mo and *s NULL on failure) */
static sy_status *open_session(sy_env *env, pt_model *m, sy_model **mo, sy_session **s)
{
    *mo = NULL;
    *s = NULL;
    sy_status *st = pt_load_status(env, m, "subgraphs.onnx", mo);
    if (!st)
        st = sy_session_create(env, *mo, NULL, s);
    return st;
}

static void release_all(sy_session *s, sy_model *mo, pt_model *m)
{
    sy_session_release(s);
    sy_model_release(mo);
    pt_model_free(m);
}

/* y [2] = If(c of dtype cond_type) whose two branches are the one graph
 * "branch": z = Identity(reads), the node named id_name; *branch gets it */
static pt_model *if_identity(const char *name, int cond_type, const char *if_name, const char *id_name,
                             const char *reads, pt_model **branch)
{
    int64_t d[1] = {2};
    pt_model *m = pt_model_new(name);
    if (!strcmp(reads, "x"))
        pt_input(m, "x", PT_F32, 1, d);
    pt_input(m, "c", cond_type, 0, NULL);
    pt_node(m, "If", if_name, (const char *[]){"c", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 1, d);
    pt_model *b = *branch = pt_model_new("branch");
    pt_node(b, "Identity", id_name, (const char *[]){reads, NULL}, (const char *[]){"z", NULL});
    pt_output(b, "z", PT_F32, 1, d);
    pt_attr_graph(m, "then_branch", b);
    pt_attr_graph(m, "else_branch", b);
    return m;
}

static pt_model *nested_if(int depth, pt_model **bodies)
{
    int64_t d[1] = {3};
    pt_model *top = pt_model_new("nested");
    pt_input(top, "x", PT_F32, 1, d);
    pt_input(top, "c", PT_BOOL, 0, NULL);
    pt_node(top, "If", "if0", (const char *[]){"c", NULL}, (const char *[]){"y", NULL});
    pt_output(top, "y", PT_F32, 1, d);
    pt_model *parent = top;
    for (int k = 0; k < depth; k++) {
        char name[32], out[32];
        snprintf(name, sizeof name, "level%d", k + 1);
        pt_model *b = pt_model_new(name);
        bodies[k] = b;
        snprintf(out, sizeof out, "y%d", k + 1);
        if (k + 1 < depth) {
            char nn[32];
            snprintf(nn, sizeof nn, "if%d", k + 1);
            pt_node(b, "If", nn, (const char *[]){"c", NULL}, (const char *[]){out, NULL});
        } else {
            pt_node(b, "Identity", "id", (const char *[]){"x", NULL}, (const char *[]){out, NULL});
        }
        pt_output(b, out, PT_F32, 1, d);
        char ln[32], lo[32];
        snprintf(ln, sizeof ln, "leaf%d", k + 1);
        snprintf(lo, sizeof lo, "l%d", k + 1);
        pt_model *leaf = pt_model_new(ln);
        bodies[depth + k] = leaf;
        pt_node(leaf, "Identity", "leaf_id", (const char *[]){"x", NULL}, (const char *[]){lo, NULL});
        pt_output(leaf, lo, PT_F32, 1, d);
        pt_attr_graph(parent, "then_branch", b);
        pt_attr_graph(parent, "else_branch", leaf);
        parent = b;
    }
    return top;
}

static void test_nesting(void)
{
    sy_env *env = pt_env_dir(HOSTILE_PLUGIN_DIR, NULL);
    pt_model *bodies[160] = {0};
    pt_model *m = nested_if(70, bodies);
    sy_model *mo = NULL;
    PT_EXPECT_REFUSED(pt_load_status(env, m, "subgraphs.onnx", &mo), SY_ERR_UNSUPPORTED, "nest deeper than 64");
    sy_model_release(mo);
    mo = NULL;
    pt_model_free(m);
    for (int k = 0; k < 160; k++) {
        pt_model_free(bodies[k]);
        bodies[k] = NULL;
    }
    /* 8 levels: runs, y = x through every level's outer scope */
    m = nested_if(8, bodies);
    sy_session *s = NULL;
    sy_status *st = open_session(env, m, &mo, &s);
    PT_REQUIRE(st == NULL, "8 nested Ifs: %s", pt_msg(st));
    float x[3] = {1.5f, -2.0f, 7.25f};
    uint8_t c = 1;
    sy_tensor tx = pt_tensor_f32(x, 1, (const int64_t[]){3});
    sy_tensor tc = {.struct_size = sizeof tc, .dtype = SY_DT_BOOL, .rank = 0, .data = &c, .nbytes = 1};
    for (int run = 0; run < 2; run++) {
        c = (uint8_t)(run == 0);
        PT_CHECK(!(st = sy_session_set_input(s, "x", &tx, SY_INPUT_COPY)), "set x: %s", pt_msg(st));
        PT_CHECK(!(st = sy_session_set_input(s, "c", &tc, SY_INPUT_COPY)), "set c: %s", pt_msg(st));
        PT_REQUIRE(!(st = sy_session_run(s)), "run: %s", pt_msg(st));
        const sy_tensor *y = NULL;
        PT_REQUIRE(!(st = sy_session_get_output(s, 0, &y)), "output: %s", pt_msg(st));
        PT_CHECK(y->rank == 1 && y->dims[0] == 3 && !memcmp(y->data, x, sizeof x), "y is x after 8 levels");
    }
    PT_CHECK(sy_session_node_subgraph_count(s, 0) == 2, "If has two subgraphs");
    const char *attr = NULL;
    sy_session *sub = sy_session_node_subgraph(s, 0, 1, &attr);
    PT_CHECK(sub && attr && !strcmp(attr, "else_branch") && sy_session_node_count(sub) == 1,
             "subgraph 1 is else_branch with one node");
done:
    release_all(s, mo, m);
    for (int k = 0; k < 160; k++)
        pt_model_free(bodies[k]);
    sy_env_release(env);
}

static void test_missing_outer(void)
{
    sy_env *env = pt_env_dir(HOSTILE_PLUGIN_DIR, NULL);
    pt_model *b = NULL;
    pt_model *m = if_identity("missing", PT_BOOL, "the_if", "reads_nothing", "no_such_value", &b);
    sy_model *mo = NULL;
    PT_EXPECT_REFUSED(pt_load_status(env, m, "subgraphs.onnx", &mo), SY_ERR_INVALID_MODEL, "no_such_value");
    sy_model_release(mo);
    pt_model_free(b);
    pt_model_free(m);
    sy_env_release(env);
}

/* Loop(M, cond, v) with body: cond_out = Identity(cond_in),
 * v_out = Add(v_in, one), scan = Identity(v_out). */
static pt_model *counting_loop(bool with_m, int64_t trip, pt_model **body)
{
    int64_t one_d[1] = {1};
    pt_model *m = pt_model_new("loop");
    m->opset.version = 16;
    pt_input(m, "v0", PT_F32, 1, one_d);
    int64_t mt[1] = {trip};
    uint8_t t = 1;
    if (with_m)
        pt_init_i64(m, "M", 0, NULL, mt);
    pt_init_raw(m, "cond", PT_BOOL, 0, NULL, &t, 1);
    pt_node(m, "Loop", "the_loop", (const char *[]){with_m ? "M" : "", "cond", "v0", NULL},
            (const char *[]){"v", "scan", NULL});
    pt_output(m, "v", PT_F32, 1, one_d);
    pt_output(m, "scan", PT_F32, 2, (int64_t[]){5, 1});
    pt_model *b = pt_model_new("body");
    *body = b;
    pt_input(b, "i", PT_I64, 0, NULL);
    pt_input(b, "c_in", PT_BOOL, 0, NULL);
    pt_input(b, "v_in", PT_F32, 1, one_d);
    float one = 1.0f;
    pt_init_f32(b, "one", 1, one_d, &one);
    pt_node(b, "Identity", "keep", (const char *[]){"c_in", NULL}, (const char *[]){"c_out", NULL});
    pt_node(b, "Add", "inc", (const char *[]){"v_in", "one", NULL}, (const char *[]){"v_out", NULL});
    pt_node(b, "Identity", "emit", (const char *[]){"v_out", NULL}, (const char *[]){"s_out", NULL});
    pt_output(b, "c_out", PT_BOOL, 0, NULL);
    pt_output(b, "v_out", PT_F32, 1, one_d);
    pt_output(b, "s_out", PT_F32, 1, one_d);
    pt_attr_graph(m, "body", b);
    return m;
}

static void test_loop_limit(void)
{
    sy_env *env = pt_env_dir(HOSTILE_PLUGIN_DIR, "max_loop_iterations = 1000\n");
    float v0 = 0.5f;
    sy_tensor tv = pt_tensor_f32(&v0, 1, (const int64_t[]){1});
    for (int variant = 0; variant < 3; variant++) {
        pt_model *body = NULL;
        /* 0: M = INT64_MAX; 1: no M, cond stays true; 2: M = 5 */
        pt_model *m = counting_loop(variant != 1, variant == 2 ? 5 : INT64_MAX, &body);
        sy_model *mo = NULL;
        sy_session *s = NULL;
        sy_status *st = open_session(env, m, &mo, &s);
        PT_CHECK(st == NULL, "loop variant %d: %s", variant, pt_msg(st));
        if (s) {
            PT_CHECK(!(st = sy_session_set_input(s, "v0", &tv, SY_INPUT_COPY)), "set v0: %s", pt_msg(st));
            if (variant < 2) {
                PT_EXPECT_REFUSED(sy_session_run(s), SY_ERR_BUDGET, "Loop ran 1000 iterations", "max_loop_iterations",
                               "the_loop");
            } else {
                st = sy_session_run(s);
                PT_CHECK(st == NULL, "run: %s", pt_msg(st));
                const sy_tensor *v = NULL, *sc = NULL;
                if (!st && !sy_session_get_output(s, 0, &v) && !sy_session_get_output(s, 1, &sc)) {
                    /* 0.5 + 5 * 1; the scan output holds 1.5, 2.5, ... 5.5 */
                    PT_CHECK(v->rank == 1 && ((const float *)v->data)[0] == 5.5f, "v = 5.5");
                    PT_CHECK(sc->rank == 2 && sc->dims[0] == 5 && sc->dims[1] == 1, "scan is [5,1]");
                    for (int k = 0; sc->rank == 2 && sc->dims[0] == 5 && k < 5; k++)
                        PT_CHECK(((const float *)sc->data)[k] == 1.5f + (float)k, "scan[%d] = %g", k,
                                 1.5 + (double)k);
                }
            }
        }
        pt_model_free(body);
        release_all(s, mo, m);
    }
    sy_env_release(env);
}

static void test_if_cond(void)
{
    sy_env *env = pt_env_dir(HOSTILE_PLUGIN_DIR, NULL);
    pt_model *b = NULL;
    pt_model *m = if_identity("ifcond", PT_F32, "float_if", "id", "x", &b);
    sy_model *mo = NULL;
    sy_session *s = NULL;
    sy_status *st = open_session(env, m, &mo, &s);
    PT_REQUIRE(st == NULL, "session: %s", pt_msg(st));
    float x[2] = {1, 2}, c = 1;
    sy_tensor tx = pt_tensor_f32(x, 1, (const int64_t[]){2});
    sy_tensor tc = {.struct_size = sizeof tc, .dtype = SY_DT_FLOAT32, .rank = 0, .data = &c, .nbytes = 4};
    sy_session_set_input(s, "x", &tx, SY_INPUT_COPY);
    sy_session_set_input(s, "c", &tc, SY_INPUT_COPY);
    PT_EXPECT_REFUSED(sy_session_run(s), SY_ERR_TYPE, "float_if", "must be bool");
done:
    pt_model_free(b);
    release_all(s, mo, m);
    sy_env_release(env);
}

static void test_sequences(void)
{
    sy_env *env = pt_env_dir(HOSTILE_PLUGIN_DIR, NULL);
    pt_model *m = pt_model_new("seq");
    m->opset.version = 17;
    m->graph.input = (Onnx__ValueInfoProto **)pt_push(m, (void **)m->graph.input, m->graph.n_input);
    m->graph.input[m->graph.n_input++] = seq_info(m, "s_in", PT_F32);
    pt_input(m, "t", PT_F32, 1, (int64_t[]){3});
    pt_node(m, "SequenceInsert", "ins", (const char *[]){"s_in", "t", NULL}, (const char *[]){"s_out", NULL});
    pt_node(m, "SequenceLength", "len", (const char *[]){"s_out", NULL}, (const char *[]){"n", NULL});
    m->graph.output = (Onnx__ValueInfoProto **)pt_push(m, (void **)m->graph.output, m->graph.n_output);
    m->graph.output[m->graph.n_output++] = seq_info(m, "s_out", PT_F32);
    pt_output(m, "n", PT_I64, 0, NULL);
    sy_model *mo = NULL;
    sy_session *s = NULL;
    sy_status *st = open_session(env, m, &mo, &s);
    PT_REQUIRE(st == NULL, "session: %s", pt_msg(st));
    PT_CHECK(sy_model_input_kind(mo, 0) == SY_VALUE_SEQUENCE && sy_model_input_kind(mo, 1) == SY_VALUE_TENSOR,
             "declared kinds of the inputs");
    float a[2] = {1, 2}, b[1] = {3}, t[3] = {4, 5, 6};
    sy_tensor ta = pt_tensor_f32(a, 1, (const int64_t[]){2});
    sy_tensor tb = pt_tensor_f32(b, 1, (const int64_t[]){1});
    sy_tensor tt = pt_tensor_f32(t, 1, (const int64_t[]){3});
    const sy_tensor *items[2] = {&ta, &tb};
    /* a plain tensor is not a sequence, and a sequence of the wrong dtype is refused */
    PT_EXPECT_REFUSED(sy_session_set_input_by_index(s, 0, &ta, SY_INPUT_COPY), SY_ERR_TYPE, "s_in", "sequence");
    PT_EXPECT_REFUSED(sy_session_set_input_sequence(s, 0, SY_DT_INT64, items, 2), SY_ERR_TYPE, "s_in");
    PT_CHECK(!(st = sy_session_set_input_sequence(s, 0, SY_DT_FLOAT32, items, 2)), "set s_in: %s", pt_msg(st));
    a[0] = 99; /* copied: the session's sequence keeps 1 */
    PT_CHECK(!(st = sy_session_set_input(s, "t", &tt, SY_INPUT_COPY)), "set t: %s", pt_msg(st));
    PT_REQUIRE(!(st = sy_session_run(s)), "run: %s", pt_msg(st));
    PT_CHECK(sy_session_output_kind(s, 0) == SY_VALUE_SEQUENCE, "output 0 is a sequence");
    const sy_tensor *out = NULL, *n = NULL;
    size_t count = 0;
    sy_dtype dt = SY_DT_UNDEFINED;
    PT_EXPECT_REFUSED(sy_session_get_output(s, 0, &out), SY_ERR_TYPE, "s_out", "sequence");
    PT_REQUIRE(!(st = sy_session_get_output_sequence(s, 0, &dt, &out, &count)), "sequence: %s", pt_msg(st));
    PT_CHECK(count == 3 && dt == SY_DT_FLOAT32, "3 float items, got %zu", count);
    if (count == 3) {
        PT_CHECK(out[0].dims[0] == 2 && ((const float *)out[0].data)[0] == 1 && ((const float *)out[0].data)[1] == 2,
                 "item 0 = [1, 2]");
        PT_CHECK(out[1].dims[0] == 1 && ((const float *)out[1].data)[0] == 3, "item 1 = [3]");
        PT_CHECK(out[2].dims[0] == 3 && ((const float *)out[2].data)[2] == 6, "item 2 = [4, 5, 6]");
    }
    PT_REQUIRE(!(st = sy_session_get_output(s, 1, &n)), "n: %s", pt_msg(st));
    PT_CHECK(n->dtype == SY_DT_INT64 && n->rank == 0 && *(const int64_t *)n->data == 3, "length 3");
done:
    release_all(s, mo, m);

    /* a plugin's op given a sequence */
    m = pt_model_new("seq_relu");
    m->opset.version = 17;
    pt_input(m, "t", PT_F32, 1, (int64_t[]){3});
    pt_node(m, "SequenceConstruct", "make", (const char *[]){"t", NULL}, (const char *[]){"sq", NULL});
    pt_node(m, "Relu", "relu_of_a_sequence", (const char *[]){"sq", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 1, (int64_t[]){3});
    st = open_session(env, m, &mo, &s);
    PT_CHECK(st == NULL, "session: %s", pt_msg(st));
    if (s) {
        float t3[3] = {1, -1, 2};
        sy_tensor tt3 = pt_tensor_f32(t3, 1, (const int64_t[]){3});
        sy_session_set_input(s, "t", &tt3, SY_INPUT_COPY);
        PT_EXPECT_REFUSED(sy_session_run(s), SY_ERR_TYPE, "relu_of_a_sequence", "'sq' is a sequence", "takes tensors");
    }
    release_all(s, mo, m);
    sy_env_release(env);
}

/* Scan along axis 1, the input read in reverse, two scan outputs stacked
 * along axis 1 forward and in reverse. x = [[1,2,3],[4,5,6]]: the slices
 * come as [3,6], [2,5], [1,4]; the running sum s is [3,6], [5,11], [6,15]. */
static void test_scan_axes(void)
{
    sy_env *env = pt_env_dir(HOSTILE_PLUGIN_DIR, NULL);
    int64_t d2[1] = {2}, dx[2] = {2, 3};
    pt_model *m = pt_model_new("scan_axes");
    m->opset.version = 16;
    pt_input(m, "s0", PT_F32, 1, d2);
    pt_input(m, "x", PT_F32, 2, dx);
    pt_node(m, "Scan", "scan", (const char *[]){"s0", "x", NULL}, (const char *[]){"s", "fwd", "rev", NULL});
    pt_attr_int(m, "num_scan_inputs", 1);
    pt_attr_ints(m, "scan_input_axes", 1, (const int64_t[]){1});
    pt_attr_ints(m, "scan_input_directions", 1, (const int64_t[]){1});
    pt_attr_ints(m, "scan_output_axes", 2, (const int64_t[]){1, -1});
    pt_attr_ints(m, "scan_output_directions", 2, (const int64_t[]){0, 1});
    pt_output(m, "s", PT_F32, 1, d2);
    pt_output(m, "fwd", PT_F32, 2, dx);
    pt_output(m, "rev", PT_F32, 2, dx);
    pt_model *b = pt_model_new("scan_body");
    pt_input(b, "s_in", PT_F32, 1, d2);
    pt_input(b, "x_in", PT_F32, 1, d2);
    pt_node(b, "Add", "acc", (const char *[]){"s_in", "x_in", NULL}, (const char *[]){"s_out", NULL});
    pt_node(b, "Identity", "e1", (const char *[]){"s_out", NULL}, (const char *[]){"y1", NULL});
    pt_node(b, "Identity", "e2", (const char *[]){"s_out", NULL}, (const char *[]){"y2", NULL});
    pt_output(b, "s_out", PT_F32, 1, d2);
    pt_output(b, "y1", PT_F32, 1, d2);
    pt_output(b, "y2", PT_F32, 1, d2);
    pt_attr_graph(m, "body", b);
    sy_model *mo = NULL;
    sy_session *s = NULL;
    sy_status *st = open_session(env, m, &mo, &s);
    PT_REQUIRE(st == NULL, "session: %s", pt_msg(st));
    float s0[2] = {0, 0}, x[6] = {1, 2, 3, 4, 5, 6};
    sy_tensor ts = pt_tensor_f32(s0, 1, (const int64_t[]){2});
    sy_tensor tx = pt_tensor_f32(x, 2, (const int64_t[]){2, 3});
    sy_session_set_input(s, "s0", &ts, SY_INPUT_COPY);
    sy_session_set_input(s, "x", &tx, SY_INPUT_COPY);
    PT_REQUIRE(!(st = sy_session_run(s)), "run: %s", pt_msg(st));
    static const float want_s[2] = {6, 15}, want_fwd[6] = {3, 5, 6, 6, 11, 15}, want_rev[6] = {6, 5, 3, 15, 11, 6};
    const sy_tensor *y[3] = {NULL, NULL, NULL};
    for (size_t k = 0; k < 3; k++)
        PT_REQUIRE(!(st = sy_session_get_output(s, k, &y[k])), "output %zu: %s", k, pt_msg(st));
    PT_CHECK(y[0]->rank == 1 && !memcmp(y[0]->data, want_s, sizeof want_s), "final state [6, 15]");
    PT_CHECK(y[1]->rank == 2 && y[1]->dims[0] == 2 && y[1]->dims[1] == 3 && !memcmp(y[1]->data, want_fwd, 24),
             "forward scan output [[3,5,6],[6,11,15]]");
    PT_CHECK(y[2]->rank == 2 && y[2]->dims[0] == 2 && y[2]->dims[1] == 3 && !memcmp(y[2]->data, want_rev, 24),
             "reverse scan output [[6,5,3],[15,11,6]]");
done:
    pt_model_free(b);
    release_all(s, mo, m);
    sy_env_release(env);
}

/* The sequence ops no node test feeds directly, on hand-worked values:
 * x = [1..5] split by 2 -> [1,2] [3,4] [5]; erase position 1 -> [1,2] [5]
 * (length 2, concatenated [1,2,5]); the last item of the split is [5];
 * x2 = [[1,2,3],[4,5,6]] split into rows without the axis, stacked on a new
 * axis 1 -> [[1,4],[2,5],[3,6]]. */
static void test_sequence_ops(void)
{
    sy_env *env = pt_env_dir(HOSTILE_PLUGIN_DIR, NULL);
    pt_model *m = pt_model_new("seq_ops");
    m->opset.version = 17;
    pt_input(m, "x", PT_F32, 1, (int64_t[]){5});
    pt_input(m, "x2", PT_F32, 2, (int64_t[]){2, 3});
    int64_t two = 2, one = 1, last = -1;
    pt_init_i64(m, "two", 0, NULL, &two);
    pt_init_i64(m, "one", 0, NULL, &one);
    pt_init_i64(m, "last", 0, NULL, &last);
    pt_node(m, "SplitToSequence", "split", (const char *[]){"x", "two", NULL}, (const char *[]){"parts", NULL});
    pt_node(m, "SequenceErase", "erase", (const char *[]){"parts", "one", NULL}, (const char *[]){"kept", NULL});
    pt_node(m, "SequenceLength", "len", (const char *[]){"kept", NULL}, (const char *[]){"n", NULL});
    pt_node(m, "ConcatFromSequence", "cat", (const char *[]){"kept", NULL}, (const char *[]){"joined", NULL});
    pt_attr_int(m, "axis", 0);
    pt_node(m, "SequenceAt", "at", (const char *[]){"parts", "last", NULL}, (const char *[]){"tail", NULL});
    pt_node(m, "SplitToSequence", "rows", (const char *[]){"x2", NULL}, (const char *[]){"rs", NULL});
    pt_attr_int(m, "keepdims", 0);
    pt_node(m, "ConcatFromSequence", "stack", (const char *[]){"rs", NULL}, (const char *[]){"stacked", NULL});
    pt_attr_int(m, "axis", 1);
    pt_attr_int(m, "new_axis", 1);
    pt_output(m, "n", PT_I64, 0, NULL);
    pt_output(m, "joined", PT_F32, 1, (int64_t[]){3});
    pt_output(m, "tail", PT_F32, 1, (int64_t[]){1});
    pt_output(m, "stacked", PT_F32, 2, (int64_t[]){3, 2});
    sy_model *mo = NULL;
    sy_session *s = NULL;
    sy_status *st = open_session(env, m, &mo, &s);
    PT_REQUIRE(st == NULL, "session: %s", pt_msg(st));
    float x[5] = {1, 2, 3, 4, 5}, x2[6] = {1, 2, 3, 4, 5, 6};
    sy_tensor tx = pt_tensor_f32(x, 1, (const int64_t[]){5});
    sy_tensor tx2 = pt_tensor_f32(x2, 2, (const int64_t[]){2, 3});
    sy_session_set_input(s, "x", &tx, SY_INPUT_COPY);
    sy_session_set_input(s, "x2", &tx2, SY_INPUT_COPY);
    PT_REQUIRE(!(st = sy_session_run(s)), "run: %s", pt_msg(st));
    const sy_tensor *y[4] = {NULL, NULL, NULL, NULL};
    for (size_t k = 0; k < 4; k++)
        PT_REQUIRE(!(st = sy_session_get_output(s, k, &y[k])), "output %zu: %s", k, pt_msg(st));
    static const float joined[3] = {1, 2, 5}, stacked[6] = {1, 4, 2, 5, 3, 6};
    PT_CHECK(y[0]->dtype == SY_DT_INT64 && *(const int64_t *)y[0]->data == 2, "2 items after the erase");
    PT_CHECK(y[1]->rank == 1 && y[1]->dims[0] == 3 && !memcmp(y[1]->data, joined, sizeof joined), "[1, 2, 5]");
    PT_CHECK(y[2]->rank == 1 && y[2]->dims[0] == 1 && ((const float *)y[2]->data)[0] == 5, "the last item is [5]");
    PT_CHECK(y[3]->rank == 2 && y[3]->dims[0] == 3 && y[3]->dims[1] == 2 && !memcmp(y[3]->data, stacked, 24),
             "[[1,4],[2,5],[3,6]]");
done:
    release_all(s, mo, m);
    sy_env_release(env);
}

int main(void)
{
    PT_RUN(test_nesting);
    PT_RUN(test_missing_outer);
    PT_RUN(test_loop_limit);
    PT_RUN(test_if_cond);
    PT_RUN(test_sequences);
    PT_RUN(test_scan_axes);
    PT_RUN(test_sequence_ops);
    return pt_result();
}
