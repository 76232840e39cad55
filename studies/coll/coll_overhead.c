/* Time per call of MPI_Bcast (1 int), MPI_Allreduce (1 int),
 * MPI_Gather (8 bytes per rank, to rank 0) and MPI_Scatter (the same, from
 * rank 0) on
 * MPI_COMM_SELF and MPI_COMM_WORLD, for studies/coll/coll_overhead.py: run once
 * as is and once with librankwise_coll preloaded passing everything
 * through, the difference is the library's cost per call.
 * Usage: coll_overhead ITERATIONS; rank 0 prints "name nanoseconds-per-call". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n, iters = argc > 1 ? atoi(argv[1]) : 100000, v = 1, w, pair[2] = {1, 2};
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int *all = malloc(2 * (size_t)n * sizeof *all);
    MPI_Comm comms[2] = {MPI_COMM_SELF, MPI_COMM_WORLD};
    const char *names[2] = {"self", "world"};
    for (int c = 0; c < 2; c++) {
        for (int i = 0; i < iters / 10; i++) /* warm up */
            MPI_Bcast(&v, 1, MPI_INT, 0, comms[c]);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Bcast(&v, 1, MPI_INT, 0, comms[c]);
        double t1 = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD);
        double t2 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Allreduce(&v, &w, 1, MPI_INT, MPI_SUM, comms[c]);
        double t3 = MPI_Wtime();
        for (int i = 0; i < iters / 10; i++) /* warm up: the decision's trials */
            MPI_Gather(pair, 2, MPI_INT, all, 2, MPI_INT, 0, comms[c]);
        MPI_Barrier(MPI_COMM_WORLD);
        double t4 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Gather(pair, 2, MPI_INT, all, 2, MPI_INT, 0, comms[c]);
        double t5 = MPI_Wtime();
        for (int i = 0; i < iters / 10; i++) /* warm up: the decision's trials */
            MPI_Scatter(all, 2, MPI_INT, pair, 2, MPI_INT, 0, comms[c]);
        MPI_Barrier(MPI_COMM_WORLD);
        double t6 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Scatter(all, 2, MPI_INT, pair, 2, MPI_INT, 0, comms[c]);
        double t7 = MPI_Wtime();
        if (me == 0)
            printf("bcast-%s %.1f\nallreduce-%s %.1f\ngather-%s %.1f\nscatter-%s %.1f\n", names[c],
                   (t1 - t0) / iters * 1e9, names[c], (t3 - t2) / iters * 1e9, names[c], (t5 - t4) / iters * 1e9,
                   names[c], (t7 - t6) / iters * 1e9);
    }
    free(all);
    MPI_Finalize();
    return 0;
}
