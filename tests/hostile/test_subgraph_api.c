/*
 * The subgraph host API (ABI 1.4: host->node_subgraph, subgraph_run), through
 * the test plugin test_subgraph (test.subgraph RunGraph: Y = its graph
 * attribute run on X):
 *
 *   runs        body y = x * 2 gives hand-worked values on two runs, and on a
 *               third with a new input shape (the body re-planned); the
 *               node's subgraph session is the same object throughout
 *   optional    an absent attribute asked with SY_SUBGRAPH_OPTIONAL is no
 *               error (the kernel gets NULL and copies X)
 *   refusals    each an error code with a message naming the node and the
 *               attribute: a missing attribute (INVALID_MODEL), a string
 *               attribute asked as a graph (TYPE), a body with two inputs
 *               and one with two outputs where the kernel takes one
 *               (INVALID_MODEL, with both counts), a body input declared
 *               int64 where the kernel binds float (TYPE, at prepare), a
 *               body whose output turns out int64 where the kernel reads
 *               float (TYPE, at run)
 *   flex        FlexAttention (ops_nn) with the later spec's scalar-contract
 *               score_mod, mask_mod and prob_mod gives hand-worked values;
 *               it refuses a graph of neither form (by its input count),
 *               a prob_mod declared double for float scores and a mask_mod
 *               declared float for bool, naming the node and the attribute

 */
#include "pt_common.h"

#include <math.h>
#include <stdint.h>

#define PT_F64 ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE

static sy_env *env_make(void)
{
    return pt_env_dir(HOSTILE_PLUGIN_DIR, "plugins = " SUBGRAPH_TEST_PLUGIN_DIR "/libsy_test_subgraph.so\n");
}

static const int64_t D23[2] = {2, 3};

/* dim 0 of a value info becomes the symbolic "N" (a batch the host sets) */
static void dim0_symbolic(pt_model *m, Onnx__ValueInfoProto *vi)
{
    Onnx__TensorShapeProto__Dimension *d = vi->type->tensor_type->shape->dim[0];
    d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
    d->dim_param = pt_strdup(m, "N");
}

/* X [2,3] float -> RunGraph 'rg' (ask = `ask`, body = `body` when given) -> Y */
static pt_model *top_model(const char *ask, pt_model *body, int64_t n_in, int64_t n_out, int64_t optional)
{
    pt_model *m = pt_model_new("subgraph_api");
    pt_opset(m, "test.subgraph", 1);
    pt_input(m, "X", PT_F32, 2, D23);
    pt_node(m, "RunGraph", "rg", (const char *[]){"X", NULL}, (const char *[]){"Y", NULL});
    pt_domain(m, "test.subgraph");
    pt_attr_string(m, "ask", ask);
    pt_attr_int(m, "n_in", n_in);
    pt_attr_int(m, "n_out", n_out);
    pt_attr_int(m, "in_dtype", SY_DT_FLOAT32);
    pt_attr_int(m, "out_dtype", SY_DT_FLOAT32);
    pt_attr_int(m, "optional", optional);
    if (body)
        pt_attr_graph(m, "body", body);
    pt_output(m, "Y", PT_F32, 2, D23);
    dim0_symbolic(m, m->graph.input[0]);
    dim0_symbolic(m, m->graph.output[0]);
    return m;
}

/* body: y = x * 2 (x undeclared in shape: any [2,3] or other) */
static pt_model *body_double(void)
{
    pt_model *b = pt_model_new("doubler");
    pt_input(b, "x", PT_F32, 2, D23);
    const float two = 2.0f;
    pt_init_f32(b, "two", 0, NULL, &two);
    pt_node(b, "Mul", "mul", (const char *[]){"x", "two", NULL}, (const char *[]){"y", NULL});
    pt_output(b, "y", PT_F32, 2, D23);
    return b;
}

/* Load m, make a session, feed X (rows x 3) and run: the first failure */
static sy_status *load_run(sy_env *env, const pt_model *m, int64_t rows, const float *x, sy_model **mo,
                           sy_session **s)
{
    sy_status *st = pt_load_status(env, m, "subgraph_api.onnx", mo);
    if (!st)
        st = sy_session_create(env, *mo, NULL, s);
    if (st)
        return st;
    int64_t d[2] = {rows, 3};
    sy_tensor tx = pt_tensor_f32((float *)x, 2, d);
    st = sy_session_set_input(*s, "X", &tx, SY_INPUT_COPY);
    return st ? st : sy_session_run(*s);
}

static void test_runs(void)
{
    sy_env *env = env_make();
    pt_model *b = body_double(), *m = top_model("body", b, 1, 1, 0);
    sy_model *mo = NULL;
    sy_session *s = NULL;
    float x[12] = {1, -2, 3.5f, 0, 0.25f, -7, 10, 11, -12, 13, 14, 15};
    sy_status *st = load_run(env, m, 2, x, &mo, &s);
    PT_REQUIRE(st == NULL, "y = 2x: %s", pt_msg(st));
    PT_CHECK(sy_session_node_subgraph_count(s, 0) == 1, "RunGraph has one subgraph");
    const char *attr = NULL;
    sy_session *sub = sy_session_node_subgraph(s, 0, 0, &attr);
    PT_CHECK(sub && attr && !strcmp(attr, "body"), "its subgraph is 'body'");
    for (int run = 0; run < 3; run++) {
        int64_t rows = run < 2 ? 2 : 4; /* run 2: a new shape, the body is planned again */
        if (run) {
            for (int i = 0; i < 12; i++)
                x[i] += 1.0f;
            int64_t d[2] = {rows, 3};
            sy_tensor tx = pt_tensor_f32(x, 2, d);
            PT_CHECK(!(st = sy_session_set_input(s, "X", &tx, SY_INPUT_COPY)), "set X: %s", pt_msg(st));
            PT_REQUIRE(!(st = sy_session_run(s)), "run %d: %s", run, pt_msg(st));
        }
        const sy_tensor *y = NULL;
        PT_REQUIRE(!(st = sy_session_get_output(s, 0, &y)), "output: %s", pt_msg(st));
        PT_CHECK(y->rank == 2 && y->dims[0] == rows && y->dims[1] == 3, "run %d: Y is [%lld, 3]", run,
                 (long long)rows);
        const float *yv = y->data;
        for (int64_t i = 0; i < rows * 3 && y->dims[0] == rows; i++)
            PT_CHECK(yv[i] == 2.0f * x[i], "run %d: y[%lld] = %g, 2x = %g", run, (long long)i, yv[i], 2.0 * x[i]);
        PT_CHECK(sy_session_node_subgraph(s, 0, 0, NULL) == sub, "run %d: the same subgraph session", run);
    }
done:
    sy_session_release(s);
    sy_model_release(mo);
    pt_model_free(m);
    pt_model_free(b);
    sy_env_release(env);
}

static void test_optional(void)
{
    sy_env *env = env_make();
    pt_model *m = top_model("absent_graph", NULL, 1, 1, 1);
    sy_model *mo = NULL;
    sy_session *s = NULL;
    const float x[6] = {1, 2, 3, 4, 5, 6};
    sy_status *st = load_run(env, m, 2, x, &mo, &s);
    PT_REQUIRE(st == NULL, "an optional absent graph: %s", pt_msg(st));
    const sy_tensor *y = NULL;
    PT_REQUIRE(!(st = sy_session_get_output(s, 0, &y)), "output: %s", pt_msg(st));
    PT_CHECK(!memcmp(y->data, x, sizeof x), "Y = X without the graph");
done:
    sy_session_release(s);
    sy_model_release(mo);
    pt_model_free(m);
    sy_env_release(env);
}

static void refused(pt_model *m, sy_status_code code, const char *n1, const char *n2, const char *n3)
{
    sy_env *env = env_make();
    sy_model *mo = NULL;
    sy_session *s = NULL;
    const float x[6] = {1, 2, 3, 4, 5, 6};
    PT_EXPECT_REFUSED(load_run(env, m, 2, x, &mo, &s), code, "node 'rg'", n1, n2, n3);
    sy_session_release(s);
    sy_model_release(mo);
    sy_env_release(env);
}

/* the body b of a RunGraph with one input and one output, refused as
 * refused() checks; frees b */
static void refused_body(pt_model *b, sy_status_code code, const char *n1, const char *n2, const char *n3)
{
    pt_model *m = top_model("body", b, 1, 1, 0);
    refused(m, code, n1, n2, n3);
    pt_model_free(m);
    pt_model_free(b);
}

static void test_refusals(void)
{
    /* the attribute asked for is not on the node */
    pt_model *b = body_double(), *m = top_model("no_such_graph", b, 1, 1, 0);
    refused(m, SY_ERR_INVALID_MODEL, "'no_such_graph'", "absent", "RunGraph");
    pt_model_free(m);
    /* an attribute that is not a graph */
    m = top_model("ask", b, 1, 1, 0);
    refused(m, SY_ERR_TYPE, "'ask'", "not a graph", "RunGraph");
    pt_model_free(m);
    /* the body has one input and one output; the kernel takes two inputs */
    m = top_model("body", b, 2, 1, 0);
    refused(m, SY_ERR_INVALID_MODEL, "'body'", "1 input and 1 output", "takes 2 and 1");
    pt_model_free(m);
    /* ... or two outputs */
    m = top_model("body", b, 1, 2, 0);
    refused(m, SY_ERR_INVALID_MODEL, "'body'", "1 input and 1 output", "takes 1 and 2");
    pt_model_free(m);
    pt_model_free(b);

    /* a body with two inputs where the kernel takes one */
    b = pt_model_new("adder");
    pt_input(b, "x", PT_F32, 2, D23);
    pt_input(b, "x2", PT_F32, 2, D23);
    pt_node(b, "Add", "add", (const char *[]){"x", "x2", NULL}, (const char *[]){"y", NULL});
    pt_output(b, "y", PT_F32, 2, D23);
    refused_body(b, SY_ERR_INVALID_MODEL, "'body'", "2 inputs and 1 output", "takes 1 and 1");

    /* a body with two outputs */
    b = pt_model_new("twice");
    pt_input(b, "x", PT_F32, 2, D23);
    pt_node(b, "Identity", "i1", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    pt_node(b, "Identity", "i2", (const char *[]){"x", NULL}, (const char *[]){"y2", NULL});
    pt_output(b, "y", PT_F32, 2, D23);
    pt_output(b, "y2", PT_F32, 2, D23);
    refused_body(b, SY_ERR_INVALID_MODEL, "'body'", "1 input and 2 outputs", "takes 1 and 1");

    /* a body input declared int64: the kernel binds float32 */
    b = pt_model_new("ints");
    pt_input(b, "x", PT_I64, 2, D23);
    pt_node(b, "Identity", "i1", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    pt_output(b, "y", PT_F32, 2, D23);
    refused_body(b, SY_ERR_TYPE, "'body'", "input 0 'x' is declared int64", "float32");

    /* a body whose output is int64 at run (declared float): the kernel
     * reads float32, refused when it runs */
    b = pt_model_new("caster");
    pt_input(b, "x", PT_F32, 2, D23);
    pt_node(b, "Cast", "cast", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    pt_attr_int(b, "to", PT_I64);
    pt_output(b, "y", PT_F32, 2, D23);
    refused_body(b, SY_ERR_TYPE, "'body'", "output 0 'y' is int64", "reads it as float32");
}

/* FlexAttention 'fa': Q [1,1,2,1] = (1, 2), K = (1, 0), V = (10, 20), scale 1,
 * with graph attributes attrs[i] = bodies[i] (n of them) */
static pt_model *flex_model(const char *const *attrs, pt_model *const *bodies, int n)
{
    int64_t d[4] = {1, 1, 2, 1};
    pt_model *m = pt_model_new("flex");
    pt_opset(m, "ai.onnx.preview", 1);
    pt_input(m, "Q", PT_F32, 4, d);
    pt_input(m, "K", PT_F32, 4, d);
    pt_input(m, "V", PT_F32, 4, d);
    pt_node(m, "FlexAttention", "fa", (const char *[]){"Q", "K", "V", NULL}, (const char *[]){"Y", NULL});
    pt_domain(m, "ai.onnx.preview");
    pt_attr_float(m, "scale", 1.0f);
    for (int i = 0; i < n; i++)
        pt_attr_graph(m, attrs[i], bodies[i]);
    pt_output(m, "Y", PT_F32, 4, d);
    return m;
}

/* load, create, feed and run the flex_model; y gets Y's two values */
static sy_status *flex_run(const pt_model *m, float y[2])
{
    sy_env *env = env_make();
    sy_model *mo = NULL;
    sy_session *s = NULL;
    sy_status *st = pt_load_status(env, m, "flex.onnx", &mo);
    if (!st)
        st = sy_session_create(env, mo, NULL, &s);
    float q[2] = {1, 2}, k[2] = {1, 0}, v[2] = {10, 20};
    int64_t d[4] = {1, 1, 2, 1};
    const char *names[3] = {"Q", "K", "V"};
    float *data[3] = {q, k, v};
    for (int i = 0; i < 3 && !st; i++) {
        sy_tensor t = pt_tensor_f32(data[i], 4, d);
        st = sy_session_set_input(s, names[i], &t, SY_INPUT_COPY);
    }
    for (int run = 0; run < 2 && !st; run++) { /* twice: the second reuses the graphs' plans */
        st = sy_session_run(s);
        const sy_tensor *out = NULL;
        if (!st)
            st = sy_session_get_output(s, 0, &out);
        if (!st)
            memcpy(y, out->data, 2 * sizeof *y);
    }
    sy_session_release(s);
    sy_model_release(mo);
    sy_env_release(env);
    return st;
}

/* the inputs of a scalar-contract graph: score (f32; not for a mask) and
 * the int64 scalars b, h, q, k; the caller adds nodes and the output */
static pt_model *scalar_graph(const char *name, bool with_score)
{
    pt_model *b = pt_model_new(name);
    if (with_score)
        pt_input(b, "score", PT_F32, 0, NULL);
    pt_input(b, "b", PT_I64, 0, NULL);
    pt_input(b, "h", PT_I64, 0, NULL);
    pt_input(b, "q", PT_I64, 0, NULL);
    pt_input(b, "k", PT_I64, 0, NULL);
    return b;
}

static void test_flex(void)
{
    /* The later spec's scalar contract, hand-worked. Scores q.k: row 0
     * (1, 0), row 1 (2, 0). score_mod adds q_idx - k_idx: (1, -1), (3, 0).
     * mask_mod keeps k_idx <= q_idx: (1, -inf), (3, 0). Softmax: (1, 0),
     * (e^3, 1) / (e^3 + 1). prob_mod doubles: (2, 0), 2 (e^3, 1) / (e^3 + 1).
     * Y = P V: 2 * 10 = 20, and 2 (10 e^3 + 20) / (e^3 + 1) = 20.9485175 */
    pt_model *sm = scalar_graph("rel_pos", true);
    pt_node(sm, "Sub", "sub", (const char *[]){"q", "k", NULL}, (const char *[]){"d", NULL});
    pt_node(sm, "Cast", "cast", (const char *[]){"d", NULL}, (const char *[]){"df", NULL});
    pt_attr_int(sm, "to", PT_F32);
    pt_node(sm, "Add", "add", (const char *[]){"score", "df", NULL}, (const char *[]){"out", NULL});
    pt_output(sm, "out", PT_F32, 0, NULL);
    pt_model *mm = scalar_graph("causal", false);
    pt_node(mm, "GreaterOrEqual", "ge", (const char *[]){"q", "k", NULL}, (const char *[]){"keep", NULL});
    pt_output(mm, "keep", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, NULL);
    pt_model *pm = scalar_graph("twice", true);
    const float two = 2.0f;
    pt_init_f32(pm, "two", 0, NULL, &two);
    pt_node(pm, "Mul", "mul", (const char *[]){"score", "two", NULL}, (const char *[]){"out", NULL});
    pt_output(pm, "out", PT_F32, 0, NULL);
    const char *attrs[3] = {"score_mod", "mask_mod", "prob_mod"};
    pt_model *bodies[3] = {sm, mm, pm};
    pt_model *m = flex_model(attrs, bodies, 3);
    float y[2] = {0, 0};
    sy_status *st = flex_run(m, y);
    PT_CHECK(st == NULL, "scalar-contract modifiers: %s", pt_msg(st));
    double e3 = 20.085536923187668, want1 = 2.0 * (10.0 * e3 + 20.0) / (e3 + 1.0);
    PT_CHECK(fabs(y[0] - 20.0) < 1e-5 && fabs(y[1] - want1) < 1e-5, "Y = (%.7g, %.7g), hand-worked (20, %.7g)",
             y[0], y[1], want1);
    pt_model_free(m);

    /* a graph of three inputs is neither form */
    pt_model *bad = pt_model_new("three");
    pt_input(bad, "s", PT_F32, 0, NULL);
    pt_input(bad, "q", PT_I64, 0, NULL);
    pt_input(bad, "k", PT_I64, 0, NULL);
    pt_node(bad, "Identity", "i", (const char *[]){"s", NULL}, (const char *[]){"out", NULL});
    pt_output(bad, "out", PT_F32, 0, NULL);
    m = flex_model((const char *[]){"score_mod"}, &bad, 1);
    PT_EXPECT_REFUSED(flex_run(m, y), SY_ERR_INVALID_MODEL, "node 'fa' (FlexAttention)", "'score_mod' has 3 inputs",
                      "takes 1", "or 5");
    pt_model_free(m);
    pt_model_free(bad);
    /* probabilities declared double where the scores are float */
    int64_t d[4] = {1, 1, 2, 2};
    bad = pt_model_new("double_prob_mod");
    pt_input(bad, "p", PT_F64, 4, d);
    pt_node(bad, "Identity", "i", (const char *[]){"p", NULL}, (const char *[]){"out", NULL});
    pt_output(bad, "out", PT_F64, 4, d);
    m = flex_model((const char *[]){"prob_mod"}, &bad, 1);
    PT_EXPECT_REFUSED(flex_run(m, y), SY_ERR_TYPE, "node 'fa' (FlexAttention)", "'prob_mod'", "declared float64");
    pt_model_free(m);
    pt_model_free(bad);
    /* a scalar mask_mod must give bool; this one gives its float score */
    m = flex_model((const char *[]){"mask_mod"}, &sm, 1);
    PT_EXPECT_REFUSED(flex_run(m, y), SY_ERR_INVALID_MODEL, "'mask_mod' has 5 inputs", "or 4");
    pt_model_free(m);
    bad = scalar_graph("float_mask", false);
    pt_node(bad, "Cast", "c", (const char *[]){"q", NULL}, (const char *[]){"out", NULL});
    pt_attr_int(bad, "to", PT_F32);
    pt_output(bad, "out", PT_F32, 0, NULL);
    m = flex_model((const char *[]){"mask_mod"}, &bad, 1);
    PT_EXPECT_REFUSED(flex_run(m, y), SY_ERR_TYPE, "node 'fa' (FlexAttention)", "'mask_mod'",
                      "output 0 'out' is declared float32", "bool");
    pt_model_free(m);
    pt_model_free(bad);
    pt_model_free(sm);
    pt_model_free(mm);
    pt_model_free(pm);
}

int main(void)
{
    PT_RUN(test_runs);
    PT_RUN(test_optional);
    PT_RUN(test_refusals);
    PT_RUN(test_flex);
    return pt_result();
}
