/* What every text file of the engine shares: atomic writing and
 * "path:line: message" errors. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

FILE *rw_open_text(const char *path, rw_status *st)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        *st = rw_fail(RW_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat info;
    if (fstat(fileno(f), &info) == 0 && S_ISDIR(info.st_mode)) {
        fclose(f);
        *st = rw_fail(RW_ERR_IO, "%s: cannot open: it is a directory, not a file", path);
        return NULL;
    }
    return f;
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

size_t rw_utf8_sequence(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xBF; /* range of the second byte */
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        len = 2;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        len = 3;
        if (s[0] == 0xE0)
            lo = 0xA0;
        else if (s[0] == 0xED)
            hi = 0x9F;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        len = 4;
        if (s[0] == 0xF0)
            lo = 0x90;
        else if (s[0] == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t k = 2; k < len; k++)
        if (s[k] < 0x80 || s[k] > 0xBF)
            return 0;
    return len;
}

const char *rw_text_problem(const char *text, size_t len)
{
    static _Thread_local char why[64];
    const unsigned char *s = (const unsigned char *)text;
    if (len > RW_TEXT_MAX)
        return "is longer than 255 bytes";
    if (len && (s[0] == ' ' || s[len - 1] == ' '))
        return "starts or ends with blanks";
    for (size_t k = 0; k < len;) {
        if (s[k] < 0x20 || s[k] == 0x7F) {
            snprintf(why, sizeof why, "holds a %s (0x%02x)",
                     s[k] == '\n' || s[k] == '\r' ? "line break" : "control character", s[k]);
            return why;
        }
        size_t step = rw_utf8_sequence(s + k, len - k);
        if (!step)
            return "is not valid UTF-8";
        k += step;
    }
    return NULL;
}

const char *rw_name_problem(const char *name)
{
    size_t len = strnlen(name, RW_TEXT_MAX + 1);
    if (len == 0)
        return "is empty";
    const char *why = rw_text_problem(name, len);
    if (why)
        return why;
    if (strpbrk(name, " #"))
        return "holds a blank or '#'";
    return NULL;
}

void rw_text_clean(char *text)
{
    unsigned char *s = (unsigned char *)text;
    size_t len = strlen(text), out = 0;
    for (size_t k = 0; k < len;) {
        size_t step = s[k] < 0x20 || s[k] == 0x7F ? 0 : rw_utf8_sequence(s + k, len - k);
        size_t take = step ? step : 1;
        if (out + take > RW_TEXT_MAX)
            break;
        if (step)
            memmove(s + out, s + k, step);
        else
            s[out] = s[k] < 0x20 || s[k] == 0x7F ? ' ' : '?';
        out += take;
        k += take;
    }
    while (out && s[out - 1] == ' ')
        out--;
    s[out] = '\0';
    size_t lead = 0;
    while (s[lead] == ' ')
        lead++;
    memmove(s, s + lead, out - lead + 1);
}
