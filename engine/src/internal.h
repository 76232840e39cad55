/* Engine-private helpers (not installed). */
#ifndef RW_INTERNAL_H
#define RW_INTERNAL_H

#include "rankwise.h"

#ifndef RW_VERSION_STRING
#define RW_VERSION_STRING "0.0.0"
#endif

#include <stdio.h>

/* Record a formatted one-line error and return `code`. */
rw_status rw_fail(rw_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Writes obj's text into f; non-zero on failure. */
typedef int (*rw_body_writer)(const void *obj, FILE *f);

/* Write `path` atomically: body() fills a temporary file in the same
 * directory, which is renamed over path only once complete. */
rw_status rw_write_atomic(const char *path, rw_body_writer body, const void *obj);

/* RW_ERR_PARSE with the message "path:line: <formatted>". */
rw_status rw_parse_fail(const char *path, long long line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
