/*
 * Switchyard tools library (libswitchyard_tools): model transformation and
 * writing for host applications. The `switchyard quantize` and
 * `switchyard llm-export` commands are thin shells over these calls, so a
 * host gets the same files the CLI writes (docs/tools.md).
 *
 *   sy_quantize     post-training static quantization of a float ONNX model
 *                   into a QDQ model (or fp16 / int4-block weights), with an
 *                   accuracy report against fp32 on the calibration set.
 *   sy_llm_export   a llama2.c checkpoint + tokenizer -> an LLM bundle
 *                   (docs/llm.md).
 *   sy_model_writer an ONNX model built node by node and written out.
 *   sy_compare_tensors  an output against a reference, with the tolerance
 *                   rule of `switchyard conformance`.
 *
 * Conventions are those of switchyard.h: every call that can fail returns a
 * sy_status* (NULL on success) whose message says what and where; every
 * struct starts with struct_size (set it to sizeof the struct; fields past
 * it are neither read nor written, and a zeroed struct means the defaults),
 * and structs only grow at the end. Files are written through a temporary
 * file and a rename: a failed call leaves no half-written output.
 *
 * Thread safety: calls on different environments may run concurrently; one
 * call at a time per sy_env.
 */
#ifndef SWITCHYARD_SY_TOOLS_H
#define SWITCHYARD_SY_TOOLS_H

#include "switchyard.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this header's calls and structs (grows append-only). */
#define SY_TOOLS_VERSION 1
SY_EXPORT int sy_tools_version(void);

/* Progress of a long call: `phase` names the step ("calibrating",
 * "evaluating", "graph"), `done` of `total` units are finished, and
 * `message`, when not NULL, is a line for a person (no newline). Called on
 * the caller's thread; it may not call back into the same env. */
typedef void (*sy_tools_progress_fn)(void *user, const char *phase, size_t done, size_t total, const char *message);

/* ======================================================================== */
/* quantization                                                             */
/* ======================================================================== */

/* The activation observer (how calibration picks each range). */
typedef enum sy_quantize_observer {
    SY_QUANTIZE_MINMAX = 0,     /* the range of every value seen */
    SY_QUANTIZE_PERCENTILE = 1  /* symmetric percentile of |x| (options.percentile) */
} sy_quantize_observer;

typedef struct sy_quantize_options {
    size_t struct_size;  /* sizeof(sy_quantize_options) */
    /* a recipe a loaded quant_* plugin publishes (extension
     * "quant_recipe.NAME"): "int8" (NULL means this), "uint8", "int16x8"
     * (QDQ), "fp16", "int4" (weights only) */
    const char *scheme;
    int per_channel;     /* nonzero: weights per output channel (integer schemes) */
    int32_t block_size;  /* block-wise schemes (int4): 2..65536; 0: the recipe's */
    int observer;        /* sy_quantize_observer */
    double percentile;   /* SY_QUANTIZE_PERCENTILE: in (50, 100]; 0: 99.99 */
    int skip_evaluation; /* nonzero: do not run the written model over the samples */
    sy_tools_progress_fn progress; /* NULL: silent */
    void *progress_user;
} sy_quantize_options;

/* Calibration inputs: a folder, or tensors in memory. */
typedef struct sy_calib_source {
    size_t struct_size;  /* sizeof(sy_calib_source) */
    /* a folder with input_0.pb, input_1.pb ... (or .npy), or a folder of
     * such folders (the test_data_set_* of an ONNX model), or of .npy files
     * (one sample each) for a one-input model */
    const char *dir;
    /* when dir is NULL: n_samples x (model inputs) tensors, sample-major,
     * in the model's input order; borrowed for the call */
    const sy_tensor *const *tensors;
    size_t n_samples;
} sy_calib_source;

/* What a run did; filled as the call goes (also when it fails part-way). */
typedef struct sy_quantize_report {
    size_t struct_size;     /* sizeof(sy_quantize_report) */
    size_t n_samples;       /* calibration samples */
    int conv_folds;         /* Conv + BatchNormalization / Add folded before quantizing */
    int weight_only;        /* 1: fp16 or block-wise weights, activations stay float */
    int32_t block_size;     /* block-wise: the block size used; else 0 */
    size_t weight_tensors;  /* weight_only: tensors rewritten */
    int64_t opset;          /* default-domain opset of the written model */
    size_t input_bytes;     /* the float model */
    size_t output_bytes;    /* the written model */
    int evaluated;          /* 1: the fields below are set */
    double max_abs_error;   /* over all outputs and samples, against fp32 */
    double relative_error;  /* ||q - f|| / ||f|| over all outputs */
    size_t argmax_agree;    /* output 0: samples whose argmax matches fp32 */
    size_t argmax_compared;
} sy_quantize_report;

/* Quantize a float ONNX model and write it to out_path.
 *   env          its plugins provide the recipe, the observers and the
 *                runs (calibration and evaluation)
 *   model_path   the model file; with model_data, only its name (messages)
 *                and folder (external data); may then be NULL
 *   model_data   NULL: read model_path; else model_size bytes of ONNX
 *   opts         NULL: the defaults (int8, per tensor, minmax)
 *   calib        required
 *   report       NULL or filled
 * The written bytes depend only on the model, the samples, the options and
 * the recipe's plugin: `switchyard quantize` writes the same file. */
SY_EXPORT sy_status *sy_quantize(sy_env *env, const char *model_path, const void *model_data, size_t model_size,
                                 const sy_quantize_options *opts, const sy_calib_source *calib, const char *out_path,
                                 sy_quantize_report *report);

/* ======================================================================== */
/* LLM export                                                               */
/* ======================================================================== */

#define SY_LLM_EXPORT_MAX_VARIANTS 8

typedef struct sy_llm_export_options {
    size_t struct_size;  /* sizeof(sy_llm_export_options) */
    int shards;          /* 1 .. n_layers + 1 (the last may hold only the LM head); 0: 1 */
    /* prompt lengths (AR) and context lengths (CL), each ascending and at
     * most SY_LLM_EXPORT_MAX_VARIANTS; n_ar 0: {1, 128}; n_cl 0: {128, 256, 512} */
    int n_ar, n_cl;
    int ar[SY_LLM_EXPORT_MAX_VARIANTS];
    int cl[SY_LLM_EXPORT_MAX_VARIANTS];
    int fp16;            /* weights stored as float16, cast to float in the graph */
    int onnx_attention;  /* plain opset-17 attention instead of switchyard.llm CausalAttention */
    sy_tools_progress_fn progress; /* "graph" per graph written, "bundle" at the end */
    void *progress_user;
} sy_llm_export_options;

/* Write the bundle (graphs, weights.bin, bundle.ini, tokenizer.bin) into
 * out_dir, created if needed. opts NULL: the defaults. */
SY_EXPORT sy_status *sy_llm_export(const char *checkpoint, const char *tokenizer, const char *out_dir,
                                   const sy_llm_export_options *opts);

/* ======================================================================== */
/* model writer                                                             */
/* ======================================================================== */

/* An ONNX model built in memory and written out: inputs, outputs,
 * initializers, nodes and opset imports, in the order they are added.
 * What conformance kits, tests and generators build; the quantizer and the
 * exporter write through the same code. Names are copied. */
typedef struct sy_model_writer sy_model_writer;

/* Attribute types (numbering = ONNX AttributeProto.AttributeType). */
typedef enum sy_model_attr_type {
    SY_MODEL_ATTR_FLOAT = 1,
    SY_MODEL_ATTR_INT = 2,
    SY_MODEL_ATTR_STRING = 3,
    SY_MODEL_ATTR_FLOATS = 6,
    SY_MODEL_ATTR_INTS = 7
} sy_model_attr_type;

/* One attribute of a node (an array element: no struct_size; frozen). */
typedef struct sy_model_attr {
    const char *name;
    int type;               /* sy_model_attr_type */
    int64_t i;              /* INT */
    float f;                /* FLOAT */
    const char *s;          /* STRING */
    const int64_t *ints;    /* INTS, n values */
    const float *floats;    /* FLOATS, n values */
    size_t n;
} sy_model_attr;

/* A writer for a model whose default domain ("") is at `opset` (1..1000). */
SY_EXPORT sy_status *sy_model_writer_create(int64_t opset, sy_model_writer **out);
SY_EXPORT void sy_model_writer_release(sy_model_writer *w);
/* Another operator set (a custom domain) the nodes use. */
SY_EXPORT sy_status *sy_model_writer_add_opset(sy_model_writer *w, const char *domain, int64_t version);
/* producer_name of the model ("switchyard" by default) */
SY_EXPORT sy_status *sy_model_writer_set_producer(sy_model_writer *w, const char *producer);
/* A graph input or output of `dtype` and a static shape; dtype
 * SY_DT_UNDEFINED (or rank < 0) writes the name only, the type left to
 * shape inference (outputs). */
SY_EXPORT sy_status *sy_model_writer_add_input(sy_model_writer *w, const char *name, sy_dtype dtype, int32_t rank,
                                               const int64_t *dims);
SY_EXPORT sy_status *sy_model_writer_add_output(sy_model_writer *w, const char *name, sy_dtype dtype, int32_t rank,
                                                const int64_t *dims);
/* A constant: t's dtype, shape and nbytes of data (copied). */
SY_EXPORT sy_status *sy_model_writer_add_initializer(sy_model_writer *w, const char *name, const sy_tensor *t);
/* A node; domain NULL or "" is the default domain; name NULL: "<op>_<index>";
 * an empty input name is an absent optional input. */
SY_EXPORT sy_status *sy_model_writer_add_node(sy_model_writer *w, const char *domain, const char *op,
                                              const char *name, const char *const *inputs, size_t n_inputs,
                                              const char *const *outputs, size_t n_outputs,
                                              const sy_model_attr *attrs, size_t n_attrs);
/* The model's bytes (IR version from the default opset: 8 up to opset 18,
 * 9 for 19-20, 10 from 21); *data is freed with sy_tools_free. */
SY_EXPORT sy_status *sy_model_writer_pack(const sy_model_writer *w, void **data, size_t *size);
/* pack, then written through a temporary file and a rename */
SY_EXPORT sy_status *sy_model_writer_save(const sy_model_writer *w, const char *path);
/* frees what the tools library returned (sy_model_writer_pack) */
SY_EXPORT void sy_tools_free(void *p);

/* ======================================================================== */
/* comparing outputs with references                                        */
/* ======================================================================== */

/* The outcome of sy_compare_tensors. */
typedef struct sy_compare_result {
    size_t struct_size;       /* sizeof(sy_compare_result) */
    int equal;                /* 1: same dtype and shape, every element within tolerance */
    int64_t n_elements;
    int64_t n_mismatched;
    int64_t first_mismatch;   /* flat index of the first element out of tolerance, -1 none */
    double max_abs_error;     /* floats: the largest |got - want| of finite pairs */
    char message[512];        /* when not equal: what differs and where ("value mismatch at index [0,3]: ...") */
} sy_compare_result;

/* got against want, the rule of `switchyard conformance`: dtype and shape
 * must match; floating-point elements pass when |got - want| <= atol + rtol
 * * |want| (NaN only against NaN, infinities only equal); integers and bool
 * compare exactly; packed and float8 types bit for bit; strings byte for byte. A mismatch is a
 * result (equal 0, message), not an error: the status is for bad arguments
 * (NULL tensors, data shorter than the shape, a dtype without a size). */
SY_EXPORT sy_status *sy_compare_tensors(const sy_tensor *got, const sy_tensor *want, double rtol, double atol,
                                        sy_compare_result *result);

#ifdef __cplusplus
}
#endif

#endif
