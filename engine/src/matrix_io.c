/* Communication matrix reader and writer (format: docs/reference/formats.md,
 * "Communication matrix"). Header lines are a keyword and fields; data
 * lines are four integers "src dst msgs bytes". A job of 262,144 ranks
 * with 7 neighbours is ~1.8 million data lines, so the data path neither
 * tokenises with strtok nor allocates per line: integers are parsed in
 * place and triplets go into arrays that double when full. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include "coll/registry.h"

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

/* Members of a communicator, runs of 3 or more consecutive ascending
 * ranks as A-B (a communicator split by rows is a few ranges). */
static void write_members(FILE *f, const int32_t *ranks, int64_t size)
{
    for (int64_t k = 0; k < size;) {
        int64_t e = k;
        while (e + 1 < size && ranks[e + 1] == ranks[e] + 1)
            e++;
        if (e - k >= 2) {
            fprintf(f, " %d-%d", ranks[k], ranks[e]);
            k = e + 1;
        } else {
            fprintf(f, " %d", ranks[k++]);
        }
    }
}

static int write_collectives(const rw_matrix *m, FILE *f)
{
    for (int32_t c = 0; c < m->n_comms; c++) {
        fprintf(f, "comm %d", c);
        write_members(f, m->comm_ranks + m->comm_start[c], m->comm_start[c + 1] - m->comm_start[c]);
        fputc('\n', f);
    }
    if (m->n_colls)
        fprintf(f, "# coll op bytes calls root comm\n");
    for (int64_t k = 0; k < m->n_colls; k++) {
        const rw_coll_call *x = &m->colls[k];
        const char *name = rw_coll_op_name(x->op);
        if (!name)
            return -1;
        fprintf(f, "coll %s %lld %lld %d ", name, (long long)x->bytes, (long long)x->calls, x->root);
        if (x->comm < 0)
            fprintf(f, "world\n");
        else
            fprintf(f, "%d\n", x->comm);
    }
    if (m->colls_dropped)
        fprintf(f, "coll-dropped %lld\n", (long long)m->colls_dropped);
    return ferror(f) ? -1 : 0;
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
    if (write_collectives(m, f))
        return -1;
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
/* Communicators and collective calls as read (header lines). */
typedef struct coll_lines {
    int32_t n_comms, cap_comms;
    int64_t *start;          /* n_comms + 1 */
    int64_t n_members, cap_members;
    int32_t *members;
    int64_t n_calls, cap_calls;
    rw_coll_call *calls;
    int64_t dropped;         /* -1 until "coll-dropped" */
    uint8_t *seen;           /* n_ranks bits, for repeated members */
} coll_lines;

static void coll_lines_free(coll_lines *c)
{
    free(c->start);
    free(c->members);
    free(c->calls);
    free(c->seen);
}

typedef struct header {
    int seen_magic;
    int64_t version;
    int32_t n_ranks; /* 0 until "ranks" */
    int64_t nonzeros; /* -1 unless "nonzeros" */
    int64_t nonzeros_line;
    char source[TEXT_MAX + 1], pattern[TEXT_MAX + 1];
    int has_source, has_pattern;
    coll_lines coll;
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

static int grow_array(void **p, int64_t *cap, int64_t want, size_t item)
{
    if (want <= *cap)
        return 0;
    int64_t n = *cap ? *cap : 16;
    while (n < want)
        n *= 2;
    void *a = realloc(*p, (size_t)n * item);
    if (!a)
        return -1;
    *p = a;
    *cap = n;
    return 0;
}

static rw_status need_version_2(const reader *r, const header *h, const char *kw)
{
    if (h->version < 2)
        return parse_error(r, "'%s' needs matrix format version 2 (the file says %lld)", kw,
                           (long long)h->version);
    if (!h->n_ranks)
        return parse_error(r, "'%s' before 'ranks'", kw);
    return RW_OK;
}

/* comm ID MEMBER...: members R or A-B (A < B, both included), IDs 0, 1, 2,
 * ... in order. */
static rw_status parse_comm(const reader *r, char *p, header *h)
{
    coll_lines *c = &h->coll;
    rw_status st;
    size_t len;
    int64_t id, a, b;
    char *s = next_field(&p, &len);
    if (!s)
        return parse_error(r, "'comm' needs an ID and its members");
    if ((st = parse_int(r, "the communicator ID", s, len, 0, INT32_MAX - 1, &id)))
        return st;
    if (id != c->n_comms)
        return parse_error(r, "communicator %lld: IDs count 0, 1, 2, ... in order (expected %d)",
                           (long long)id, c->n_comms);
    if (!c->seen && !(c->seen = calloc((size_t)h->n_ranks / 8 + 1, 1)))
        return rw_fail(RW_ERR_NOMEM, "%s: out of memory", r->path);
    int64_t cap = c->cap_comms;
    if (grow_array((void **)&c->start, &cap, (int64_t)c->n_comms + 2, sizeof *c->start))
        return rw_fail(RW_ERR_NOMEM, "%s: out of memory", r->path);
    c->cap_comms = (int32_t)(cap < INT32_MAX ? cap : INT32_MAX);
    c->start[c->n_comms] = c->n_members;
    int64_t first = c->n_members;
    while ((s = next_field(&p, &len))) {
        char *dash = memchr(s, '-', len);
        size_t la = dash ? (size_t)(dash - s) : len;
        if ((st = parse_int(r, "a member", s, la, 0, h->n_ranks - 1, &a)))
            return st;
        b = a;
        if (dash) {
            if ((st = parse_int(r, "a member", dash + 1, len - la - 1, 0, h->n_ranks - 1, &b)))
                return st;
            if (b <= a)
                return parse_error(r, "member range %lld-%lld must go up", (long long)a, (long long)b);
        }
        if (b - a + 1 > RW_MATRIX_MAX_RANKS - c->n_members)
            return parse_error(r, "the communicators hold more than %d members in all",
                               RW_MATRIX_MAX_RANKS);
        if (grow_array((void **)&c->members, &c->cap_members, c->n_members + (b - a + 1),
                       sizeof *c->members))
            return rw_fail(RW_ERR_NOMEM, "%s: out of memory", r->path);
        for (int64_t v = a; v <= b; v++)
            c->members[c->n_members++] = (int32_t)v;
    }
    if (c->n_members == first) /* (before an empty list's pointer is touched) */
        return parse_error(r, "communicator %lld has no member", (long long)id);
    if ((st = rw_coll_check_members(h->n_ranks, (int32_t)id, c->members + first, c->n_members - first,
                                    c->seen)))
        return parse_error(r, "%s", rw_last_error());
    c->n_comms++;
    c->start[c->n_comms] = c->n_members;
    return RW_OK;
}

/* coll OP BYTES CALLS ROOT COMM: COMM a communicator ID or `world`. */
static rw_status parse_coll(const reader *r, char *line, header *h)
{
    coll_lines *c = &h->coll;
    char *f[7];
    int nf = split_fields(line, f, 7);
    if (nf < 0)
        return parse_error(r, "'coll' takes 5 fields (op bytes calls root comm), found more");
    if (nf != 6)
        return parse_error(r, "'coll' takes 5 fields (op bytes calls root comm), found %d", nf - 1);
    rw_coll_call x = {.op = rw_coll_op_from_name(f[1])};
    char known[160];
    if (x.op < 0)
        return parse_error(r, "unknown collective '%.40s' (%s)", f[1],
                           rw_op_names(known, sizeof known, RW_OPS_ALL, ", "));
    int64_t v;
    rw_status st;
    if ((st = parse_int(r, "bytes", f[2], strlen(f[2]), 0, INT64_MAX, &x.bytes)) ||
        (st = parse_int(r, "calls", f[3], strlen(f[3]), 1, INT64_MAX, &x.calls)) ||
        (st = parse_int(r, "root", f[4], strlen(f[4]), 0, RW_MATRIX_MAX_RANKS - 1, &v)))
        return st;
    x.root = (int32_t)v;
    if (!strcmp(f[5], "world"))
        x.comm = -1;
    else if (c->n_comms == 0)
        return parse_error(r, "comm ('%.40s') must be 'world' (no 'comm' line before)", f[5]);
    else if ((st = parse_int(r, "comm", f[5], strlen(f[5]), 0, c->n_comms - 1, &v)))
        return st;
    else
        x.comm = (int32_t)v;
    if ((st = rw_coll_check_call(c->n_calls, &x, c->n_comms, c->start, h->n_ranks)))
        return parse_error(r, "%s", rw_last_error());
    if (grow_array((void **)&c->calls, &c->cap_calls, c->n_calls + 1, sizeof *c->calls))
        return rw_fail(RW_ERR_NOMEM, "%s: out of memory", r->path);
    c->calls[c->n_calls++] = x;
    return RW_OK;
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
    rw_status st;
    if (kw_len == 4 && memcmp(line, "comm", 4) == 0)
        return (st = need_version_2(r, h, "comm")) ? st : parse_comm(r, kw_end, h);
    if (kw_len == 4 && memcmp(line, "coll", 4) == 0)
        return (st = need_version_2(r, h, "coll")) ? st : parse_coll(r, line, h);

    char *fields[MAX_FIELDS];
    int nf = split_fields(line, fields, MAX_FIELDS);
    if (nf < 0)
        return parse_error(r, "too many fields");
    const char *kw = fields[0];
    int64_t v;
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
    } else if (strcmp(kw, "coll-dropped") == 0) {
        if ((st = need_version_2(r, h, kw)))
            return st;
        if (h->coll.dropped >= 0)
            return parse_error(r, "'coll-dropped' given twice");
        if (nf != 2)
            return parse_error(r, "'coll-dropped' takes 1 field, found %d", nf - 1);
        if ((st = parse_int(r, "coll-dropped", fields[1], strlen(fields[1]), 0, INT64_MAX, &v)))
            return st;
        h->coll.dropped = v;
    } else {
        return parse_error(r, "unknown keyword '%s'", kw);
    }
    return RW_OK;
}

static rw_status check_magic(const reader *r, char *line, int64_t *version)
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
    *version = v;
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
            if ((st = check_magic(r, p, &h->version)))
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
    header h = {.nonzeros = -1, .coll = {.dropped = -1}};
    triplets t = {0};
    rw_status st = read_stream(f, &r, &h, &t);
    if (!st && (st = rw_matrix_create(h.n_ranks, t.n, t.src, t.dst, t.msgs, t.bytes, out)) == RW_OK) {
        memcpy((*out)->source, h.source, sizeof h.source);
        memcpy((*out)->pattern, h.pattern, sizeof h.pattern);
        coll_lines *c = &h.coll;
        /* Every line was checked: what remains is memory, or equal groups
         * whose calls add up beyond 64 bits. */
        if ((c->n_calls || c->dropped > 0) &&
            (st = rw_matrix_set_collectives(*out, c->n_comms, c->start, c->members, c->n_calls,
                                            c->calls, c->dropped > 0 ? c->dropped : 0))) {
            char why[512];
            snprintf(why, sizeof why, "%s", rw_last_error());
            st = rw_fail(st, "%s: %s", path, why);
            rw_matrix_free(*out);
            *out = NULL;
        }
    }
    coll_lines_free(&h.coll);
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
