/* Thread-local one-line error message shared by the whole engine.
 *
 * Every rankwise library holds its own copy of this file (each links the
 * engine's archive privately) and exports rw_last_error, yet a process has
 * one message per thread: each copy uses the buffer of the rw_last_error
 * the process resolves first, so that a failure inside librankwise_coll is
 * read with librankwise's rw_last_error, and the other way round. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#ifndef RW_SMPI
#include <dlfcn.h>
#endif

/* 512 bytes in every release: another copy, maybe of another release, may
 * write into this one's. */
static _Thread_local char last_error[512] = "no error";

/* The process's buffer for this thread. Under SMPI the simulated ranks are
 * privatised copies of one program: each keeps its own. */
static char *buffer(void)
{
#ifndef RW_SMPI
    /* Set while this copy asks the first rw_last_error: when that one is
     * ours, the question comes back here and is answered with our own. */
    static _Thread_local int asking;
    if (!asking) {
        const char *(*first)(void);
        *(void **)&first = dlsym(RTLD_DEFAULT, "rw_last_error");
        if (first) {
            asking = 1;
            char *theirs = (char *)first();
            asking = 0;
            return theirs;
        }
    }
#endif
    return last_error;
}

const char *rw_last_error(void) { return buffer(); }

const char *rw_version(void) { return RW_VERSION_STRING; }

rw_status rw_fail(rw_status code, const char *fmt, ...)
{
    char *msg = buffer();
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof last_error, fmt, ap);
    va_end(ap);
    /* A message quotes what it was given (a token of a damaged file, a
     * value): bytes that are not text become '?', so that it stays one
     * printable line on a terminal and UTF-8 for Python. */
    unsigned char *s = (unsigned char *)msg;
    size_t len = strlen(msg);
    for (size_t k = 0; k < len;) {
        size_t step = s[k] < 0x20 || s[k] == 0x7F ? 0 : rw_utf8_sequence(s + k, len - k);
        if (step)
            k += step;
        else
            s[k++] = '?';
    }
    return code;
}
