/* The live model's API (rankwise_live.h) under a real MPI and SMPI:
 *
 * MODEL "none": no model.
 *
 *   live_api rotation MODEL       one round per probe: every ordered pair is
 *                                 measured once per cycle of report.cycle_calls
 *                                 calls, none twice ("rotation ok")
 *   live_api drift MODEL T        probes until simulated time T has passed:
 *                                 one line per probe "probe CALL START CHANGED
 *                                 NODES src>dst..." and the named nodes
 *   live_api remap MODEL          a ring whose neighbours the model puts far
 *                                 apart: remap, check the new communicator
 *                                 (same processes, a permutation), move data
 *                                 and verify it ("remap ok GAIN" or "remap kept")
 *   live_api decide MODEL T       a broadcast decided from the model (with
 *                                 RANKWISE_MODEL), twice; probes until T has
 *                                 passed; the broadcast again: "generation G"
 *                                 before and after (the trace shows decisions)
 *   live_api errors MODEL OTHER   bad arguments, a model without the ranks
 *                                 (pass through), an unreadable model, a
 *                                 timeout giving up; then MPI still works
 *                                 ("errors ok")
 *
 * Every rank prints "failures N" last; the exit code is 0 when all ran. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rankwise.h"
#include "rankwise_live.h"

static int failures, rank;

#define CHECK(cond, ...)                                                                                   \
    do {                                                                                                   \
        if (!(cond)) {                                                                                     \
            failures++;                                                                                    \
            fprintf(stderr, "rank %d: %s:%d: %s: ", rank, __FILE__, __LINE__, #cond);                      \
            fprintf(stderr, __VA_ARGS__);                                                                  \
            fputc('\n', stderr);                                                                           \
        }                                                                                                  \
    } while (0)

static int rotation(const char *model)
{
    rw_live *live = NULL;
    rw_status st = rw_live_init(MPI_COMM_WORLD, model, &live);
    CHECK(st == RW_OK, "init: %s", rw_last_error());
    if (st)
        return 1;
    int32_t n = rw_live_n_nodes(live);
    CHECK(n >= 2, "%d nodes", (int)n);
    rw_live_report rep;
    /* a budget of 1 ns: one round per call */
    st = rw_live_probe(live, 1e-9, &rep);
    CHECK(st == RW_OK && rep.rounds == 1 && rep.call == 1, "first probe: %s", rw_last_error());
    int k = rep.cycle_calls, total = rep.rounds_total;
    CHECK(k == total && total == (n % 2 ? n : n - 1), "cycle of %d calls, %d rounds for %d nodes", k, total, (int)n);
    int pairs = rep.pairs;
    for (int c = 2; c <= k && !st; c++) {
        st = rw_live_probe(live, 1e-9, &rep);
        CHECK(st == RW_OK && rep.call == c && rep.rounds == 1, "probe %d: %s", c, rw_last_error());
        pairs += rep.pairs;
    }
    CHECK(pairs == n * (n - 1), "%d pairs in a cycle of %d nodes", pairs, (int)n);
    for (int32_t a = 0; a < n; a++) /* each pair once: its call is where it was */
        for (int32_t b = 0; b < n; b++)
            if (a != b)
                CHECK(rw_live_pair_call(live, a, b) >= 1 && rw_live_pair_call(live, a, b) <= k,
                      "pair %d>%d measured at call %d", (int)a, (int)b, (int)rw_live_pair_call(live, a, b));
    /* the next cycle starts over: the pairs of call 1 are measured again */
    int32_t again = 0;
    st = rw_live_probe(live, 1e-9, &rep);
    for (int32_t a = 0; a < n; a++)
        for (int32_t b = 0; b < n; b++)
            again += a != b && rw_live_pair_call(live, a, b) == k + 1;
    CHECK(st == RW_OK && again == rep.pairs && again > 0, "%d pairs at call %d", (int)again, k + 1);
    /* a model with every pair: the collectives use it; the generation is the same everywhere */
    unsigned long long g = rw_live_generation(), g0 = g;
    MPI_Bcast(&g0, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    CHECK(g == g0 && g >= 1, "generation %llu, rank 0's %llu", g, g0);
    rw_live_free(&live);
    CHECK(live == NULL, "freed");
    if (rank == 0)
        printf("rotation ok %d calls\n", k);
    return 0;
}

static void count_drift(const rw_live_drift *d, void *arg)
{
    *(int *)arg += d->n_pairs > 0;
}

static int drift(const char *model, double until)
{
    rw_live *live = NULL;
    rw_status st = rw_live_init(MPI_COMM_WORLD, model, &live);
    CHECK(st == RW_OK, "init: %s", rw_last_error());
    if (st)
        return 1;
    int called = 0, changed_probes = 0;
    rw_live_on_drift(live, count_drift, &called);
    for (int i = 0; !st && i < 10000; i++) {
        double start = MPI_Wtime();
        rw_live_report rep;
        st = rw_live_probe(live, 1.0, &rep); /* every round */
        CHECK(st == RW_OK, "probe: %s", rw_last_error());
        rw_live_drift d;
        rw_live_get_drift(live, &d);
        CHECK(d.n_pairs == rep.changed && d.n_nodes == rep.nodes_changed, "%d pairs in the drift, %d in the report",
              (int)d.n_pairs, (int)rep.changed);
        changed_probes += rep.changed > 0;
        if (rank == 0) {
            printf("probe %d %.9f %d", (int)rep.call, start, (int)rep.changed);
            for (int32_t k = 0; k < d.n_pairs; k++)
                printf(" %s>%s", rw_live_node_name(live, d.pairs[k].src), rw_live_node_name(live, d.pairs[k].dst));
            printf(" nodes");
            for (int32_t k = 0; k < d.n_nodes; k++)
                printf(" %s", rw_live_node_name(live, d.nodes[k]));
            printf("\n");
        }
        if (start > until)
            break;
    }
    CHECK(called == changed_probes, "callback called %d times for %d probes with a change", called, changed_probes);
    rw_live_free(&live);
    return 0;
}

static int bcast_check(int round)
{
    int n = 4096, bad = 0;
    int *v = malloc((size_t)n * sizeof *v);
    for (int i = 0; i < n; i++)
        v[i] = rank == 0 ? i * 7 + round : -1;
    MPI_Bcast(v, n, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
        bad += v[i] != i * 7 + round;
    free(v);
    CHECK(bad == 0, "broadcast %d: %d wrong", round, bad);
    return bad;
}

static int decide(const char *model, double until)
{
    rw_live *live = NULL;
    rw_status st = rw_live_init(MPI_COMM_WORLD, model, &live);
    CHECK(st == RW_OK, "init: %s", rw_last_error());
    if (st)
        return 1;
    bcast_check(0);
    bcast_check(1); /* the same size class: decided once */
    if (rank == 0)
        printf("generation %llu\n", (unsigned long long)rw_live_generation());
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; !st && i < 10000 && MPI_Wtime() <= until; i++)
        st = rw_live_probe(live, 1.0, NULL);
    st = rw_live_probe(live, 1.0, NULL); /* one after the change */
    CHECK(st == RW_OK, "probe: %s", rw_last_error());
    if (rank == 0)
        printf("generation %llu\n", (unsigned long long)rw_live_generation());
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    bcast_check(2);
    bcast_check(3);
    rw_live_free(&live);
    return 0;
}

/* The ring 0-1-...-n-1-0 of 64 KiB messages. */
static rw_matrix *ring(int n)
{
    int32_t *src = malloc(2 * (size_t)n * sizeof *src), *dst = malloc(2 * (size_t)n * sizeof *dst);
    int64_t *msgs = malloc(2 * (size_t)n * sizeof *msgs), *bytes = malloc(2 * (size_t)n * sizeof *bytes);
    for (int r = 0; r < n; r++)
        for (int s = 0; s < 2; s++) {
            src[2 * r + s] = r;
            dst[2 * r + s] = (r + (s ? 1 : n - 1)) % n;
            msgs[2 * r + s] = 1;
            bytes[2 * r + s] = 65536;
        }
    rw_matrix *m = NULL;
    rw_status st = rw_matrix_create(n, 2 * n, src, dst, msgs, bytes, &m);
    free(src);
    free(dst);
    free(msgs);
    free(bytes);
    return st ? NULL : m;
}

static int remap(const char *model)
{
    int size = 0, world = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    rw_live *live = NULL;
    rw_status st = rw_live_init(MPI_COMM_WORLD, model, &live);
    CHECK(st == RW_OK, "init: %s", rw_last_error());
    if (st)
        return 1;
    rw_matrix *traffic = ring(size);
    MPI_Comm newcomm = MPI_COMM_NULL;
    double gain = -1;
    st = rw_live_remap(live, traffic, &newcomm, &gain);
    CHECK(st == RW_OK, "remap: %s", rw_last_error());
    CHECK(gain >= 0 && gain < 1, "gain %g", gain);
    if (newcomm == MPI_COMM_NULL) {
        if (rank == 0)
            printf("remap kept %.4f\n", gain);
    } else {
        int nsize = 0, nrank = 0, cmp = 0;
        MPI_Comm_size(newcomm, &nsize);
        MPI_Comm_rank(newcomm, &nrank);
        MPI_Comm_compare(MPI_COMM_WORLD, newcomm, &cmp);
        CHECK(nsize == size && cmp == MPI_SIMILAR, "new communicator of %d ranks, compare %d", nsize, cmp);
        int *old = calloc((size_t)size, sizeof *old), *seen = calloc((size_t)size, sizeof *seen);
        MPI_Allgather(&world, 1, MPI_INT, old, 1, MPI_INT, newcomm);
        for (int r = 0; r < size; r++)
            seen[old[r]]++;
        for (int r = 0; r < size; r++)
            CHECK(seen[r] == 1, "old rank %d appears %d times", r, seen[r]);
        /* data of old rank v goes to new rank v */
        double mine[4] = {world, world * 2.0, world * 3.0, -world}, got[4] = {0};
        st = rw_live_move(mine, got, 4, MPI_DOUBLE, MPI_COMM_WORLD, newcomm);
        CHECK(st == RW_OK && got[0] == nrank && got[1] == 2.0 * nrank && got[3] == -nrank,
              "moved data %g for new rank %d: %s", got[0], nrank, rw_last_error());
        /* the ring on the new order and a collective through the library */
        int left = (nrank + nsize - 1) % nsize, right = (nrank + 1) % nsize, from_left = -1, sum = 0;
        MPI_Sendrecv(&nrank, 1, MPI_INT, right, 5, &from_left, 1, MPI_INT, left, 5, newcomm, MPI_STATUS_IGNORE);
        CHECK(from_left == left, "ring: %d from the left, expected %d", from_left, left);
        MPI_Allreduce(&nrank, &sum, 1, MPI_INT, MPI_SUM, newcomm);
        CHECK(sum == size * (size - 1) / 2, "allreduce %d", sum);
        /* the context follows: a second remap on the new order keeps it */
        MPI_Comm again = MPI_COMM_NULL;
        double gain2 = -1;
        st = rw_live_remap(live, traffic, &again, &gain2);
        CHECK(st == RW_OK && again == MPI_COMM_NULL, "second remap moved again (gain %g): %s", gain2,
              rw_last_error());
        if (nrank == 0) {
            printf("remap ok %.4f order", gain);
            for (int r = 0; r < size; r++)
                printf(" %d", old[r]);
            printf("\n");
        }
        free(old);
        free(seen);
        MPI_Comm_free(&newcomm);
    }
    /* a wrong traffic size is refused the same on every rank */
    rw_matrix *small = ring(size - 1);
    st = rw_live_remap(live, size > 2 ? small : NULL, &newcomm, &gain);
    CHECK(st == RW_ERR_ARG && newcomm == MPI_COMM_NULL, "wrong traffic: status %d", (int)st);
    rw_matrix_free(small);
    rw_matrix_free(traffic);
    rw_live_free(&live);
    return 0;
}

static int errors(const char *model, const char *other)
{
    rw_live *live = NULL;
    rw_live_report rep;
    CHECK(rw_live_probe(NULL, 0, &rep) == RW_ERR_ARG, "probe without a context");
    CHECK(rw_live_init(MPI_COMM_WORLD, model, NULL) == RW_ERR_ARG, "init without a place");
    CHECK(rw_live_init(MPI_COMM_NULL, model, &live) == RW_ERR_ARG && !live, "init on MPI_COMM_NULL");
    /* an unreadable model: the same error everywhere, no context */
    rw_status st = rw_live_init(MPI_COMM_WORLD, "/nonexistent/model.rwm", &live);
    CHECK(st == RW_ERR_IO && live == NULL, "unreadable model: status %d", (int)st);
    /* a model without the ranks' nodes: a context that passes through */
    st = rw_live_init(MPI_COMM_WORLD, other, &live);
    CHECK(st == RW_OK && live, "other model: %s", rw_last_error());
    if (live) {
        st = rw_live_probe(live, 0, &rep);
        CHECK(st == RW_OK && rep.passthrough == 1 && rep.pairs == 0, "pass-through probe");
        MPI_Comm newcomm = MPI_COMM_WORLD;
        double gain = 1;
        rw_matrix *traffic = ring(2);
        st = rw_live_remap(live, traffic, &newcomm, &gain);
        CHECK(st == RW_OK && newcomm == MPI_COMM_NULL && gain == 0, "pass-through remap");
        rw_matrix_free(traffic);
        CHECK(rw_live_model(live) == NULL && rw_live_n_nodes(live) == 0, "pass-through model");
        rw_live_free(&live);
    }
    st = rw_live_init(MPI_COMM_WORLD, model, &live);
    CHECK(st == RW_OK, "init: %s", rw_last_error());
    if (!live)
        return 1;
    CHECK(rw_live_probe(live, -1, &rep) == RW_ERR_ARG, "negative budget");
    CHECK(rw_live_probe(live, NAN, &rep) == RW_ERR_ARG, "NaN budget");
    CHECK(rw_live_set_threshold(live, 1.5) == RW_ERR_ARG, "threshold 1.5");
    CHECK(rw_live_set_timeout(live, 0) == RW_ERR_ARG, "timeout 0");
    CHECK(rw_live_probe(live, 0, &rep) == RW_OK && rep.pairs > 0, "a probe: %s", rw_last_error());
#ifndef RW_SMPI
    /* a timeout no ping-pong meets: the probe gives up, and so do later ones */
    CHECK(rw_live_set_timeout(live, 1e-9) == RW_OK, "timeout");
    st = rw_live_probe(live, 0, &rep);
    CHECK(st == RW_ERR_MPI && strstr(rw_last_error(), "gave up"), "timeout: status %d, %s", (int)st,
          rw_last_error());
    st = rw_live_probe(live, 0, &rep);
    CHECK(st == RW_ERR_STATE, "after giving up: status %d", (int)st);
#endif
    rw_live_free(&live);
    int one = 1, all = 0; /* the application goes on */
    MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(all == size, "allreduce after the live probe: %d", all);
    if (rank == 0)
        printf("errors ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int rc = 2;
    if (argc >= 3 && !strcmp(argv[2], "none")) /* no model: the nodes' names */
        argv[2] = NULL;
    if (argc >= 3 && !strcmp(argv[1], "rotation"))
        rc = rotation(argv[2]);
    else if (argc >= 4 && !strcmp(argv[1], "drift"))
        rc = drift(argv[2], atof(argv[3]));
    else if (argc >= 3 && !strcmp(argv[1], "remap"))
        rc = remap(argv[2]);
    else if (argc >= 4 && !strcmp(argv[1], "decide"))
        rc = decide(argv[2], atof(argv[3]));
    else if (argc >= 4 && !strcmp(argv[1], "errors"))
        rc = errors(argv[2], argv[3]);
    else if (rank == 0)
        fprintf(stderr, "usage: live_api rotation|drift|decide|remap|errors MODEL [T|OTHER]\n");
    printf("failures %d\n", failures);
    MPI_Finalize();
    return rc || failures;
}
