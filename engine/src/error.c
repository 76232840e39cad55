/* Thread-local one-line error message shared by the whole engine. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[512] = "no error";

const char *rw_last_error(void) { return last_error; }

const char *rw_version(void) { return RW_VERSION_STRING; }

rw_status rw_fail(rw_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    /* A message quotes what it was given (a token of a damaged file, a
     * value): bytes that are not text become '?', so that it stays one
     * printable line on a terminal and UTF-8 for Python. */
    unsigned char *s = (unsigned char *)last_error;
    size_t len = strlen(last_error);
    for (size_t k = 0; k < len;) {
        size_t step = s[k] < 0x20 || s[k] == 0x7F ? 0 : rw_utf8_sequence(s + k, len - k);
        if (step)
            k += step;
        else
            s[k++] = '?';
    }
    return code;
}
