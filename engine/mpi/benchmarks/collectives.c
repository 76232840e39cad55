/* rankwise-bench-collectives: latency of MPI's common collectives over
 * message sizes, one table per collective (as the OSU collective
 * benchmarks do, all in one program).
 *
 *   bcast      SIZE bytes from the root to every rank
 *   reduce     SIZE / 4 floats summed onto the root
 *   allreduce  SIZE / 4 floats summed onto every rank
 *   gather     SIZE bytes from every rank to the root (P x SIZE there)
 *   scatter    SIZE bytes from the root to every rank
 *   allgather  SIZE bytes from every rank to every rank
 *
 * Reductions work on 4-byte floats: a size that is not a multiple of 4 is
 * rounded down (the row shows the bytes reduced), one below 4 is skipped.
 * Under SMPI the buffers are shared, so the simulator copies nothing. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

enum coll { BCAST, REDUCE, ALLREDUCE, GATHER, SCATTER, ALLGATHER, N_COLLS };
static const char *const names[N_COLLS] = {"bcast", "reduce", "allreduce", "gather", "scatter",
                                           "allgather"};

typedef struct colls {
    rw_bench *b;
    enum coll which;
    int root;
    char *send, *recv;
} colls;

static int is_reduction(enum coll c) { return c == REDUCE || c == ALLREDUCE; }

static int run(void *ctx, int64_t size, int iteration)
{
    colls *c = ctx;
    MPI_Comm comm = c->b->comm;
    int n = (int)size;
    (void)iteration;
    switch (c->which) {
    case BCAST: MPI_Bcast(c->send, n, MPI_BYTE, c->root, comm); break;
    case REDUCE: MPI_Reduce(c->send, c->recv, n / 4, MPI_FLOAT, MPI_SUM, c->root, comm); break;
    case ALLREDUCE: MPI_Allreduce(c->send, c->recv, n / 4, MPI_FLOAT, MPI_SUM, comm); break;
    case GATHER: MPI_Gather(c->send, n, MPI_BYTE, c->recv, n, MPI_BYTE, c->root, comm); break;
    case SCATTER: MPI_Scatter(c->send, n, MPI_BYTE, c->recv, n, MPI_BYTE, c->root, comm); break;
    default: MPI_Allgather(c->send, n, MPI_BYTE, c->recv, n, MPI_BYTE, comm); break;
    }
    return 0;
}

/* Bytes of the send and receive buffers of one rank (the root's, the
 * largest). */
static void buffer_sizes(enum coll c, int64_t size, int ranks, double *send, double *recv)
{
    double s = (double)size, all = s * ranks;
    switch (c) {
    case BCAST: *send = s, *recv = 0; break;
    case REDUCE: case ALLREDUCE: *send = s, *recv = s; break;
    case GATHER: case ALLGATHER: *send = s, *recv = all; break;
    default: *send = all, *recv = s; break; /* scatter */
    }
}

static int bench_one(rw_bench *b, colls *c)
{
    rw_bench_table(b, names[c->which], NULL);
    for (int i = 0; i < b->sizes.n; i++) {
        int64_t size = b->sizes.v[i];
        if (is_reduction(c->which)) {
            if (size < 4) {
                rw_bench_skip(b, size, "%s works on 4-byte floats", names[c->which]);
                continue;
            }
            size -= size % 4;
        }
        double send, recv;
        buffer_sizes(c->which, size, b->size, &send, &recv);
        if (!rw_bench_fits(b, size, send + recv))
            continue;
        if (send > INT_MAX || recv > (double)INT_MAX * b->size) {
            rw_bench_skip(b, size, "more than one MPI count holds");
            continue;
        }
        c->send = rw_bench_alloc((size_t)send, 1);
        c->recv = rw_bench_alloc((size_t)recv, 1);
        if (!rw_bench_all_ok(b, c->send && c->recv)) {
            rw_bench_free(c->send, 1), rw_bench_free(c->recv, 1);
            return rw_bench_fail(b, "out of memory for %s of %lld bytes", names[c->which],
                                 (long long)size);
        }
        rw_bench_times t;
        int rc = rw_bench_time(b, run, c, size, &t);
        rw_bench_free(c->send, 1), rw_bench_free(c->recv, 1);
        if (rc)
            return rc;
        rw_bench_row(b, size, &t, NULL);
    }
    return 0;
}

static int parse_collectives(rw_bench *b, const char *text, int *want)
{
    int all = !strcmp(text, "all");
    for (int i = 0; i < N_COLLS; i++)
        want[i] = all;
    if (all)
        return 0;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", text);
    char *save = NULL;
    int any = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < N_COLLS; i++)
            if (!strcmp(tok, names[i]))
                found = i;
        if (found < 0)
            return rw_bench_fail(b, "--collectives: unknown '%s' (known: bcast, reduce, allreduce, "
                                 "gather, scatter, allgather, all)", tok);
        want[found] = any = 1;
    }
    return any ? 0 : rw_bench_fail(b, "--collectives is empty");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    rw_bench b;
    colls c = {.b = &b};
    const char *which = "all";
    int start_every_us = 0;
    const rw_bench_opt opts[] = {
        {"collectives", RW_OPT_TEXT, &which, 0,
         "LIST  bcast,reduce,allreduce,gather,scatter,allgather or all (default)"},
        {"root", RW_OPT_INT, &c.root, 0, "R     root of bcast, reduce, gather, scatter (0)"},
        {"start-every", RW_OPT_INT, &start_every_us, 0,
         "US    start every call at a multiple of US microseconds (0: off)"},
    };
    int want[N_COLLS];
    int rc = rw_bench_init(&b, "rankwise-bench-collectives",
                           "[options]\n  latency of MPI collectives, one table each; a size is the "
                           "bytes of one rank's contribution",
                           "4:1M", argc, argv, opts, (int)(sizeof opts / sizeof *opts));
    b.start_every = start_every_us * 1e-6;
    if (rc == 0 && !b.help)
        rc = parse_collectives(&b, which, want);
    if (rc == 0 && !b.help && c.root >= b.size)
        rc = rw_bench_fail(&b, "--root %d: the job has %d ranks", c.root, b.size);
    for (int i = 0; i < b.sizes.n && rc == 0 && !b.help; i++)
        if (b.sizes.v[i] > INT_MAX)
            rc = rw_bench_fail(&b, "--sizes: %lld bytes is more than one MPI count holds",
                               (long long)b.sizes.v[i]);
    if (rc == 0 && !b.help) {
        rw_bench_header(&b);
        rw_bench_meta(&b, "operation", "MPI collectives, one table each");
        rw_bench_meta(&b, "root", "%d", c.root);
        if (start_every_us > 0)
            rw_bench_meta(&b, "start-every", "%d us", start_every_us);
        rw_bench_meta(&b, "size", "bytes of one rank's contribution (reductions: floats x 4)");
        for (int i = 0; i < N_COLLS && rc == 0; i++)
            if (want[i]) {
                c.which = (enum coll)i;
                rc = bench_one(&b, &c);
            }
    }
    int code = rc ? rw_bench_report_error(&b) : 0;
    MPI_Finalize();
    return code;
}
