/* Engine-private helpers (not installed). */
#ifndef RW_INTERNAL_H
#define RW_INTERNAL_H

#include "rankwise.h"

#ifndef RW_VERSION_STRING
#define RW_VERSION_STRING "0.0.0"
#endif

/* Record a formatted one-line error and return `code`. */
rw_status rw_fail(rw_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
