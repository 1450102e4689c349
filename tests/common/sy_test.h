/*
 * A tiny test harness for Switchyard's C tests.
 *
 *   CHECK(cond, fmt, ...)      record a failure and go on
 *   REQUIRE(cond, fmt, ...)    record a failure and return from the current test
 *   CHECK_STR_HAS(s, sub)      s is non-NULL and contains sub
 *   SY_TEST_MAIN_RESULT()      exit status: 0 when nothing failed, 1 otherwise
 *   SY_TEST_SKIP(fmt, ...)     print why and exit 77 (CTest SKIP_RETURN_CODE)
 *
 * Tests print one line per failure with file and line, and a closing count.
 */
#ifndef SY_TEST_H
#define SY_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sy_test_failures_;
static int sy_test_checks_;

#define SY_TEST_SKIP_CODE 77

#define CHECK(cond, ...)                                                                                           \
    do {                                                                                                           \
        sy_test_checks_++;                                                                                         \
        if (!(cond)) {                                                                                             \
            sy_test_failures_++;                                                                                   \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                        \
            fprintf(stderr, __VA_ARGS__);                                                                          \
            fputc('\n', stderr);                                                                                   \
        }                                                                                                          \
    } while (0)

#define REQUIRE(cond, ...)                                                                                         \
    do {                                                                                                           \
        int sy_req_before_ = sy_test_failures_;                                                                    \
        CHECK(cond, __VA_ARGS__);                                                                                  \
        if (sy_test_failures_ != sy_req_before_)                                                                   \
            return;                                                                                                \
    } while (0)

#define CHECK_STR_HAS(s, sub)                                                                                      \
    do {                                                                                                           \
        const char *sy_s_ = (s);                                                                                   \
        const char *sy_sub_ = (sub);                                                                               \
        CHECK(sy_s_ && strstr(sy_s_, sy_sub_), "expected \"%s\" in \"%s\"", sy_sub_, sy_s_ ? sy_s_ : "(null)");    \
    } while (0)

#define SY_TEST_SKIP(...)                                                                                          \
    do {                                                                                                           \
        printf("SKIP: ");                                                                                          \
        printf(__VA_ARGS__);                                                                                       \
        printf("\n");                                                                                              \
        exit(SY_TEST_SKIP_CODE);                                                                                   \
    } while (0)

#define RUN_TEST(fn)                                                                                               \
    do {                                                                                                           \
        int sy_before_ = sy_test_failures_;                                                                        \
        fn();                                                                                                      \
        printf("%s %s\n", sy_test_failures_ == sy_before_ ? "ok  " : "FAIL", #fn);                                 \
        fflush(stdout);                                                                                            \
    } while (0)

static inline int sy_test_result(void)
{
    printf("%d checks, %d failed\n", sy_test_checks_, sy_test_failures_);
    return sy_test_failures_ ? 1 : 0;
}
#define SY_TEST_MAIN_RESULT() sy_test_result()

#endif
