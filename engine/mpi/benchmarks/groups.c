/* rankwise-bench-groups: the synthetic application of Getmansky et al. 2015, with
 * MPI_Alltoallv and displacement arrays.
 *
 * N = N_bl x N_perbl ranks (--groups, --per-group); logical rank
 * L = g N_perbl + k is rank k of group g. Each iteration is one
 * MPI_Alltoallv in which every rank sends SIZE bytes (D) to each other rank
 * of its group; at iterations 0, 1 + N_skip, 2 (1 + N_skip), ... (--skip)
 * the last rank of group g and the first of group g + 1 also send each
 * other D_bl bytes (--link-bytes), for g = 0 .. N_bl - 2. Logical rank L
 * runs as world rank perm[L], perm being rankwise.patterns.shuffle_ranks
 * (N, --seed): the stable argsort of the first N outputs of splitmix64
 * (--no-shuffle: perm[L] = L). The timed iterations of one size are
 * therefore exactly the traffic of rankwise.patterns.groups(N_bl, N_perbl,
 * D, D_bl, skip=N_skip, iterations=N_iter, seed, shuffle) with N_iter =
 * --iterations; --traffic FILE writes what this program passed to
 * MPI_Alltoallv in those iterations as a communication matrix (.rwc).
 * The warm-up runs the same schedule from iteration 0 and is left out. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "rankwise.h"

typedef struct groups {
    rw_bench *b;
    int n_groups, per_group, skip, shuffle;
    int64_t seed, link_bytes;
    int *perm;              /* logical -> world rank */
    int logical;            /* this rank's logical rank */
    int *count[2], *displ[2]; /* per world rank: [0] plain iteration, [1] with the link */
    char *send, *recv;
    int64_t *traffic_msgs, *traffic_bytes; /* per world destination, timed iterations */
} groups;

/* ------------------------------------------------------------ shuffle */
/* splitmix64's output i (1-based) for `seed`, as rankwise.patterns does. */
static uint64_t splitmix64(uint64_t seed, uint64_t i)
{
    uint64_t x = seed + i * 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

typedef struct keyed {
    uint64_t key;
    int index;
} keyed;

static int by_key_then_index(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index); /* stable */
}

/* perm[L] for L < n: numpy.argsort(keys, kind="stable"). 0 or -1 (memory). */
static int shuffle_ranks(int n, uint64_t seed, int *perm)
{
    keyed *k = malloc((size_t)n * sizeof *k);
    if (!k)
        return -1;
    for (int i = 0; i < n; i++)
        k[i] = (keyed){splitmix64(seed, (uint64_t)i + 1), i};
    qsort(k, (size_t)n, sizeof *k, by_key_then_index);
    for (int i = 0; i < n; i++)
        perm[i] = k[i].index;
    free(k);
    return 0;
}

/* ------------------------------------------------------------- layout */
/* Send (= receive: the pattern is symmetric) counts of both kinds of
 * iteration for destinations in world rank order, packed back to back. */
static void set_counts(groups *gr, int64_t size)
{
    int n = gr->b->size, p = gr->per_group, L = gr->logical, g = L / p, k = L % p;
    for (int with_link = 0; with_link < 2; with_link++) {
        int *c = gr->count[with_link];
        memset(c, 0, (size_t)n * sizeof *c);
        for (int j = 0; j < p; j++)
            if (j != k)
                c[gr->perm[g * p + j]] += (int)size;
        if (with_link && k == p - 1 && g + 1 < gr->n_groups)
            c[gr->perm[L + 1]] += (int)gr->link_bytes;
        if (with_link && k == 0 && g > 0)
            c[gr->perm[L - 1]] += (int)gr->link_bytes;
        int at = 0;
        for (int r = 0; r < n; r++) {
            gr->displ[with_link][r] = at;
            at += c[r];
        }
    }
}

static int run(void *ctx, int64_t size, int iteration)
{
    groups *gr = ctx;
    (void)size;
    int link = iteration % (1 + gr->skip) == 0;
    const int *c = gr->count[link], *d = gr->displ[link];
    MPI_Alltoallv(gr->send, c, d, MPI_BYTE, gr->recv, c, d, MPI_BYTE, gr->b->comm);
    if (gr->b->timed && gr->traffic_msgs)
        for (int r = 0; r < gr->b->size; r++)
            if (c[r] > 0) {
                gr->traffic_msgs[r] += 1;
                gr->traffic_bytes[r] += c[r];
            }
    return 0;
}

/* ------------------------------------------------------------ traffic */
/* Gather every rank's row on rank 0 and write the matrix. */
static int write_traffic(groups *gr, const char *path, const char *source)
{
    rw_bench *b = gr->b;
    int n = b->size, mine = 0;
    for (int r = 0; r < n; r++)
        mine += gr->traffic_msgs[r] > 0;
    int64_t *row = malloc((size_t)(3 * mine + 1) * sizeof *row);
    int *counts = b->rank == 0 ? malloc((size_t)n * sizeof *counts) : NULL;
    int *displs = b->rank == 0 ? malloc((size_t)n * sizeof *displs) : NULL;
    if (!rw_bench_all_ok(b, row && (b->rank != 0 || (counts && displs)))) {
        free(row), free(counts), free(displs);
        return rw_bench_fail(b, "out of memory for the traffic matrix");
    }
    int at = 0;
    for (int r = 0; r < n; r++)
        if (gr->traffic_msgs[r] > 0) {
            row[at++] = r;
            row[at++] = gr->traffic_msgs[r];
            row[at++] = gr->traffic_bytes[r];
        }
    int len = 3 * mine;
    MPI_Gather(&len, 1, MPI_INT, counts, 1, MPI_INT, 0, b->comm);
    int64_t *all = NULL;
    int total = 0;
    if (b->rank == 0) {
        for (int r = 0; r < n; r++) {
            displs[r] = total;
            total += counts[r];
        }
        all = malloc((size_t)(total + 1) * sizeof *all);
    }
    int ok = b->rank != 0 || all;
    MPI_Bcast(&ok, 1, MPI_INT, 0, b->comm);
    if (!ok) {
        free(row), free(counts), free(displs);
        return rw_bench_fail(b, "out of memory for the traffic matrix");
    }
    MPI_Gatherv(row, len, MPI_INT64_T, all, counts, displs, MPI_INT64_T, 0, b->comm);
    free(row);
    int written = 1;
    if (b->rank == 0) {
        int64_t entries = total / 3;
        int32_t *src = malloc((size_t)(entries + 1) * sizeof *src);
        int32_t *dst = malloc((size_t)(entries + 1) * sizeof *dst);
        int64_t *msgs = malloc((size_t)(entries + 1) * sizeof *msgs);
        int64_t *bytes = malloc((size_t)(entries + 1) * sizeof *bytes);
        rw_matrix *m = NULL;
        written = 0;
        if (src && dst && msgs && bytes) {
            for (int r = 0, e = 0; r < n; r++)
                for (int k = displs[r]; k < displs[r] + counts[r]; k += 3, e++) {
                    src[e] = r;
                    dst[e] = (int32_t)all[k];
                    msgs[e] = all[k + 1];
                    bytes[e] = all[k + 2];
                }
            if (rw_matrix_create(n, entries, src, dst, msgs, bytes, &m) == RW_OK) {
                snprintf(m->source, sizeof m->source, "%s", source);
                written = rw_matrix_write(m, path) == RW_OK;
            }
            if (!written)
                rw_bench_fail(b, "--traffic %s: %s", path, rw_last_error());
            rw_matrix_free(m);
        } else {
            rw_bench_fail(b, "out of memory for the traffic matrix");
        }
        free(src), free(dst), free(msgs), free(bytes);
    }
    free(all), free(counts), free(displs);
    MPI_Bcast(&written, 1, MPI_INT, 0, b->comm);
    return written ? 0 : -1;
}

/* ---------------------------------------------------------------- run */
static int bench(rw_bench *b, groups *gr, const char *traffic)
{
    int n = b->size;
    gr->perm = malloc((size_t)n * sizeof *gr->perm);
    for (int i = 0; i < 2; i++) {
        gr->count[i] = malloc((size_t)n * sizeof(int));
        gr->displ[i] = malloc((size_t)n * sizeof(int));
    }
    if (traffic) {
        gr->traffic_msgs = calloc((size_t)n, sizeof(int64_t));
        gr->traffic_bytes = calloc((size_t)n, sizeof(int64_t));
    }
    int ok = gr->perm && gr->count[0] && gr->count[1] && gr->displ[0] && gr->displ[1] &&
             (!traffic || (gr->traffic_msgs && gr->traffic_bytes));
    if (ok && gr->shuffle)
        ok = shuffle_ranks(n, (uint64_t)gr->seed, gr->perm) == 0;
    else if (ok)
        for (int i = 0; i < n; i++)
            gr->perm[i] = i;
    if (!rw_bench_all_ok(b, ok))
        return rw_bench_fail(b, "out of memory for %d ranks", n);
    for (int i = 0; i < n; i++)
        if (gr->perm[i] == b->rank)
            gr->logical = i;

    char link[32];
    rw_format_size(gr->link_bytes, link, sizeof link);
    rw_bench_header(b);
    rw_bench_meta(b, "operation", "Getmansky et al. 2015 synthetic groups, one MPI_Alltoallv per iteration");
    rw_bench_meta(b, "groups", "%d", gr->n_groups);
    rw_bench_meta(b, "per-group", "%d", gr->per_group);
    rw_bench_meta(b, "link-bytes", "%lld", (long long)gr->link_bytes);
    rw_bench_meta(b, "skip", "%d", gr->skip);
    rw_bench_meta(b, "seed", "%lld", (long long)gr->seed);
    rw_bench_meta(b, "shuffle", "%d", gr->shuffle);
    rw_bench_meta(b, "size", "bytes each rank sends to each other rank of its group per iteration");
    rw_bench_table(b, "groups", "mean_us");

    char sizes[256] = "";
    for (int s = 0; s < b->sizes.n; s++) {
        int64_t size = b->sizes.v[s];
        double most = (double)size * (gr->per_group - 1) + 2.0 * (double)gr->link_bytes;
        if (!rw_bench_fits(b, size, 2 * most))
            continue;
        if (most > INT_MAX)
            return rw_bench_fail(b, "%lld-byte messages: one rank's Alltoallv would exceed an MPI count",
                                 (long long)size);
        size_t bytes = (size_t)most;
        gr->send = rw_bench_alloc(bytes, 1);
        gr->recv = rw_bench_alloc(bytes, 1);
        if (!rw_bench_all_ok(b, gr->send && gr->recv)) {
            rw_bench_free(gr->send, 1), rw_bench_free(gr->recv, 1);
            return rw_bench_fail(b, "out of memory for %lld-byte messages", (long long)size);
        }
        set_counts(gr, size);
        rw_bench_times t;
        int rc = rw_bench_time(b, run, gr, size, &t);
        rw_bench_free(gr->send, 1), rw_bench_free(gr->recv, 1);
        if (rc)
            return rc;
        char extra[32], text[32];
        snprintf(extra, sizeof extra, "%.3f", t.mean * 1e6);
        rw_bench_row(b, size, &t, extra);
        rw_format_size(size, text, sizeof text);
        size_t used = strlen(sizes);
        snprintf(sizes + used, sizeof sizes - used, "%s%s", used ? "+" : "", text);
    }
    if (!traffic)
        return 0;
    char source[256]; /* a description: a long size list is cut, and says so */
    int wanted = snprintf(source, sizeof source,
             "rankwise-bench-groups timed iterations: groups:groups=%d,per_group=%d,bytes=%s,"
             "link_bytes=%s,skip=%d,iterations=%d,seed=%lld,shuffle=%d",
             gr->n_groups, gr->per_group, sizes[0] ? sizes : "none", link, gr->skip, b->iterations,
             (long long)gr->seed, gr->shuffle);
    if (wanted >= (int)sizeof source)
        memcpy(source + sizeof source - 4, "...", 4);
    rw_bench_pcontrol(0);
    int rc = write_traffic(gr, traffic, source);
    rw_bench_pcontrol(1);
    return rc;
}

static void groups_free(groups *gr)
{
    free(gr->perm);
    for (int i = 0; i < 2; i++)
        free(gr->count[i]), free(gr->displ[i]);
    free(gr->traffic_msgs), free(gr->traffic_bytes);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    rw_bench b;
    groups gr = {.b = &b, .link_bytes = -1};
    int no_shuffle = 0;
    const char *traffic = NULL;
    const rw_bench_opt opts[] = {
        {"groups", RW_OPT_INT, &gr.n_groups, 1, "N_BL   number of groups (default: ranks / --per-group)"},
        {"per-group", RW_OPT_INT, &gr.per_group, 1, "N      ranks per group (default: ranks / --groups)"},
        {"link-bytes", RW_OPT_SIZE, &gr.link_bytes, 1, "D_BL   bytes between linked groups (default 1M)"},
        {"skip", RW_OPT_INT, &gr.skip, 0, "N      iterations without the link between two with it (0)"},
        {"seed", RW_OPT_INT64, &gr.seed, 0, "S      seed of the rank shuffle (default 0)"},
        {"no-shuffle", RW_OPT_FLAG, &no_shuffle, 0, "logical rank L runs as rank L"},
        {"traffic", RW_OPT_TEXT, &traffic, 0, "FILE   write the timed traffic as a matrix (.rwc)"},
    };
    int rc = rw_bench_init(&b, "rankwise-bench-groups",
                           "--groups N_BL | --per-group N [options]\n  Getmansky et al. 2015's synthetic groups "
                           "(MPI_Alltoallv); a size is D, bytes to each group mate per iteration;\n"
                           "  --iterations is N_iter",
                           "1K:64K", argc, argv, opts, (int)(sizeof opts / sizeof *opts));
    if (rc == 0 && !b.help) {
        gr.shuffle = !no_shuffle;
        if (gr.link_bytes < 0)
            gr.link_bytes = 1 << 20;
        if (!gr.n_groups && !gr.per_group)
            rc = rw_bench_fail(&b, "give --groups or --per-group (their product is the number of ranks)");
        else if (!gr.n_groups)
            gr.n_groups = b.size / gr.per_group;
        else if (!gr.per_group)
            gr.per_group = b.size / gr.n_groups;
        if (rc == 0 && (long long)gr.n_groups * gr.per_group != b.size)
            rc = rw_bench_fail(&b, "%d groups x %d ranks is not the job's %d ranks", gr.n_groups,
                               gr.per_group, b.size);
        if (rc == 0 && gr.link_bytes > INT_MAX / 2)
            rc = rw_bench_fail(&b, "--link-bytes is more than an MPI count holds");
        for (int s = 0; s < b.sizes.n && rc == 0; s++)
            if (b.sizes.v[s] < 1)
                rc = rw_bench_fail(&b, "--sizes: D must be at least 1 byte");
        if (rc == 0)
            rc = bench(&b, &gr, traffic);
    }
    groups_free(&gr);
    int code = rc ? rw_bench_report_error(&b) : 0;
    MPI_Finalize();
    return code;
}
