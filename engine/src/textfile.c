/* What every text file of the engine shares: atomic writing and
 * "path:line: message" errors. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

rw_status rw_write_atomic(const char *path, rw_body_writer body, const void *obj)
{
    size_t len = strlen(path);
    char *tmp = malloc(len + 32);
    if (!tmp)
        return rw_fail(RW_ERR_NOMEM, "out of memory");
    snprintf(tmp, len + 32, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        rw_status st = rw_fail(RW_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
        free(tmp);
        return st;
    }
    int bad = body(obj, f) != 0;
    bad |= fflush(f) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        rw_status st = rw_fail(RW_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return st;
    }
    free(tmp);
    return RW_OK;
}

rw_status rw_parse_fail(const char *path, long long line, const char *fmt, ...)
{
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rw_fail(RW_ERR_PARSE, "%s:%lld: %s", path, line, msg);
}
