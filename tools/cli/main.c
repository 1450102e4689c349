/* switchyard: the command-line front end of libswitchyard. */
#include "cli.h"

#include <string.h>

typedef struct command {
    const char *name;
    sy_cli_cmd_fn fn;
    const char *summary;
} command;

static const command commands[] = {
    {"run", cmd_run, "run a model once and print (or write) its outputs"},
    {"inspect", cmd_inspect, "show a model's IR, opsets, inputs/outputs and op histogram"},
    {"explain", cmd_explain, "show which provider runs each node and why"},
    {"bench", cmd_bench, "time repeated runs and report the memory plan"},
    {"conformance", cmd_conformance, "run ONNX backend test folders and compare outputs with the references"},
    {"llm", cmd_llm, "generate text with an LLM bundle (the llm extension plugin)"},
    {"llm-export", cmd_llm_export, "write an LLM bundle (ONNX graphs + shared weights) from a llama2.c checkpoint"},
    {"compile", cmd_compile, "finalize a model's fused partitions into a compile cache file (run/bench --compiled)"},
    {"compare", cmd_compare, "run a model on two deployments and compare every node's outputs (accuracy debugger)"},
    {"cts", cmd_cts, "conformance kit for a plugin: its kernels against cpu_ref, and the ABI rules"},
    {"codegen", cmd_codegen, "write a standalone C99 package of a model for a RISC-V MCU (ws63, hi3066)"},
    {"quantize", cmd_quantize, "quantize a float ONNX model to QDQ int8 with calibration data"},
    {"train", cmd_train, "train a float ONNX or TFLite classifier on labelled data (artifacts, checkpoints, export)"},
    {"plugins", cmd_plugins, "list the plugin libraries the configuration loads, and what each registered"},
    {"ops", cmd_ops, "the seed's MCU operator contract (ops-mcu.md Tables A, B): the dtypes each provider runs"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: switchyard COMMAND [ARGS...]\n\n"
               "Switchyard runs neural networks on the providers an INI file names.\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'switchyard COMMAND --help' explains each command.\n"
               "Without --config, the embedded default configuration loads every plugin\n"
               "installed next to libswitchyard (see docs/config.md).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("switchyard %s\n", sy_version());
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "switchyard: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
