/* Communication matrix reader and writer (format: docs/formats.md,
 * "Communication matrix"). Header lines are a keyword and fields; data
 * lines are four integers "src dst msgs bytes". A job of 262,144 ranks
 * with 7 neighbours is ~1.8 million data lines, so the data path neither
 * tokenises with strtok nor allocates per line: integers are parsed in
 * place and triplets go into arrays that double when full. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 8
#define TEXT_MAX 255 /* source / pattern, as in rw_matrix */
/* Entries allocated up front from 'nonzeros': a ten-byte file claiming
 * billions must not take gigabytes before its truncation is noticed;
 * beyond this the arrays double as lines come. */
#define PREALLOC_MAX (1 << 20)

/* ------------------------------------------------------------------ write */

/* Decimal digits of v (>= 0) at p; returns the end. */
static char *put_int(char *p, int64_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static int write_body(const rw_matrix *m, FILE *f)
{
    fprintf(f, "rankwise-matrix %d\n", RW_MATRIX_FORMAT_VERSION);
    fprintf(f, "ranks %d\n", m->n_ranks);
    if (m->source[0])
        fprintf(f, "source %s\n", m->source);
    if (m->pattern[0])
        fprintf(f, "pattern %s\n", m->pattern);
    fprintf(f, "nonzeros %lld\n", (long long)m->nnz);
    fprintf(f, "# src dst msgs bytes\n");
    /* fprintf would dominate the cost of a large matrix: format by hand
     * into a block and write whole blocks. */
    char buf[1 << 16];
    size_t used = 0;
    for (int32_t i = 0; i < m->n_ranks; i++)
        for (int64_t k = m->row_start[i]; k < m->row_start[i + 1]; k++) {
            if (used > sizeof buf - 96) {
                if (fwrite(buf, 1, used, f) != used)
                    return -1;
                used = 0;
            }
            char *p = buf + used;
            p = put_int(p, i);
            *p++ = ' ';
            p = put_int(p, m->dst[k]);
            *p++ = ' ';
            p = put_int(p, m->msgs[k]);
            *p++ = ' ';
            p = put_int(p, m->bytes[k]);
            *p++ = '\n';
            used = (size_t)(p - buf);
        }
    if (used && fwrite(buf, 1, used, f) != used)
        return -1;
    return ferror(f) ? -1 : 0;
}

/* The text rule every reader applies (internal.h, rw_text_problem). */
static rw_status check_text(const char *path, const char *what, const char *text, size_t cap)
{
    if (!memchr(text, '\0', cap))
        return rw_fail(RW_ERR_ARG, "%s: cannot write: matrix %s is not terminated", path, what);
    const char *why = rw_text_problem(text, strlen(text));
    if (why)
        return rw_fail(RW_ERR_ARG, "%s: cannot write: matrix %s %s", path, what, why);
    return RW_OK;
}

static int write_matrix_body(const void *m, FILE *f) { return write_body(m, f); }

rw_status rw_matrix_write_stream(const rw_matrix *m, FILE *f, const char *path)
{
    rw_status st;
    if ((st = check_text(path, "source", m->source, sizeof m->source)) ||
        (st = check_text(path, "pattern", m->pattern, sizeof m->pattern)))
        return st;
    return write_body(m, f) ? rw_fail(RW_ERR_IO, "%s: cannot write", path) : RW_OK;
}

rw_status rw_matrix_write(const rw_matrix *m, const char *path)
{
    rw_status st;
    if ((st = check_text(path, "source", m->source, sizeof m->source)) ||
        (st = check_text(path, "pattern", m->pattern, sizeof m->pattern)))
        return st;
    return rw_write_atomic(path, write_matrix_body, m);
}

/* ------------------------------------------------------------------- read */

typedef struct reader {
    const char *path;
    int64_t line;
} reader;

#define parse_error(r, ...) rw_parse_fail((r)->path, (long long)(r)->line, __VA_ARGS__)

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static char *skip_blanks(char *p)
{
    while (is_blank(*p))
        p++;
    return p;
}

/* Next field at *p (up to a blank, '#' or the end); NULL when none. */
static char *next_field(char **p, size_t *len)
{
    char *s = skip_blanks(*p), *e = s;
    while (*e && !is_blank(*e) && *e != '#')
        e++;
    *p = e;
    *len = (size_t)(e - s);
    return *len ? s : NULL;
}

/* A decimal integer in [lo, hi] made of digits only (no sign, no
 * spaces): what the writer produces, checked without strtoll's locale and
 * errno round trip. */
static rw_status parse_int(const reader *r, const char *name, const char *s, size_t len,
                           int64_t lo, int64_t hi, int64_t *out)
{
    int64_t v = 0;
    size_t k = 0;
    for (; k < len && s[k] >= '0' && s[k] <= '9'; k++) {
        int d = s[k] - '0';
        if (d > hi || v > (hi - d) / 10) { /* above hi, checked before it can overflow */
            k = len + 1;
            break;
        }
        v = v * 10 + d;
    }
    if (len == 0 || k != len || v < lo) {
        int shown = len > 40 ? 40 : (int)len;
        return parse_error(r, "%s ('%.*s%s') must be an integer in [%lld, %lld]", name, shown, s,
                           len > 40 ? "..." : "", (long long)lo, (long long)hi);
    }
    *out = v;
    return RW_OK;
}

/* Triplets as read, before rw_matrix_create sorts and merges them. */
typedef struct triplets {
    int64_t n, cap;
    int32_t *src, *dst;
    int64_t *msgs, *bytes;
    int64_t total_msgs, total_bytes;
} triplets;

static int grow(triplets *t, int64_t want)
{
    if (want <= t->cap)
        return 0;
    int64_t cap = t->cap ? t->cap : 4096;
    while (cap < want)
        cap *= 2;
    void *a = realloc(t->src, (size_t)cap * sizeof *t->src);
    if (!a)
        return -1;
    t->src = a;
    if (!(a = realloc(t->dst, (size_t)cap * sizeof *t->dst)))
        return -1;
    t->dst = a;
    if (!(a = realloc(t->msgs, (size_t)cap * sizeof *t->msgs)))
        return -1;
    t->msgs = a;
    if (!(a = realloc(t->bytes, (size_t)cap * sizeof *t->bytes)))
        return -1;
    t->bytes = a;
    t->cap = cap;
    return 0;
}

static rw_status parse_data_line(const reader *r, char *p, int32_t n_ranks, triplets *t)
{
    static const char *const names[4] = {"src", "dst", "msgs", "bytes"};
    int64_t v[4];
    for (int f = 0; f < 4; f++) {
        size_t len;
        char *s = next_field(&p, &len);
        if (!s)
            return parse_error(r, "a data line has 4 fields (src dst msgs bytes), found %d", f);
        rw_status st = parse_int(r, names[f], s, len, 0, f < 2 ? n_ranks - 1 : INT64_MAX, &v[f]);
        if (st)
            return st;
    }
    p = skip_blanks(p);
    if (*p && *p != '#')
        return parse_error(r, "a data line has 4 fields (src dst msgs bytes), found more");
    if (v[2] > INT64_MAX - t->total_msgs || v[3] > INT64_MAX - t->total_bytes)
        return parse_error(r, "total %s exceed 64 bits",
                           v[2] > INT64_MAX - t->total_msgs ? "messages" : "bytes");
    if (t->n == t->cap && grow(t, t->n + 1))
        return rw_fail(RW_ERR_NOMEM, "%s: out of memory after %lld data lines", r->path,
                       (long long)t->n);
    t->src[t->n] = (int32_t)v[0];
    t->dst[t->n] = (int32_t)v[1];
    t->msgs[t->n] = v[2];
    t->bytes[t->n] = v[3];
    t->n++;
    t->total_msgs += v[2];
    t->total_bytes += v[3];
    return RW_OK;
}

/* Everything before the data lines. */
typedef struct header {
    int seen_magic;
    int32_t n_ranks; /* 0 until "ranks" */
    int64_t nonzeros; /* -1 unless "nonzeros" */
    int64_t nonzeros_line;
    char source[TEXT_MAX + 1], pattern[TEXT_MAX + 1];
    int has_source, has_pattern;
} header;

/* source / pattern: the rest of the line, '#' included, blanks trimmed. */
static rw_status parse_text(const reader *r, const char *kw, char *rest, char *out, int *seen)
{
    if (*seen)
        return parse_error(r, "'%s' given twice", kw);
    rest = skip_blanks(rest);
    size_t len = strlen(rest);
    while (len && is_blank(rest[len - 1]))
        len--;
    if (len == 0)
        return parse_error(r, "'%s' needs a text", kw);
    if (len > TEXT_MAX)
        return parse_error(r, "'%s' text is longer than %d characters", kw, TEXT_MAX);
    const char *why = rw_text_problem(rest, len);
    if (why)
        return parse_error(r, "'%s' text %s", kw, why);
    memcpy(out, rest, len);
    out[len] = '\0';
    *seen = 1;
    return RW_OK;
}

/* Split at blanks into NUL-terminated fields, stopping at '#'. Returns
 * the number of fields, -1 when there are more than max. */
static int split_fields(char *p, char **fields, int max)
{
    int n = 0;
    for (;;) {
        p = skip_blanks(p);
        if (*p == '\0' || *p == '#')
            return n;
        if (n == max)
            return -1;
        fields[n++] = p;
        while (*p && !is_blank(*p) && *p != '#')
            p++;
        if (*p == '#') {
            *p = '\0';
            return n;
        }
        if (*p)
            *p++ = '\0';
    }
}

static rw_status parse_header_line(const reader *r, char *line, header *h)
{
    char *kw_end = line;
    while (*kw_end && !is_blank(*kw_end) && *kw_end != '#')
        kw_end++;
    size_t kw_len = (size_t)(kw_end - line);
    if (kw_len == 6 && memcmp(line, "source", 6) == 0)
        return parse_text(r, "source", kw_end, h->source, &h->has_source);
    if (kw_len == 7 && memcmp(line, "pattern", 7) == 0)
        return parse_text(r, "pattern", kw_end, h->pattern, &h->has_pattern);

    char *fields[MAX_FIELDS];
    int nf = split_fields(line, fields, MAX_FIELDS);
    if (nf < 0)
        return parse_error(r, "too many fields");
    const char *kw = fields[0];
    int64_t v;
    rw_status st;
    if (strcmp(kw, "rankwise-matrix") == 0)
        return parse_error(r, "'rankwise-matrix' given twice");
    if (strcmp(kw, "ranks") == 0) {
        if (h->n_ranks)
            return parse_error(r, "'ranks' given twice");
        if (nf != 2)
            return parse_error(r, "'ranks' takes 1 field, found %d", nf - 1);
        if ((st = parse_int(r, "ranks", fields[1], strlen(fields[1]), 1, RW_MATRIX_MAX_RANKS, &v)))
            return st;
        h->n_ranks = (int32_t)v;
    } else if (strcmp(kw, "nonzeros") == 0) {
        if (h->nonzeros >= 0)
            return parse_error(r, "'nonzeros' given twice");
        if (nf != 2)
            return parse_error(r, "'nonzeros' takes 1 field, found %d", nf - 1);
        if ((st = parse_int(r, "nonzeros", fields[1], strlen(fields[1]), 0, INT64_MAX, &v)))
            return st;
        h->nonzeros = v;
        h->nonzeros_line = r->line;
    } else {
        return parse_error(r, "unknown keyword '%s'", kw);
    }
    return RW_OK;
}

static rw_status check_magic(const reader *r, char *line)
{
    char *p = line;
    size_t len, vlen;
    char *kw = next_field(&p, &len);
    char *ver = next_field(&p, &vlen);
    size_t extra;
    int64_t v;
    if (len != 15 || memcmp(kw, "rankwise-matrix", 15) != 0 || !ver || next_field(&p, &extra))
        return parse_error(r, "not a rankwise communication matrix (expected 'rankwise-matrix %d')",
                           RW_MATRIX_FORMAT_VERSION);
    rw_status st = parse_int(r, "the format version", ver, vlen, 1, 1000, &v);
    if (st)
        return st;
    if (v > RW_MATRIX_FORMAT_VERSION)
        return parse_error(r, "matrix format version %lld is newer than this rankwise (%d)",
                           (long long)v, RW_MATRIX_FORMAT_VERSION);
    return RW_OK;
}

static rw_status read_stream(FILE *f, reader *r, header *h, triplets *t)
{
    char *line = NULL;
    size_t cap = 0;
    rw_status st = RW_OK;
    ssize_t got;
    while ((got = getline(&line, &cap, f)) != -1) {
        r->line++;
        if (memchr(line, '\0', (size_t)got)) {
            st = parse_error(r, "a NUL byte (not a text file)");
            break;
        }
        char *p = skip_blanks(line);
        if (*p == '\0' || *p == '#')
            continue;
        if (!h->seen_magic) {
            if ((st = check_magic(r, p)))
                break;
            h->seen_magic = 1;
        } else if ((*p >= '0' && *p <= '9') || *p == '-' || *p == '+') {
            if (!h->n_ranks) {
                st = parse_error(r, "data line before 'ranks'");
                break;
            }
            if (t->n == 0 && h->nonzeros > 0 && grow(t, h->nonzeros < PREALLOC_MAX ? h->nonzeros : PREALLOC_MAX)) {
                st = rw_fail(RW_ERR_NOMEM, "%s: out of memory", r->path);
                break;
            }
            if ((st = parse_data_line(r, p, h->n_ranks, t)))
                break;
        } else if (t->n > 0) {
            char *end = p;
            while (*end && !is_blank(*end))
                end++;
            *end = '\0';
            st = parse_error(r, "'%s' after the data lines (header lines come first)", p);
            break;
        } else if ((st = parse_header_line(r, p, h))) {
            break;
        }
    }
    free(line);
    if (st)
        return st;
    if (ferror(f))
        return rw_fail(RW_ERR_IO, "%s: cannot read: %s", r->path, strerror(errno));
    if (!h->seen_magic)
        return parse_error(r, "empty file, not a rankwise communication matrix");
    if (!h->n_ranks)
        return parse_error(r, "no 'ranks' line");
    if (h->nonzeros >= 0 && h->nonzeros != t->n)
        return parse_error(r, "'nonzeros %lld' (line %lld) but %lld data lines: truncated file?",
                           (long long)h->nonzeros, (long long)h->nonzeros_line, (long long)t->n);
    return RW_OK;
}

rw_status rw_matrix_read_stream(FILE *f, const char *path, rw_matrix **out)
{
    *out = NULL;
    reader r = {.path = path};
    header h = {.nonzeros = -1};
    triplets t = {0};
    rw_status st = read_stream(f, &r, &h, &t);
    if (!st && (st = rw_matrix_create(h.n_ranks, t.n, t.src, t.dst, t.msgs, t.bytes, out)) == RW_OK) {
        memcpy((*out)->source, h.source, sizeof h.source);
        memcpy((*out)->pattern, h.pattern, sizeof h.pattern);
    }
    free(t.src);
    free(t.dst);
    free(t.msgs);
    free(t.bytes);
    return st;
}

rw_status rw_matrix_read(const char *path, rw_matrix **out)
{
    *out = NULL;
    rw_status st;
    FILE *f = rw_open_text(path, &st);
    if (!f)
        return st;
    st = rw_matrix_read_stream(f, path, out);
    fclose(f);
    return st;
}
