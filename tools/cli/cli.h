/* The switchyard command-line tool: shared helpers of the subcommands. */
#ifndef SY_CLI_H
#define SY_CLI_H

#include <switchyard/switchyard.h>
#include <stdio.h>

typedef int (*sy_cli_cmd_fn)(int argc, char **argv);

/* Print "switchyard: <context>: <CODE>: <message>" and free st; returns 1. */
int cli_fail(sy_status *st, const char *context);
/* Print an error about usage and return 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Create the env from --config (NULL: embedded default). */
sy_status *cli_env(const char *config, sy_env **out);
/* "[1,3,224,224]" */
void cli_format_dims(const int32_t rank, const int64_t *dims, char *buf, size_t len);
/* Name, dtype, shape and a summary (top-5 for a vector) of a tensor. */
void cli_print_tensor_summary(FILE *f, const char *label, const sy_tensor *t);
/* Element i of a tensor as a real number (fp16/bf16 widened, integers
 * exact up to 2^53); NaN for a dtype without one value per element. */
double cli_tensor_elem(const sy_tensor *t, int64_t i);
/* A deterministic input for a model input (symbolic dims = 1). */
sy_tensor *cli_make_pattern_input(const sy_value_info *vi);
/* Feed inputs: --input-dir, --input NAME=FILE pairs, or deterministic. */
typedef struct cli_inputs {
    const char *dir;
    const char **pairs; /* NAME=FILE */
    int n_pairs;
    int quiet;
} cli_inputs;
sy_status *cli_feed_inputs(sy_session *s, const sy_model *m, const cli_inputs *in, FILE *log);
/* The value of --requant: "onnx", "gemmlowp" or "single_rounding"; NULL (after a usage
 * message for `cmd`) for anything else. */
const char *cli_requant_arg(const char *cmd, const char *v);
/* Print each emulated provider's report (qnn_emu.<name> extension) to
 * stdout: explain and bench --emulator-report (cmd_explain.c). */
void cli_print_emulator_reports(sy_env *env);
/* Parse a positive int option value; returns -1 on error. */
long cli_parse_long(const char *s, long min, long max);

int cmd_run(int argc, char **argv);
int cmd_plugins(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_conformance(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_quantize(int argc, char **argv);
int cmd_llm(int argc, char **argv);
int cmd_llm_export(int argc, char **argv);
int cmd_cts(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_codegen(int argc, char **argv);
/* codegen --train (cmd_codegen_train.c) */
int cmd_codegen_train(int argc, char **argv);
/* codegen --train --mode fp32 (cmd_codegen_train_f32.c) */
int cmd_codegen_train_f32(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_train(int argc, char **argv);

#endif
