/* rankwise-bench-alltoall: time MPI_Alltoall over message sizes.
 *
 * The size is the number of bytes each rank sends to each other rank (the
 * per-pair size, as in the all-to-all figures of Cui et al. 2020: 1 KiB .. 8 MiB).
 * One rank's buffers therefore hold 2 x ranks x size bytes: at 8 MiB and
 * 64 ranks 1 GiB. Sizes whose buffers exceed --max-memory are skipped with
 * a note. Under SMPI the buffers are shared (their content never matters)
 * unless --check asks for the content to be verified. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "live_mode.h"
#include "rankwise.h"

typedef struct alltoall {
    rw_bench *b;
    char *send, *recv;
    int check;
} alltoall;

static int run(void *ctx, int64_t size, int iteration)
{
    alltoall *a = ctx;
    (void)iteration;
    size_t n = (size_t)size;
    if (a->check)
        memset(a->recv, 0, n * (size_t)a->b->size);
    MPI_Alltoall(a->send, (int)size, MPI_BYTE, a->recv, (int)size, MPI_BYTE, a->b->comm);
    if (!a->check)
        return 0;
    int bad = 0;
    for (int from = 0; from < a->b->size; from++)
        bad |= rw_bench_verify(a->recv + (size_t)from * n, n, from, a->b->rank) != 0;
    return bad;
}

/* --live: every rank sends size bytes to every other. */
static rw_matrix *alltoall_traffic(void *ctx, int64_t size)
{
    alltoall *a = ctx;
    int n = a->b->size;
    int64_t count = 0, most = (int64_t)n * n;
    int32_t *src = malloc((size_t)most * sizeof *src), *dst = malloc((size_t)most * sizeof *dst);
    int64_t *msgs = malloc((size_t)most * sizeof *msgs), *bytes = malloc((size_t)most * sizeof *bytes);
    rw_matrix *m = NULL;
    for (int i = 0; src && dst && msgs && bytes && i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j) {
                src[count] = i;
                dst[count] = j;
                msgs[count] = 1;
                bytes[count++] = size;
            }
    if (src && dst && msgs && bytes && rw_matrix_create(n, count, src, dst, msgs, bytes, &m) != RW_OK)
        m = NULL;
    free(src);
    free(dst);
    free(msgs);
    free(bytes);
    return m;
}

/* --live: the send buffer goes with the old rank. */
static int alltoall_moved(void *ctx, MPI_Comm oldcomm, MPI_Comm newcomm)
{
    alltoall *a = ctx;
    size_t total = (size_t)a->b->sizes.v[0] * (size_t)a->b->size;
    char *tmp = malloc(total);
    if (!tmp)
        return -1;
    int rc = rw_live_mode_move(a->send, tmp, total, oldcomm, newcomm);
    if (!rc)
        memcpy(a->send, tmp, total);
    free(tmp);
    return rc;
}

static int bench(rw_bench *b, int check, const rw_live_opts *live)
{
    rw_bench_header(b);
    rw_bench_meta(b, "operation", "MPI_Alltoall");
    rw_bench_meta(b, "size", "bytes each rank sends to each other rank");
    rw_bench_meta(b, "check", check ? "on (received data verified; times include it)" : "off");
    if (!live->every)
        rw_bench_table(b, rw_coll_op_name(RW_COLL_ALLTOALL), NULL);
    alltoall a = {.b = b, .check = check};
    int failed = 0;
    for (int s = 0; s < b->sizes.n; s++) {
        int64_t size = b->sizes.v[s];
        double bytes = 2.0 * (double)size * b->size;
        if (!rw_bench_fits(b, size, bytes))
            continue;
        size_t total = (size_t)size * (size_t)b->size;
        a.send = rw_bench_alloc(total, !check);
        a.recv = rw_bench_alloc(total, !check);
        if (!rw_bench_all_ok(b, a.send && a.recv)) {
            rw_bench_free(a.send, !check);
            rw_bench_free(a.recv, !check);
            return rw_bench_fail(b, "out of memory for %lld-byte messages (2 x %d ranks x size)",
                                 (long long)size, b->size);
        }
        if (check)
            for (int to = 0; to < b->size; to++)
                rw_bench_fill(a.send + (size_t)to * (size_t)size, (size_t)size, b->rank, to);
        if (live->every) {
            const rw_live_app app = {run, &a, alltoall_moved, alltoall_traffic};
            int rc = rw_live_run(b, live, &app, size);
            rw_bench_free(a.send, !check);
            rw_bench_free(a.recv, !check);
            return rc;
        }
        rw_bench_times t;
        int rc = rw_bench_time(b, run, &a, size, &t);
        rw_bench_free(a.send, !check);
        rw_bench_free(a.recv, !check);
        if (rc)
            return rc;
        rw_bench_row(b, size, &t, NULL);
        failed += t.failed;
    }
    if (failed)
        return rw_bench_fail(b, "--check: %d ranks received wrong data", failed);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    rw_bench b;
    int check = 0;
    rw_live_opts live = {0};
    const rw_bench_opt opts[] = {
        {"check", RW_OPT_FLAG, &check, 0, "verify every received block (slower; plain buffers)"},
        RW_LIVE_OPTIONS(live),
    };
    int rc = rw_bench_init(&b, "rankwise-bench-alltoall", "[options]\n  MPI_Alltoall; a size is the bytes each rank sends to each other rank",
                           "1K:8M", argc, argv, opts, (int)(sizeof opts / sizeof *opts));
    if (rc == 0 && !b.help)
        rc = rw_live_check(&b, &live);
    if (rc == 0 && !b.help) {
        for (int s = 0; s < b.sizes.n && rc == 0; s++)
            if (b.sizes.v[s] > INT_MAX)
                rc = rw_bench_fail(&b, "--sizes: %lld bytes is more than one MPI count holds",
                                   (long long)b.sizes.v[s]);
        if (rc == 0)
            rc = bench(&b, check, &live);
    }
    int code = rc ? rw_bench_report_error(&b) : 0;
    MPI_Finalize();
    return code;
}
