/* Repeated long broadcasts, reduces and allreduces through MPI_ (so the
 * algorithm the environment or a rules file chooses runs), each result
 * checked: a stress run for the pipelined algorithms, whose ranks must
 * never wait on each other's sends (a rendezvous protocol completes a send
 * only once its receive is posted).
 *
 * Usage: pipeline_stress [repetitions] — prints "pipeline_stress: C
 * checks, F failures" on rank 0, exit status 1 when F > 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static const int SIZES[] = {1024, 65536, 300000, 1 << 20, 4 << 20}; /* bytes */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n, reps = argc > 1 ? atoi(argv[1]) : 2;
    long checks = 0, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int most = SIZES[sizeof SIZES / sizeof *SIZES - 1] / (int)sizeof(int);
    int *a = malloc(sizeof(int) * (size_t)most), *b = malloc(sizeof(int) * (size_t)most);
    for (int r = 0; r < reps; r++)
        for (size_t s = 0; s < sizeof SIZES / sizeof *SIZES; s++)
            for (int root = 0; root < n; root += n - 1 > 0 ? n - 1 : 1) {
                int count = SIZES[s] / (int)sizeof(int);
                for (int i = 0; i < count; i++)
                    a[i] = me == root ? i ^ (r + root) : -1;
                MPI_Bcast(a, count, MPI_INT, root, MPI_COMM_WORLD);
                for (int i = 0; i < count; i++)
                    bad += a[i] != (i ^ (r + root));
                for (int i = 0; i < count; i++)
                    a[i] = i % 1000 + me;
                MPI_Reduce(a, b, count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
                for (int i = 0; me == root && i < count; i++)
                    bad += b[i] != n * (i % 1000) + n * (n - 1) / 2;
                MPI_Allreduce(a, b, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
                for (int i = 0; i < count; i++)
                    bad += b[i] != n * (i % 1000) + n * (n - 1) / 2;
                checks += 3;
                if (n == 1)
                    break;
            }
    long mine[2] = {checks, bad}, all[2];
    MPI_Reduce(mine, all, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("pipeline_stress: %ld checks, %ld failures\n", all[0], all[1]);
    free(a);
    free(b);
    MPI_Finalize();
    return me == 0 && all[1] > 0;
}
