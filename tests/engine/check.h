/* Minimal assertion helpers for the engine's unit tests. */
#ifndef RW_CHECK_H
#define RW_CHECK_H
#include <math.h>
#include <stdio.h>

static int check_failures = 0;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);  \
            check_failures++;                                                         \
        }                                                                             \
    } while (0)

#define CHECK_CLOSE(a, b, rel)                                                        \
    do {                                                                              \
        double a_ = (a), b_ = (b);                                                    \
        if (!(fabs(a_ - b_) <= (rel) * fmax(fabs(a_), fabs(b_)) + 1e-300)) {          \
            fprintf(stderr, "%s:%d: %s = %.12g, expected %.12g\n", __FILE__, __LINE__, \
                    #a, a_, b_);                                                      \
            check_failures++;                                                         \
        }                                                                             \
    } while (0)

#define CHECK_DONE()                                                                  \
    do {                                                                              \
        if (check_failures)                                                           \
            fprintf(stderr, "%d check(s) failed\n", check_failures);                  \
        return check_failures ? 1 : 0;                                                \
    } while (0)
#endif
