/* Simulated times of collectives under SMPI, compared with the predictor
 * (tests/python/coll/test_coll_allsel.py, studies/coll/coll_all_validate.py).
 * Usage: coll_times OP SIZE... with OP
 *   allreduce  MPI_Allreduce of SIZE / 4 floats (MPI_SUM)
 *   allgather  MPI_Allgather of SIZE bytes per rank
 *   reduce     MPI_Reduce of SIZE / 4 floats to rank 0
 *   bcast      MPI_Bcast of SIZE bytes from rank 0
 *   tree=FILE  rw_coll_reduce_tree of SIZE / 4 floats along the tree in FILE
 *              (a line of parents, -1 at the root, and a line of sibling
 *              places, smaller sent to first)
 * The MPI_ calls go to the MPI or, linked with librankwise_coll, to the
 * library (RANKWISE_COLL_<OP>). One untimed call first (the library's
 * set-up: its communicator duplicate and node communicators); then every
 * timed call starts on all ranks at one simulated instant (each rank sleeps
 * until it) and rank 0 prints "SIZE seconds", the last rank's end minus
 * that instant: what the predictor predicts. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rankwise_coll.h"
#include "sim_until.h"

static int call(const char *op, const rw_tree *t, long bytes, char *a, char *b)
{
    int count = (int)(bytes / 4);
    if (t)
        return rw_coll_reduce_tree(a, b, count, MPI_FLOAT, MPI_SUM, t, MPI_COMM_WORLD) != RW_OK;
    if (!strcmp(op, "allreduce"))
        return MPI_Allreduce(a, b, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (!strcmp(op, "allgather"))
        return MPI_Allgather(a, (int)bytes, MPI_BYTE, b, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    if (!strcmp(op, "reduce"))
        return MPI_Reduce(a, b, count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (!strcmp(op, "bcast"))
        return MPI_Bcast(a, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    return 1;
}

static rw_tree *read_tree(const char *path, int n)
{
    FILE *f = fopen(path, "r");
    int *parent = malloc(n * sizeof(int)), *order = malloc(n * sizeof(int)), root = -1;
    rw_tree *t = NULL;
    int ok = f != NULL;
    for (int i = 0; ok && i < n; i++)
        ok = fscanf(f, "%d", &parent[i]) == 1;
    for (int i = 0; ok && i < n; i++)
        ok = fscanf(f, "%d", &order[i]) == 1;
    for (int i = 0; ok && i < n; i++)
        if (parent[i] < 0)
            root = i;
    if (ok && rw_tree_from_parents(n, root, parent, order, &t) != RW_OK)
        t = NULL;
    if (f)
        fclose(f);
    free(parent);
    free(order);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 3) {
        if (me == 0)
            fprintf(stderr, "usage: coll_times OP SIZE...\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *op = argv[1];
    rw_tree *t = NULL;
    if (!strncmp(op, "tree=", 5) && !(t = read_tree(op + 5, n))) {
        if (me == 0)
            fprintf(stderr, "coll_times: %s is not a tree over %d ranks\n", op + 5, n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int k = argc - 2;
    long most = 8;
    for (int i = 0; i < k; i++)
        if (atol(argv[2 + i]) > most)
            most = atol(argv[2 + i]);
    char *a = calloc(most, 1), *b = calloc(most * n, 1);
    double *took = calloc(k, sizeof *took), *last = calloc(k, sizeof *last);
    int bad = call(op, t, atol(argv[2]), a, b); /* set-up, untimed */
    for (int i = 0; !bad && i < k; i++) {
        double start = 0.1 * (i + 1); /* one instant on every rank, far after the previous call's end */
        sim_until(start);
        bad = call(op, t, atol(argv[2 + i]), a, b);
        took[i] = MPI_Wtime() - start;
    }
    if (bad) {
        fprintf(stderr, "coll_times: %s failed on rank %d\n", op, me);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Reduce(took, last, k, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me == 0)
        for (int i = 0; i < k; i++)
            printf("%s %.9e\n", argv[2 + i], last[i]);
    rw_tree_free(t);
    free(a);
    free(b);
    free(took);
    free(last);
    MPI_Finalize();
    return 0;
}
