/* Time per call of MPI_Bcast, MPI_Scatter and MPI_Gather from rank 0 at
 * several sizes, for studies/coll/coll_verify_real.py: the same binary runs as
 * is and with librankwise_coll preloaded (a model, verification on or off).
 * Each size: 600 untimed calls (the library's trials and set-up: at most
 * 2 + 4 x 2 + 256 x 2 calls, engine/mpi/coll/decision/verify.c), then the median
 * over 7 batches of the slowest rank's mean time per call.
 * Usage: coll_verify_real CALLS_PER_BATCH; rank 0 prints "op bytes us". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static const int SIZES[] = {8, 512, 1024, 4096, 65536};
enum { BATCHES = 7, UNTIMED = 600 };

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void call(int op, char *buf, char *all, int bytes)
{
    if (op == 0)
        MPI_Bcast(buf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    else if (op == 1)
        MPI_Scatter(all, bytes, MPI_BYTE, buf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    else
        MPI_Gather(buf, bytes, MPI_BYTE, all, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n, calls = argc > 1 ? atoi(argv[1]) : 200;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    char *buf = calloc(65536, 1), *all = calloc((size_t)65536 * n, 1);
    static const char *name[] = {"bcast", "scatter", "gather"};
    for (int op = 0; op < 3; op++)
        for (size_t s = 0; s < sizeof SIZES / sizeof *SIZES; s++) {
            for (int i = 0; i < UNTIMED; i++)
                call(op, buf, all, SIZES[s]);
            double t[BATCHES];
            for (int b = 0; b < BATCHES; b++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double start = MPI_Wtime();
                for (int i = 0; i < calls; i++)
                    call(op, buf, all, SIZES[s]);
                double mine = (MPI_Wtime() - start) / calls;
                MPI_Allreduce(&mine, &t[b], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            }
            qsort(t, BATCHES, sizeof *t, by_value);
            if (me == 0)
                printf("%s %d %.3f\n", name[op], SIZES[s], t[BATCHES / 2] * 1e6);
        }
    free(buf);
    free(all);
    MPI_Finalize();
    return 0;
}
