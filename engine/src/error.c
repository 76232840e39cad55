/* Thread-local one-line error message shared by the whole engine. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[512] = "no error";

const char *rw_last_error(void) { return last_error; }

const char *rw_version(void) { return RW_VERSION_STRING; }

rw_status rw_fail(rw_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}
