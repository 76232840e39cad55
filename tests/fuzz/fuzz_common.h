/* What every harness checks besides memory safety (ASan) and undefined
 * behaviour (UBSan): a refusal is one line naming the input, and what a
 * reader returns its writer writes, and reading that back and writing
 * again gives the same bytes (write . read is a fixed point). */
#ifndef RW_FUZZ_COMMON_H
#define RW_FUZZ_COMMON_H

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define FUZZ_NAME "fuzz-input"

static void fuzz_fail(const char *what)
{
    fprintf(stderr, "rankwise fuzz: %s (last error: %s)\n", what, rw_last_error());
    abort();
}

/* A refusal: RW_ERR_PARSE (or NOMEM for a huge declared size), one line
 * starting with the input's name. */
static void fuzz_check_refusal(rw_status st)
{
    const char *msg = rw_last_error();
    if (st != RW_ERR_PARSE && st != RW_ERR_NOMEM && st != RW_ERR_ARG)
        fuzz_fail("a reader failed with an unexpected status");
    if (strncmp(msg, FUZZ_NAME, strlen(FUZZ_NAME)) != 0)
        fuzz_fail("an error message does not name the input");
    if (strpbrk(msg, "\r\n"))
        fuzz_fail("an error message spans several lines");
}

/* The input as a read-only stream (fmemopen refuses an empty buffer). */
static FILE *fuzz_open(const uint8_t *data, size_t size)
{
    static const char empty[1] = "";
    FILE *f = size ? fmemopen((void *)data, size, "r") : fmemopen((void *)empty, 1, "r");
    if (!f)
        fuzz_fail("fmemopen failed");
    if (!size)
        fgetc(f); /* at the end: an empty input */
    return f;
}

#endif
