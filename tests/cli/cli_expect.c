/*
 * cli_expect: runs a command and checks its exit status and output.
 *
 *   cli_expect [--need PATH]... [--rm PATH]... [--truncate-copy SRC DST BYTES]
 *              [--exit 0|nonzero|N] [--expect ERE]... [--reject ERE]... -- CMD [ARGS...]
 *
 *   --need PATH        skip (exit 77) with a message when PATH does not exist
 *   --rm PATH          delete PATH before running (so stale output cannot pass)
 *   --truncate-copy    write the first BYTES bytes of SRC to DST before running
 *   --exit             the expected exit status (default 0)
 *   --expect ERE       stdout+stderr must match (POSIX extended regex, repeatable)
 *   --reject ERE       stdout+stderr must not match
 *
 * The command's stdin is /dev/null; its output is echoed for the test log.
 */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int truncate_copy(const char *src, const char *dst, long bytes)
{
    FILE *in = fopen(src, "rb");
    if (!in) {
        fprintf(stderr, "cli_expect: %s: %s\n", src, strerror(errno));
        return -1;
    }
    char *buf = malloc((size_t)bytes);
    size_t got = buf ? fread(buf, 1, (size_t)bytes, in) : 0;
    fclose(in);
    FILE *out = fopen(dst, "wb");
    if (!buf || got != (size_t)bytes || !out || fwrite(buf, 1, got, out) != got) {
        fprintf(stderr, "cli_expect: cannot write the first %ld bytes of %s to %s\n", bytes, src, dst);
        free(buf);
        if (out)
            fclose(out);
        return -1;
    }
    free(buf);
    return fclose(out) == 0 ? 0 : -1;
}

static char *run(char **cmd, int *status)
{
    int fds[2];
    if (pipe(fds) != 0)
        return NULL;
    pid_t pid = fork();
    if (pid < 0)
        return NULL;
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        execvp(cmd[0], cmd);
        fprintf(stderr, "cli_expect: cannot run %s: %s\n", cmd[0], strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    size_t len = 0, cap = 4096;
    char *out = malloc(cap);
    for (;;) {
        if (len + 1 >= cap) {
            cap *= 2;
            char *g = realloc(out, cap);
            if (!g)
                break;
            out = g;
        }
        ssize_t n = read(fds[0], out + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fds[0]);
    out[len] = '\0';
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    return out;
}

static bool matches(const char *re, const char *text, bool *bad_re)
{
    regex_t rx;
    if (regcomp(&rx, re, REG_EXTENDED | REG_NOSUB) != 0) {
        *bad_re = true;
        return false;
    }
    bool m = regexec(&rx, text, 0, NULL, 0) == 0;
    regfree(&rx);
    return m;
}

int main(int argc, char **argv)
{
    const char *expect_exit = "0";
    const char *expects[64], *rejects[64];
    int n_expect = 0, n_reject = 0, i = 1;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "--need") && i + 1 < argc) {
            struct stat sb;
            if (stat(argv[++i], &sb) != 0) {
                printf("SKIP: '%s' is absent (the shared folder with models is needed; set -DSY_SHARED_DIR)\n",
                       argv[i]);
                return 77;
            }
        } else if (!strcmp(argv[i], "--rm") && i + 1 < argc) {
            if (unlink(argv[++i]) != 0 && errno != ENOENT) {
                fprintf(stderr, "cli_expect: cannot remove %s: %s\n", argv[i], strerror(errno));
                return 1;
            }
        } else if (!strcmp(argv[i], "--truncate-copy") && i + 3 < argc) {
            if (truncate_copy(argv[i + 1], argv[i + 2], atol(argv[i + 3])) != 0)
                return 1;
            i += 3;
        } else if (!strcmp(argv[i], "--exit") && i + 1 < argc) {
            expect_exit = argv[++i];
        } else if (!strcmp(argv[i], "--expect") && i + 1 < argc && n_expect < 64) {
            expects[n_expect++] = argv[++i];
        } else if (!strcmp(argv[i], "--reject") && i + 1 < argc && n_reject < 64) {
            rejects[n_reject++] = argv[++i];
        } else {
            fprintf(stderr, "cli_expect: bad argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (i + 1 >= argc) {
        fprintf(stderr, "cli_expect: no command after --\n");
        return 2;
    }
    char **cmd = argv + i + 1;
    printf("$");
    for (char **c = cmd; *c; c++)
        printf(" %s", *c);
    printf("\n");
    int status = -1;
    char *out = run(cmd, &status);
    if (!out) {
        fprintf(stderr, "cli_expect: cannot run the command\n");
        return 1;
    }
    fputs(out, stdout);
    printf("[exit status %d]\n", status);
    int failures = 0;
    bool exit_ok = !strcmp(expect_exit, "nonzero") ? status != 0 : status == atoi(expect_exit);
    /* a crash is never the expected failure */
    if (status >= 128) {
        printf("FAIL: the command died from a signal (status %d)\n", status);
        exit_ok = false;
    }
    if (!exit_ok) {
        printf("FAIL: exit status %d, expected %s\n", status, expect_exit);
        failures++;
    }
    for (int k = 0; k < n_expect; k++) {
        bool bad = false;
        if (!matches(expects[k], out, &bad)) {
            printf("FAIL: output does not match %s/%s/\n", bad ? "(invalid regex) " : "", expects[k]);
            failures++;
        }
    }
    for (int k = 0; k < n_reject; k++) {
        bool bad = false;
        if (matches(rejects[k], out, &bad) || bad) {
            printf("FAIL: output matches /%s/, which it must not\n", rejects[k]);
            failures++;
        }
    }
    free(out);
    printf("%s\n", failures ? "cli_expect: FAILED" : "cli_expect: ok");
    return failures ? 1 : 0;
}
