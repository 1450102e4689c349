/*
 *   llm_ref CHECKPOINT [--steps N] [--quiet]   greedy from BOS; prints ids and tok/s
 *
 * The benchmark program of tools/bench/llm.sh over llm_ref.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "llm_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: llm_ref CHECKPOINT [--steps N] [--quiet]\n");
        return 2;
    }
    int steps = 0;
    int quiet = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quiet"))
            quiet = 1;
    }
    ref_model m;
    char err[512];
    if (ref_load(argv[1], &m, err, sizeof err)) {
        fprintf(stderr, "llm_ref: %s\n", err);
        return 1;
    }
    if (steps <= 0 || steps > m.seq_len)
        steps = m.seq_len;
    int token = 1, n = 0;
    double t0 = now_s();
    for (int pos = 0; pos < steps; pos++) {
        int next = ref_argmax(ref_forward(&m, token, pos), m.vocab);
        n++;
        if (!quiet)
            printf("%d ", next);
        if (next == 1)
            break;
        token = next;
    }
    double dt = now_s() - t0;
    if (!quiet)
        printf("\n");
    printf("llm_ref: %d tokens in %.3f ms (%.1f tok/s), greedy from BOS\n", n, dt * 1e3, n / dt);
    ref_free(&m);
    return 0;
}
