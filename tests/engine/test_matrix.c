/* The communication matrix: building from COO triplets, accessors,
 * symmetrisation, the file format and every way a file or an input can be
 * refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "rankwise.h"

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

#define CHECK_MSG(text)                                                                  \
    do {                                                                                 \
        if (!strstr(rw_last_error(), (text))) {                                          \
            fprintf(stderr, "%s:%d: message '%s' lacks '%s'\n", __FILE__, __LINE__,      \
                    rw_last_error(), (text));                                            \
            check_failures++;                                                            \
        }                                                                                \
    } while (0)

/* 4 ranks, unsorted triplets with duplicates, a zero-byte message, a
 * self-message and one pair that sums to nothing. */
static rw_matrix *sample(void)
{
    int32_t src[] = {2, 0, 1, 0, 2, 3, 0, 1, 3};
    int32_t dst[] = {1, 3, 0, 1, 1, 3, 1, 2, 0};
    int64_t msgs[] = {1, 4, 2, 1, 2, 1, 1, 3, 0};
    int64_t bytes[] = {100, 40, 0, 10, 200, 8, 5, 30, 0};
    rw_matrix *m = NULL;
    CHECK(rw_matrix_create(4, 9, src, dst, msgs, bytes, &m) == RW_OK);
    return m;
}

static void check_create(void)
{
    rw_matrix *m = sample();
    if (!m)
        return;
    /* Rows: 0 -> {1: (2, 15), 3: (4, 40)}, 1 -> {0: (2, 0), 2: (3, 30)},
     * 2 -> {1: (3, 300)}, 3 -> {3: (1, 8)}; (3, 0) held nothing. */
    CHECK(m->n_ranks == 4 && m->nnz == 6);
    int64_t want_start[] = {0, 2, 4, 5, 6};
    int32_t want_dst[] = {1, 3, 0, 2, 1, 3};
    int64_t want_msgs[] = {2, 4, 2, 3, 3, 1};
    int64_t want_bytes[] = {15, 40, 0, 30, 300, 8};
    for (int i = 0; i <= 4; i++)
        CHECK(m->row_start[i] == want_start[i]);
    for (int k = 0; k < 6; k++)
        CHECK(m->dst[k] == want_dst[k] && m->msgs[k] == want_msgs[k] && m->bytes[k] == want_bytes[k]);
    CHECK(rw_matrix_total_msgs(m) == 15 && rw_matrix_total_bytes(m) == 393);
    CHECK(m->source[0] == '\0' && m->pattern[0] == '\0');

    int64_t msgs = -1, bytes = -1;
    CHECK(rw_matrix_get(m, 2, 1, &msgs, &bytes) == RW_OK && msgs == 3 && bytes == 300);
    CHECK(rw_matrix_get(m, 1, 0, &msgs, &bytes) == RW_OK && msgs == 2 && bytes == 0);
    CHECK(rw_matrix_get(m, 3, 0, &msgs, NULL) == RW_OK && msgs == 0);
    CHECK(rw_matrix_get(m, 0, 4, &msgs, &bytes) == RW_ERR_ARG);
    CHECK_MSG("rank pair 0 -> 4 is not in a matrix of 4 ranks");
    CHECK(rw_matrix_find(m, 0, 3) == 1 && rw_matrix_find(m, 0, 2) == -1);
    CHECK(rw_matrix_find(m, -1, 0) == -1 && rw_matrix_find(m, 3, 3) == 5);
    CHECK(rw_matrix_out_degree(m, 0) == 2 && rw_matrix_out_degree(m, 3) == 1);
    CHECK(rw_matrix_out_degree(m, 9) == 0);

    /* Symmetrised: (0,1) = (2+0+..) both ways; the self-message 3 -> 3 is gone. */
    rw_matrix *s = NULL;
    CHECK(rw_matrix_symmetrize(m, &s) == RW_OK);
    if (s) {
        /* pairs: {0,1}: 0->1 (2,15) + 1->0 (2,0) = (4,15); {0,3}: (4,40);
         * {1,2}: 1->2 (3,30) + 2->1 (3,300) = (6,330). */
        CHECK(s->nnz == 6);
        CHECK(rw_matrix_get(s, 0, 1, &msgs, &bytes) == RW_OK && msgs == 4 && bytes == 15);
        CHECK(rw_matrix_get(s, 1, 0, &msgs, &bytes) == RW_OK && msgs == 4 && bytes == 15);
        CHECK(rw_matrix_get(s, 3, 0, &msgs, &bytes) == RW_OK && msgs == 4 && bytes == 40);
        CHECK(rw_matrix_get(s, 2, 1, &msgs, &bytes) == RW_OK && msgs == 6 && bytes == 330);
        CHECK(rw_matrix_find(s, 3, 3) == -1);
        CHECK(rw_matrix_total_bytes(s) == 2 * (393 - 8));
        rw_matrix_free(s);
    }
    rw_matrix_free(m);

    /* Sorted input takes the copy path and still merges duplicates. */
    int32_t ss[] = {0, 0, 0, 1}, sd[] = {1, 1, 2, 0};
    int64_t sm[] = {1, 1, 0, 1}, sb[] = {8, 8, 0, 4};
    CHECK(rw_matrix_create(2, 4, ss, sd, sm, sb, &m) == RW_ERR_ARG); /* dst 2 of 2 ranks */
    CHECK_MSG("entry 2: destination rank 2 is not in [0, 2)");
    sd[2] = 0;
    CHECK(rw_matrix_create(2, 4, ss, sd, sm, sb, &m) == RW_OK);
    if (m) {
        CHECK(m->nnz == 2 && m->row_start[1] == 1 && m->msgs[0] == 2 && m->bytes[0] == 16);
        rw_matrix_free(m);
    }

    /* A matrix without traffic is valid: every row empty. */
    CHECK(rw_matrix_create(3, 0, NULL, NULL, NULL, NULL, &m) == RW_OK);
    if (m) {
        CHECK(m->nnz == 0 && m->row_start[3] == 0 && rw_matrix_total_bytes(m) == 0);
        rw_matrix_free(m);
    }
}

static void check_create_errors(void)
{
    int32_t src[] = {0, 1}, dst[] = {1, 0};
    int64_t msgs[] = {1, 1}, bytes[] = {10, 10};
    rw_matrix *m = (rw_matrix *)1;
    CHECK(rw_matrix_create(0, 0, NULL, NULL, NULL, NULL, &m) == RW_ERR_ARG && m == NULL);
    CHECK_MSG("needs 1 to 67108864 ranks (got 0)");
    CHECK(rw_matrix_create(RW_MATRIX_MAX_RANKS + 1, 0, NULL, NULL, NULL, NULL, &m) == RW_ERR_ARG);
    CHECK(rw_matrix_create(2, -1, src, dst, msgs, bytes, &m) == RW_ERR_ARG);
    CHECK_MSG("negative number of entries");
    CHECK(rw_matrix_create(2, 2, src, NULL, msgs, bytes, &m) == RW_ERR_ARG);
    CHECK_MSG("missing src, dst, msgs or bytes");
    src[1] = 2;
    CHECK(rw_matrix_create(2, 2, src, dst, msgs, bytes, &m) == RW_ERR_ARG);
    CHECK_MSG("entry 1: source rank 2 is not in [0, 2)");
    src[1] = 1;
    dst[0] = -1;
    CHECK(rw_matrix_create(2, 2, src, dst, msgs, bytes, &m) == RW_ERR_ARG);
    CHECK_MSG("entry 0: destination rank -1 is not in [0, 2)");
    dst[0] = 1;
    msgs[1] = -3;
    CHECK(rw_matrix_create(2, 2, src, dst, msgs, bytes, &m) == RW_ERR_ARG);
    CHECK_MSG("entry 1 (1 -> 0): negative message count -3");
    msgs[1] = 1;
    bytes[0] = -1;
    CHECK(rw_matrix_create(2, 2, src, dst, msgs, bytes, &m) == RW_ERR_ARG);
    CHECK_MSG("entry 0 (0 -> 1): negative byte volume -1");
    bytes[0] = INT64_MAX;
    bytes[1] = 1;
    CHECK(rw_matrix_create(2, 2, src, dst, msgs, bytes, &m) == RW_ERR_ARG);
    CHECK_MSG("entry 1: total bytes exceed 64 bits");

    /* Fits once, but not twice: symmetrising is refused, not wrapped. */
    bytes[1] = 0;
    CHECK(rw_matrix_create(2, 2, src, dst, msgs, bytes, &m) == RW_OK);
    rw_matrix *s = (rw_matrix *)1;
    CHECK(rw_matrix_symmetrize(m, &s) == RW_ERR_ARG && s == NULL);
    CHECK_MSG("too large to symmetrise");
    rw_matrix_free(m);
}

static void check_round_trip(void)
{
    rw_matrix *m = sample(), *r = NULL;
    if (!m)
        return;
    snprintf(m->source, sizeof m->source, "pmpi:./app -n 4 # run 3");
    snprintf(m->pattern, sizeof m->pattern, "ring:ranks=4,bytes=1K");
    CHECK(rw_matrix_write(m, "rt.rwc") == RW_OK);
    const char *text = read_all("rt.rwc");
    CHECK(text && strcmp(text, "rankwise-matrix 2\n"
                               "ranks 4\n"
                               "source pmpi:./app -n 4 # run 3\n"
                               "pattern ring:ranks=4,bytes=1K\n"
                               "nonzeros 6\n"
                               "# src dst msgs bytes\n"
                               "0 1 2 15\n0 3 4 40\n1 0 2 0\n1 2 3 30\n2 1 3 300\n3 3 1 8\n") == 0);
    CHECK(rw_matrix_read("rt.rwc", &r) == RW_OK);
    if (r) {
        CHECK(r->n_ranks == 4 && r->nnz == m->nnz);
        for (int i = 0; i <= 4; i++)
            CHECK(r->row_start[i] == m->row_start[i]);
        for (int64_t k = 0; k < m->nnz; k++)
            CHECK(r->dst[k] == m->dst[k] && r->msgs[k] == m->msgs[k] && r->bytes[k] == m->bytes[k]);
        CHECK(strcmp(r->source, m->source) == 0 && strcmp(r->pattern, m->pattern) == 0);
        rw_matrix_free(r);
    }

    /* A line break would make the file unreadable: refused, old file kept. */
    snprintf(m->pattern, sizeof m->pattern, "ring\nranks 9");
    CHECK(rw_matrix_write(m, "rt.rwc") == RW_ERR_ARG);
    CHECK_MSG("matrix pattern holds a line break");
    CHECK(rw_matrix_read("rt.rwc", &r) == RW_OK && r && strcmp(r->pattern, "ring:ranks=4,bytes=1K") == 0);
    rw_matrix_free(r);

    CHECK(rw_matrix_write(m, "no-such-dir/x.rwc") == RW_ERR_ARG); /* still the bad pattern */
    m->pattern[0] = '\0';
    CHECK(rw_matrix_write(m, "no-such-dir/x.rwc") == RW_ERR_IO);
    CHECK_MSG("no-such-dir/x.rwc: cannot write");
    CHECK(access("no-such-dir/x.rwc", F_OK) != 0);
    rw_matrix_free(m);

    /* Hand-written files: comments anywhere, CRLF, blank lines, duplicate
     * lines summed, optional header lines absent. */
    write_text("hand.rwc", "# made by hand\r\n\r\nrankwise-matrix 1  # version\r\n"
                           "  ranks 3# three\r\n0 1 1 8 # first\r\n0 1 2 16\r\n\r\n2 0 0 0\r\n");
    CHECK(rw_matrix_read("hand.rwc", &r) == RW_OK);
    if (r) {
        int64_t msgs, bytes;
        CHECK(r->n_ranks == 3 && r->nnz == 1 && r->source[0] == '\0');
        CHECK(rw_matrix_get(r, 0, 1, &msgs, &bytes) == RW_OK && msgs == 3 && bytes == 24);
        rw_matrix_free(r);
    }
    write_text("empty.rwc", "rankwise-matrix 1\nranks 5\nnonzeros 0\n");
    CHECK(rw_matrix_read("empty.rwc", &r) == RW_OK && r && r->n_ranks == 5 && r->nnz == 0);
    rw_matrix_free(r);
}

/* Each malformed file is refused with exactly "path:line: message". */
static void check_error(const char *text, const char *expect)
{
    write_text("bad.rwc", text);
    rw_matrix *m = (rw_matrix *)1;
    rw_status st = rw_matrix_read("bad.rwc", &m);
    CHECK(st == RW_ERR_PARSE);
    CHECK(m == NULL);
    if (strcmp(rw_last_error(), expect) != 0) {
        fprintf(stderr, "unexpected message: %s\n                (wanted %s)\n", rw_last_error(), expect);
        check_failures++;
    }
}

static void check_read_errors(void)
{
    const char *head = "rankwise-matrix 1\nranks 4\n";
    char buf[1024], big[400];
    check_error("", "bad.rwc:0: empty file, not a rankwise communication matrix");
    check_error("# only a comment\n\n", "bad.rwc:2: empty file, not a rankwise communication matrix");
    check_error("rankwise-model 1\n",
                "bad.rwc:1: not a rankwise communication matrix (expected 'rankwise-matrix 2')");
    check_error("rankwise-matrix\n",
                "bad.rwc:1: not a rankwise communication matrix (expected 'rankwise-matrix 2')");
    check_error("rankwise-matrix 3\n", "bad.rwc:1: matrix format version 3 is newer than this rankwise (2)");
    check_error("rankwise-matrix one\n", "bad.rwc:1: the format version ('one') must be an integer in [1, 1000]");
    check_error("rankwise-matrix 1\n", "bad.rwc:1: no 'ranks' line");
    check_error("rankwise-matrix 1\n0 1 1 1\n", "bad.rwc:2: data line before 'ranks'");
    check_error("rankwise-matrix 1\nranks 0\n", "bad.rwc:2: ranks ('0') must be an integer in [1, 67108864]");
    check_error("rankwise-matrix 1\nranks 4 5\n", "bad.rwc:2: 'ranks' takes 1 field, found 2");
    check_error("rankwise-matrix 1\nranks\n", "bad.rwc:2: 'ranks' takes 1 field, found 0");
    snprintf(buf, sizeof buf, "%sranks 4\n", head);
    check_error(buf, "bad.rwc:3: 'ranks' given twice");
    snprintf(buf, sizeof buf, "%srankwise-matrix 1\n", head);
    check_error(buf, "bad.rwc:3: 'rankwise-matrix' given twice");
    snprintf(buf, sizeof buf, "%sweights 3\n", head);
    check_error(buf, "bad.rwc:3: unknown keyword 'weights'");
    snprintf(buf, sizeof buf, "%s0 1 1 1\nsource late\n", head);
    check_error(buf, "bad.rwc:4: 'source' after the data lines (header lines come first)");
    snprintf(buf, sizeof buf, "%ssource a\nsource b\n", head);
    check_error(buf, "bad.rwc:4: 'source' given twice");
    snprintf(buf, sizeof buf, "%spattern   \n", head);
    check_error(buf, "bad.rwc:3: 'pattern' needs a text");
    memset(big, 'x', 300);
    big[300] = '\0';
    snprintf(buf, sizeof buf, "%ssource %s\n", head, big);
    check_error(buf, "bad.rwc:3: 'source' text is longer than 255 characters");
    snprintf(buf, sizeof buf, "%snonzeros -1\n", head);
    check_error(buf, "bad.rwc:3: nonzeros ('-1') must be an integer in [0, 9223372036854775807]");
    snprintf(buf, sizeof buf, "%snonzeros 3\n0 1 1 1\n1 0 1 1\n", head);
    check_error(buf, "bad.rwc:5: 'nonzeros 3' (line 3) but 2 data lines: truncated file?");
    snprintf(buf, sizeof buf, "%snonzeros 1\nnonzeros 1\n", head);
    check_error(buf, "bad.rwc:4: 'nonzeros' given twice");

    /* Data lines. */
    snprintf(buf, sizeof buf, "%s0 1 1\n", head);
    check_error(buf, "bad.rwc:3: a data line has 4 fields (src dst msgs bytes), found 3");
    snprintf(buf, sizeof buf, "%s0 1 1 # 8\n", head);
    check_error(buf, "bad.rwc:3: a data line has 4 fields (src dst msgs bytes), found 3");
    snprintf(buf, sizeof buf, "%s0 1 1 8 9\n", head);
    check_error(buf, "bad.rwc:3: a data line has 4 fields (src dst msgs bytes), found more");
    snprintf(buf, sizeof buf, "%s0 1 1 8\n4 0 1 8\n", head);
    check_error(buf, "bad.rwc:4: src ('4') must be an integer in [0, 3]");
    snprintf(buf, sizeof buf, "%s-1 0 1 8\n", head);
    check_error(buf, "bad.rwc:3: src ('-1') must be an integer in [0, 3]");
    snprintf(buf, sizeof buf, "%s0 12 1 8\n", head);
    check_error(buf, "bad.rwc:3: dst ('12') must be an integer in [0, 3]");
    snprintf(buf, sizeof buf, "%s0 1 -2 8\n", head);
    check_error(buf, "bad.rwc:3: msgs ('-2') must be an integer in [0, 9223372036854775807]");
    snprintf(buf, sizeof buf, "%s0 1 1 8.5\n", head);
    check_error(buf, "bad.rwc:3: bytes ('8.5') must be an integer in [0, 9223372036854775807]");
    snprintf(buf, sizeof buf, "%s0 1 1 1e6\n", head);
    check_error(buf, "bad.rwc:3: bytes ('1e6') must be an integer in [0, 9223372036854775807]");
    snprintf(buf, sizeof buf, "%s0 1 1 9223372036854775808\n", head);
    check_error(buf, "bad.rwc:3: bytes ('9223372036854775808') must be an integer in [0, 9223372036854775807]");
    snprintf(buf, sizeof buf, "%s0 1 1 9223372036854775807\n1 0 1 1\n", head);
    check_error(buf, "bad.rwc:4: total bytes exceed 64 bits");
    snprintf(buf, sizeof buf, "%s0 1 9223372036854775807 0\n0 1 1 0\n", head);
    check_error(buf, "bad.rwc:4: total messages exceed 64 bits");

    /* One text rule for reader and writer: a lone CR, a tab, bytes that are
     * not UTF-8 are refused by both (the writer: check_text_rule). */
    snprintf(buf, sizeof buf, "%ssource a\rb\n", head);
    check_error(buf, "bad.rwc:3: 'source' text holds a line break (0x0d)");
    snprintf(buf, sizeof buf, "%spattern a\tb\n", head);
    check_error(buf, "bad.rwc:3: 'pattern' text holds a control character (0x09)");
    snprintf(buf, sizeof buf, "%ssource caf\xe9\n", head);
    check_error(buf, "bad.rwc:3: 'source' text is not valid UTF-8");
    snprintf(buf, sizeof buf, "%ssource \xc0\xaf\n", head); /* overlong '/' */
    check_error(buf, "bad.rwc:3: 'source' text is not valid UTF-8");
    snprintf(buf, sizeof buf, "%ssource a\r\n", head); /* CRLF line end: fine */
    write_text("crlf.rwc", buf);
    rw_matrix *c = NULL;
    CHECK(rw_matrix_read("crlf.rwc", &c) == RW_OK && c && strcmp(c->source, "a") == 0);
    rw_matrix_free(c);

    rw_matrix *m;
    CHECK(rw_matrix_read("does-not-exist.rwc", &m) == RW_ERR_IO && m == NULL);
    CHECK_MSG("does-not-exist.rwc: cannot open");
}

/* A few thousand random triplets: the CSR equals a dense accumulation. */
static void check_against_dense(void)
{
    enum { N = 37, COUNT = 5000 };
    static int64_t dense_msgs[N][N], dense_bytes[N][N];
    static int32_t src[COUNT], dst[COUNT];
    static int64_t msgs[COUNT], bytes[COUNT];
    uint64_t x = 42;
    for (int k = 0; k < COUNT; k++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        src[k] = (int32_t)((x >> 33) % N);
        dst[k] = (int32_t)((x >> 17) % N);
        msgs[k] = (int64_t)((x >> 7) % 3);
        bytes[k] = msgs[k] ? (int64_t)((x >> 40) % 1000) : 0;
        dense_msgs[src[k]][dst[k]] += msgs[k];
        dense_bytes[src[k]][dst[k]] += bytes[k];
    }
    rw_matrix *m = NULL;
    CHECK(rw_matrix_create(N, COUNT, src, dst, msgs, bytes, &m) == RW_OK);
    if (!m)
        return;
    int64_t nonzero = 0, bad = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            int64_t a, b;
            rw_matrix_get(m, i, j, &a, &b);
            bad += a != dense_msgs[i][j] || b != dense_bytes[i][j];
            nonzero += dense_msgs[i][j] || dense_bytes[i][j];
        }
    CHECK(bad == 0 && m->nnz == nonzero);
    for (int i = 0; i < N; i++)
        for (int64_t k = m->row_start[i] + 1; k < m->row_start[i + 1]; k++)
            bad += m->dst[k] <= m->dst[k - 1];
    CHECK(bad == 0);
    rw_matrix_free(m);
}

static void check_text_rule(void)
{
    static const char *const bad[][2] = {
        {"a\rb", "out.rwc: cannot write: matrix source holds a line break (0x0d)"},
        {"a\tb", "out.rwc: cannot write: matrix source holds a control character (0x09)"},
        {"caf\xe9", "out.rwc: cannot write: matrix source is not valid UTF-8"},
        {" a", "out.rwc: cannot write: matrix source starts or ends with blanks"},
    };
    int32_t src[1] = {0}, dst[1] = {1};
    int64_t msgs[1] = {1}, bytes[1] = {8};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        rw_matrix *m = NULL;
        CHECK(rw_matrix_create(2, 1, src, dst, msgs, bytes, &m) == RW_OK);
        snprintf(m->source, sizeof m->source, "%s", bad[k][0]);
        unlink("out.rwc");
        CHECK(rw_matrix_write(m, "out.rwc") == RW_ERR_ARG);
        CHECK(access("out.rwc", F_OK) != 0);
        if (strcmp(rw_last_error(), bad[k][1]) != 0) {
            fprintf(stderr, "unexpected message: %s\n                (wanted %s)\n", rw_last_error(), bad[k][1]);
            check_failures++;
        }
        rw_matrix_free(m);
    }
}

/* Texts from outside (a command line) made to keep the rule. */
static void check_text_clean(void)
{
    static const char *const cases[][2] = {
        {"  pmpi:./app\t-n 4\r\n ", "pmpi:./app -n 4"},
        {"caf\xe9 \xc3\xa9t\xc3\xa9", "caf? \xc3\xa9t\xc3\xa9"},
        {"a\xc3", "a?"}, /* a character cut short by a truncation */
        {"\x01\x7f", ""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char text[RW_TEXT_MAX + 1];
        snprintf(text, sizeof text, "%s", cases[k][0]);
        rw_text_clean(text);
        CHECK(strcmp(text, cases[k][1]) == 0);
    }
    char big[600];
    memset(big, 'x', 254);
    memcpy(big + 254, "\xc3\xa9yyyy", 7); /* a two-byte character across the limit */
    rw_text_clean(big);
    CHECK(strlen(big) == 254);
    /* Whatever went in, the writer takes what comes out. */
    int32_t src[1] = {0}, dst[1] = {1};
    int64_t msgs[1] = {1}, bytes[1] = {8};
    rw_matrix *m = NULL;
    CHECK(rw_matrix_create(2, 1, src, dst, msgs, bytes, &m) == RW_OK);
    snprintf(m->source, sizeof m->source, "%s", " \x1b[31m\xff\xfe red \t");
    rw_text_clean(m->source);
    CHECK(rw_matrix_write(m, "clean.rwc") == RW_OK);
    rw_matrix_free(m);
}

/* Collective calls: canonical form (communicators merged, the identity
 * made the world, calls sorted and summed), copied by symmetrisation,
 * written as comm/coll lines and read back; refusals name the offence. */
static void check_collectives(void)
{
    int32_t src[1] = {0}, dst[1] = {1};
    int64_t msgs[1] = {1}, bytes[1] = {8};
    rw_matrix *m = NULL, *r = NULL, *s = NULL;
    CHECK(rw_matrix_create(8, 1, src, dst, msgs, bytes, &m) == RW_OK);
    if (!m)
        return;
    CHECK(m->n_colls == 0 && m->n_comms == 0 && m->colls_dropped == 0);
    /* comm 0: 7 5 3 1; comm 1: 0..7 (the world); comm 2: 7 5 3 1 again;
     * comm 3: 0 1 2 3 (named by no call: dropped). */
    int64_t start[5] = {0, 4, 12, 16, 20};
    int32_t ranks[20] = {7, 5, 3, 1, 0, 1, 2, 3, 4, 5, 6, 7, 7, 5, 3, 1, 0, 1, 2, 3};
    rw_coll_call calls[5] = {
        {RW_COLL_BCAST, 2, 1, 64, 3},     {RW_COLL_ALLREDUCE, 1, 0, 16, 5},
        {RW_COLL_BCAST, 0, 1, 64, 2},     {RW_COLL_ALLTOALL, -1, 0, 4, 1},
        {RW_COLL_GATHER, 0, 3, 0, 7},
    };
    CHECK(rw_matrix_set_collectives(m, 4, start, ranks, 5, calls, 9) == RW_OK);
    CHECK(m->n_comms == 1 && m->comm_start[1] == 4 && m->comm_ranks[0] == 7 && m->comm_ranks[3] == 1);
    CHECK(m->n_colls == 4 && m->colls_dropped == 9);
    if (m->n_colls == 4) {
        /* world first (allreduce on the identity, alltoall), then comm 0 */
        CHECK(m->colls[0].comm == -1 && m->colls[0].op == RW_COLL_ALLREDUCE && m->colls[0].calls == 5);
        CHECK(m->colls[1].comm == -1 && m->colls[1].op == RW_COLL_ALLTOALL);
        CHECK(m->colls[2].comm == 0 && m->colls[2].op == RW_COLL_BCAST && m->colls[2].calls == 5);
        CHECK(m->colls[3].comm == 0 && m->colls[3].op == RW_COLL_GATHER && m->colls[3].root == 3);
    }
    CHECK(rw_matrix_symmetrize(m, &s) == RW_OK && s && s->n_colls == 4 && s->colls_dropped == 9 &&
          s->n_comms == 1);
    rw_matrix_free(s);

    CHECK(rw_matrix_write(m, "coll.rwc") == RW_OK);
    const char *text = read_all("coll.rwc");
    CHECK(text && strstr(text, "rankwise-matrix 2\nranks 8\nnonzeros 1\ncomm 0 7 5 3 1\n"
                               "# coll op bytes calls root comm\n"
                               "coll allreduce 16 5 0 world\ncoll alltoall 4 1 0 world\n"
                               "coll bcast 64 5 1 0\ncoll gather 0 7 3 0\ncoll-dropped 9\n"
                               "# src dst msgs bytes\n0 1 1 8\n") == text);
    CHECK(rw_matrix_read("coll.rwc", &r) == RW_OK && r);
    if (r) {
        CHECK(r->n_comms == 1 && r->n_colls == 4 && r->colls_dropped == 9);
        for (int64_t k = 0; k < 4 && r->n_colls == 4; k++)
            CHECK(r->colls[k].op == m->colls[k].op && r->colls[k].comm == m->colls[k].comm &&
                  r->colls[k].root == m->colls[k].root && r->colls[k].bytes == m->colls[k].bytes &&
                  r->colls[k].calls == m->colls[k].calls);
        CHECK(memcmp(r->comm_ranks, m->comm_ranks, 4 * sizeof *r->comm_ranks) == 0);
        rw_matrix_free(r);
    }

    /* Ranges: consecutive runs written A-B, read back expanded. */
    int64_t st2[2] = {0, 6};
    int32_t rk2[6] = {1, 2, 3, 4, 6, 7};
    rw_coll_call one = {RW_COLL_SCATTER, 0, 5, 10, 1};
    CHECK(rw_matrix_set_collectives(m, 1, st2, rk2, 1, &one, 0) == RW_OK);
    CHECK(rw_matrix_write(m, "coll.rwc") == RW_OK);
    text = read_all("coll.rwc");
    CHECK(text && strstr(text, "comm 0 1-4 6 7\n") && !strstr(text, "coll-dropped"));
    CHECK(rw_matrix_read("coll.rwc", &r) == RW_OK && r && r->n_comms == 1 && r->comm_start[1] == 6 &&
          r->comm_ranks[3] == 4 && r->comm_ranks[4] == 6);
    rw_matrix_free(r);

    /* Refused, the matrix unchanged. */
    rw_coll_call bad = {RW_COLL_ALLREDUCE, -1, 2, 8, 1};
    CHECK(rw_matrix_set_collectives(m, 0, NULL, NULL, 1, &bad, 0) == RW_ERR_ARG);
    CHECK_MSG("allreduce has no root (got 2)");
    bad = (rw_coll_call){RW_COLL_BCAST, -1, 8, 8, 1};
    CHECK(rw_matrix_set_collectives(m, 0, NULL, NULL, 1, &bad, 0) == RW_ERR_ARG);
    CHECK_MSG("root 8 is not a rank of its communicator of 8");
    bad = (rw_coll_call){RW_COLL_BCAST, 1, 0, 8, 1};
    CHECK(rw_matrix_set_collectives(m, 1, st2, rk2, 1, &bad, 0) == RW_ERR_ARG);
    CHECK_MSG("communicator 1 is not in [-1, 1)");
    bad = (rw_coll_call){7, -1, 0, 8, 1};
    CHECK(rw_matrix_set_collectives(m, 0, NULL, NULL, 1, &bad, 0) == RW_ERR_ARG);
    CHECK_MSG("unknown operation 7");
    bad = (rw_coll_call){RW_COLL_BCAST, -1, 0, 8, 0};
    CHECK(rw_matrix_set_collectives(m, 0, NULL, NULL, 1, &bad, 0) == RW_ERR_ARG);
    CHECK_MSG("calls >= 1");
    int32_t twice[3] = {1, 2, 1};
    int64_t st3[2] = {0, 3};
    CHECK(rw_matrix_set_collectives(m, 1, st3, twice, 1, &one, 0) == RW_ERR_ARG);
    CHECK_MSG("communicator 0: rank 1 is a member twice");
    int32_t outside[3] = {1, 2, 8};
    CHECK(rw_matrix_set_collectives(m, 1, st3, outside, 1, &one, 0) == RW_ERR_ARG);
    CHECK_MSG("communicator 0: member 8 is not in [0, 8)");
    rw_coll_call huge[2] = {{RW_COLL_BCAST, -1, 0, 8, INT64_MAX}, {RW_COLL_BCAST, -1, 0, 8, 1}};
    CHECK(rw_matrix_set_collectives(m, 0, NULL, NULL, 2, huge, 0) == RW_ERR_ARG);
    CHECK_MSG("exceed 64 bits");
    CHECK(m->n_colls == 1 && m->colls[0].op == RW_COLL_SCATTER);

    CHECK(strcmp(rw_coll_op_name(RW_COLL_ALLTOALL), "alltoall") == 0 && rw_coll_op_name(7) == NULL &&
          rw_coll_op_name(-1) == NULL && rw_coll_op_from_name("gather") == RW_COLL_GATHER &&
          rw_coll_op_from_name("barrier") == -1);
    rw_matrix_free(m);
}

static void check_collective_read_errors(void)
{
    const char *head = "rankwise-matrix 2\nranks 4\n";
    char buf[1024];
    check_error("rankwise-matrix 1\nranks 4\ncoll bcast 8 1 0 world\n",
                "bad.rwc:3: 'coll' needs matrix format version 2 (the file says 1)");
    check_error("rankwise-matrix 1\nranks 4\ncomm 0 1 2\n",
                "bad.rwc:3: 'comm' needs matrix format version 2 (the file says 1)");
    check_error("rankwise-matrix 2\ncoll bcast 8 1 0 world\n", "bad.rwc:2: 'coll' before 'ranks'");
    static const char *const cases[][2] = {
        {"coll bcast 8 1 0\n", "bad.rwc:3: 'coll' takes 5 fields (op bytes calls root comm), found 4"},
        {"coll bcast 8 1 0 world x y\n", "bad.rwc:3: 'coll' takes 5 fields (op bytes calls root comm), found more"},
        {"coll barrier 8 1 0 world\n", "bad.rwc:3: unknown collective 'barrier' (bcast, reduce, allreduce, "
                                        "allgather, gather, scatter, alltoall)"},
        {"coll bcast -8 1 0 world\n", "bad.rwc:3: bytes ('-8') must be an integer in [0, 9223372036854775807]"},
        {"coll bcast 8 0 0 world\n", "bad.rwc:3: calls ('0') must be an integer in [1, 9223372036854775807]"},
        {"coll bcast 8 1 4 world\n", "bad.rwc:3: collective call 0 (bcast): root 4 is not a rank of its "
                                      "communicator of 4"},
        {"coll allgather 8 1 1 world\n", "bad.rwc:3: collective call 0: allgather has no root (got 1)"},
        {"coll bcast 8 1 0 0\n", "bad.rwc:3: comm ('0') must be 'world' (no 'comm' line before)"},
        {"comm 0 1 2\ncoll bcast 8 1 2 0\n", "bad.rwc:4: collective call 0 (bcast): root 2 is not a rank of its "
                                             "communicator of 2"},
        {"comm 0 1 2\ncoll bcast 8 1 0 1\n", "bad.rwc:4: comm ('1') must be an integer in [0, 0]"},
        {"comm 1 1 2\n", "bad.rwc:3: communicator 1: IDs count 0, 1, 2, ... in order (expected 0)"},
        {"comm 0\n", "bad.rwc:3: communicator 0 has no member"},
        {"comm\n", "bad.rwc:3: 'comm' needs an ID and its members"},
        {"comm 0 1 4\n", "bad.rwc:3: a member ('4') must be an integer in [0, 3]"},
        {"comm 0 2 1-3\n", "bad.rwc:3: communicator 0: rank 2 is a member twice"},
        {"comm 0 3-1\n", "bad.rwc:3: member range 3-1 must go up"},
        {"comm 0 1-x\n", "bad.rwc:3: a member ('x') must be an integer in [0, 3]"},
        {"coll-dropped 1\ncoll-dropped 1\n", "bad.rwc:4: 'coll-dropped' given twice"},
        {"coll-dropped -1\n", "bad.rwc:3: coll-dropped ('-1') must be an integer in [0, 9223372036854775807]"},
        {"0 1 1 1\ncoll bcast 8 1 0 world\n", "bad.rwc:4: 'coll' after the data lines (header lines come first)"},
        {"coll bcast 8 9223372036854775807 0 world\ncoll bcast 8 1 0 world\n",
         "bad.rwc: collective calls: the calls of one bcast group exceed 64 bits"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        snprintf(buf, sizeof buf, "%s%s", head, cases[k][0]);
        if (k + 1 == sizeof cases / sizeof *cases) { /* the one refusal that is not a line's */
            write_text("bad.rwc", buf);
            rw_matrix *m = (rw_matrix *)1;
            CHECK(rw_matrix_read("bad.rwc", &m) == RW_ERR_ARG && m == NULL);
            CHECK(strcmp(rw_last_error(), cases[k][1]) == 0);
            continue;
        }
        check_error(buf, cases[k][1]);
    }
    /* A version-1 file still reads, without calls. */
    write_text("v1.rwc", "rankwise-matrix 1\nranks 3\nnonzeros 1\n0 1 2 16\n");
    rw_matrix *m = NULL;
    CHECK(rw_matrix_read("v1.rwc", &m) == RW_OK && m && m->nnz == 1 && m->n_colls == 0);
    rw_matrix_free(m);
}

int main(void)
{
    check_text_rule();
    check_text_clean();
    check_create();
    check_create_errors();
    check_round_trip();
    check_read_errors();
    check_against_dense();
    check_collectives();
    check_collective_read_errors();
    CHECK_DONE();
}
