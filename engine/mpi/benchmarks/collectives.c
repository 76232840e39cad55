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
#include "rankwise.h"

/* The collectives, in the tables' order, named as the engine names them
 * (rw_coll_op_name). */
static const rw_coll_op COLLS[] = {RW_COLL_BCAST,  RW_COLL_REDUCE,  RW_COLL_ALLREDUCE,
                                   RW_COLL_GATHER, RW_COLL_SCATTER, RW_COLL_ALLGATHER};
#define N_COLLS ((int)(sizeof COLLS / sizeof *COLLS))

/* Their names (only the rooted ones with rooted) joined by sep, then last
 * (the options' help and errors). */
static const char *coll_names(char *buf, size_t size, const char *sep, const char *last, int rooted)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < N_COLLS && len < size; i++) {
        int k = rooted && !rw_coll_op_rooted(COLLS[i])
                    ? 0
                    : snprintf(buf + len, size - len, "%s%s", len ? sep : "", rw_coll_op_name(COLLS[i]));
        if (k > 0)
            len += (size_t)k;
    }
    if (len < size)
        snprintf(buf + len, size - len, "%s", last);
    return buf;
}

typedef struct colls {
    rw_bench *b;
    rw_coll_op which;
    int root;
    char *send, *recv;
} colls;

static int is_reduction(rw_coll_op c) { return c == RW_COLL_REDUCE || c == RW_COLL_ALLREDUCE; }

static int run(void *ctx, int64_t size, int iteration)
{
    colls *c = ctx;
    MPI_Comm comm = c->b->comm;
    int n = (int)size;
    (void)iteration;
    switch (c->which) {
    case RW_COLL_BCAST: MPI_Bcast(c->send, n, MPI_BYTE, c->root, comm); break;
    case RW_COLL_REDUCE: MPI_Reduce(c->send, c->recv, n / 4, MPI_FLOAT, MPI_SUM, c->root, comm); break;
    case RW_COLL_ALLREDUCE: MPI_Allreduce(c->send, c->recv, n / 4, MPI_FLOAT, MPI_SUM, comm); break;
    case RW_COLL_GATHER: MPI_Gather(c->send, n, MPI_BYTE, c->recv, n, MPI_BYTE, c->root, comm); break;
    case RW_COLL_SCATTER: MPI_Scatter(c->send, n, MPI_BYTE, c->recv, n, MPI_BYTE, c->root, comm); break;
    default: MPI_Allgather(c->send, n, MPI_BYTE, c->recv, n, MPI_BYTE, comm); break;
    }
    return 0;
}

/* Bytes of the send and receive buffers of one rank (the root's, the
 * largest). */
static void buffer_sizes(rw_coll_op c, int64_t size, int ranks, double *send, double *recv)
{
    double s = (double)size, all = s * ranks;
    switch (c) {
    case RW_COLL_BCAST: *send = s, *recv = 0; break;
    case RW_COLL_REDUCE: case RW_COLL_ALLREDUCE: *send = s, *recv = s; break;
    case RW_COLL_GATHER: case RW_COLL_ALLGATHER: *send = s, *recv = all; break;
    default: *send = all, *recv = s; break; /* scatter */
    }
}

static int bench_one(rw_bench *b, colls *c)
{
    rw_bench_table(b, rw_coll_op_name(c->which), NULL);
    for (int i = 0; i < b->sizes.n; i++) {
        int64_t size = b->sizes.v[i];
        if (is_reduction(c->which)) {
            if (size < 4) {
                rw_bench_skip(b, size, "%s works on 4-byte floats", rw_coll_op_name(c->which));
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
            return rw_bench_fail(b, "out of memory for %s of %lld bytes", rw_coll_op_name(c->which),
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
            if (!strcmp(tok, rw_coll_op_name(COLLS[i])))
                found = i;
        char known[128];
        if (found < 0)
            return rw_bench_fail(b, "--collectives: unknown '%s' (known: %s)", tok,
                                 coll_names(known, sizeof known, ", ", ", all", 0));
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
    char list_help[160], root_help[160], list[128];
    snprintf(list_help, sizeof list_help, "LIST  %s or all (default)", coll_names(list, sizeof list, ",", "", 0));
    snprintf(root_help, sizeof root_help, "R     root of %s (0)", coll_names(list, sizeof list, ", ", "", 1));
    const rw_bench_opt opts[] = {
        {"collectives", RW_OPT_TEXT, &which, 0, list_help},
        {"root", RW_OPT_INT, &c.root, 0, root_help},
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
                c.which = COLLS[i];
                rc = bench_one(&b, &c);
            }
    }
    int code = rc ? rw_bench_report_error(&b) : 0;
    MPI_Finalize();
    return code;
}
