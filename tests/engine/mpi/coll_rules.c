/* The collectives on one communicator, for tests/python/coll/test_coll_rules.py:
 * which decision path the library takes there (RANKWISE_COLL_TRACE lines
 * name it: "(rules)", "(model)") and whether the results are right. The
 * communicator is MPI_COMM_WORLD, a duplicate of it (the world's ranks in
 * order: the rules apply), the world reversed or split in halves (other
 * ranks: the rules must not apply). Bcast, reduce (sum), gather, scatter
 * and allreduce from/to every root, at 1, 300 and 20000 ints; each result
 * is checked against the value it must have.
 * Usage: coll_rules world|dup|reversed|split — prints "coll_rules: C
 * checks, F failures" on rank 0 of MPI_COMM_WORLD, exit 1 when F > 0;
 * coll_rules init|init_thread starts MPI (MPI_Init, MPI_Init_thread) and
 * ends it without a collective. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long checks, failures;

static void check(int ok, const char *what, int root, int count)
{
    checks++;
    if (!ok && ++failures <= 10)
        fprintf(stderr, "coll_rules: FAIL %s root %d count %d\n", what, root, count);
}

static int value(int rank, int i)
{
    return rank * 1000 + i % 997;
}

static void run(MPI_Comm comm, int root, int count)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int *a = malloc(sizeof(int) * (size_t)count), *b = malloc(sizeof(int) * (size_t)count * (size_t)n);
    int ok = 1;

    for (int i = 0; i < count; i++)
        a[i] = me == root ? value(root, i) : -1;
    MPI_Bcast(a, count, MPI_INT, root, comm);
    for (int i = 0; i < count; i++)
        ok &= a[i] == value(root, i);
    check(ok, "bcast", root, count);

    for (int i = 0; i < count; i++)
        a[i] = value(me, i);
    MPI_Reduce(a, b, count, MPI_INT, MPI_SUM, root, comm);
    ok = 1;
    for (int i = 0; me == root && i < count; i++)
        ok &= b[i] == 1000 * n * (n - 1) / 2 + n * (i % 997);
    check(ok, "reduce", root, count);

    MPI_Gather(a, count, MPI_INT, b, count, MPI_INT, root, comm);
    ok = 1;
    for (int r = 0; me == root && r < n; r++)
        for (int i = 0; i < count; i++)
            ok &= b[(size_t)r * count + i] == value(r, i);
    check(ok, "gather", root, count);

    for (size_t k = 0; me == root && k < (size_t)count * n; k++)
        b[k] = value((int)(k / count), (int)(k % count)) + 7;
    MPI_Scatter(b, count, MPI_INT, a, count, MPI_INT, root, comm);
    ok = 1;
    for (int i = 0; i < count; i++)
        ok &= a[i] == value(me, i) + 7;
    check(ok, "scatter", root, count);

    for (int i = 0; i < count; i++)
        a[i] = value(me, i);
    MPI_Allreduce(a, b, count, MPI_INT, MPI_SUM, comm);
    ok = 1;
    for (int i = 0; i < count; i++)
        ok &= b[i] == 1000 * n * (n - 1) / 2 + n * (i % 997);
    check(ok, "allreduce", root, count);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "world";
    int provided;
    if (!strcmp(mode, "init_thread"))
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    else
        MPI_Init(&argc, &argv);
    if (!strncmp(mode, "init", 4)) {
        MPI_Finalize();
        return 0;
    }
    int wr, wn;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &wn);
    MPI_Comm comm = MPI_COMM_WORLD;
    if (!strcmp(mode, "dup"))
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    else if (!strcmp(mode, "reversed"))
        MPI_Comm_split(MPI_COMM_WORLD, 0, wn - wr, &comm);
    else if (!strcmp(mode, "split"))
        MPI_Comm_split(MPI_COMM_WORLD, wr < wn / 2, wr, &comm);
    int n;
    MPI_Comm_size(comm, &n);
    const int counts[] = {1, 300, 20000};
    for (int root = 0; root < n; root++)
        for (int c = 0; c < 3; c++)
            run(comm, root, counts[c]);
    /* point-to-point: a collective on the world would add its own trace lines */
    long all[2] = {checks, failures}, sum[2] = {checks, failures};
    if (wr != 0)
        MPI_Send(all, 2, MPI_LONG, 0, 0, MPI_COMM_WORLD);
    for (int r = 1; wr == 0 && r < wn; r++) {
        MPI_Recv(all, 2, MPI_LONG, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sum[0] += all[0];
        sum[1] += all[1];
    }
    if (wr == 0)
        printf("coll_rules: %ld checks, %ld failures\n", sum[0], sum[1]);
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
    MPI_Finalize();
    return wr == 0 && sum[1] > 0;
}
