/* A plain MPI application that knows nothing of rankwise (no rankwise
 * header, built with mpicc alone), for LD_PRELOAD of librankwise_coll,
 * alone or under the profiler: one call of each of the six collectives,
 * each result checked against its known value. Prints "coll_app: ok" on
 * rank 0, exit status 1 on a wrong result. Usage: coll_app [repeat] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n, bad = 0, repeat = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int *all = malloc(sizeof(int) * (size_t)n * 25);
    for (int it = 0; it < repeat; it++) {
        int v[25];
        for (int i = 0; i < 25; i++)
            v[i] = me == 0 ? i * i : -1;
        MPI_Bcast(v, 25, MPI_INT, 0, MPI_COMM_WORLD); /* root 0, 100 bytes */
        for (int i = 0; i < 25; i++)
            bad |= v[i] != i * i;
        double d[3] = {me, 2.0 * me, 1.0}, sum[3];
        MPI_Reduce(d, sum, 3, MPI_DOUBLE, MPI_SUM, 1 % n, MPI_COMM_WORLD); /* root 1, 24 bytes */
        if (me == 1 % n)
            bad |= sum[0] != n * (n - 1) / 2.0 || sum[2] != n;
        int mine[4] = {me, me + 1, me + 2, me + 3};
        MPI_Gather(mine, 4, MPI_INT, all, 4, MPI_INT, 2 % n, MPI_COMM_WORLD); /* root 2, 16 bytes */
        if (me == 2 % n)
            for (int r = 0; r < n; r++)
                bad |= all[4 * r + 3] != r + 3;
        int got[4];
        for (int i = 0; i < 4 * n; i++)
            all[i] = i;
        MPI_Scatter(all, 4, MPI_INT, got, 4, MPI_INT, n - 1, MPI_COMM_WORLD);
        bad |= got[0] != 4 * me;
        int one = 1, count = 0;
        MPI_Allreduce(&one, &count, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        bad |= count != n;
        MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < n; r++)
            bad |= all[r] != r;
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (me == 0)
        printf(any ? "coll_app: WRONG\n" : "coll_app: ok\n");
    free(all);
    MPI_Finalize();
    return any;
}
