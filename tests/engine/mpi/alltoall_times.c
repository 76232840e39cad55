/* Simulated times of MPI_Alltoall under SMPI (studies/coll/tofu_alltoall.py).
 * Usage: alltoall_times SIZE... (bytes per rank pair). The MPI_ call goes
 * to the MPI or, linked with librankwise_coll, to the library
 * (RANKWISE_COLL_ALLTOALL). One untimed call first (the library's set-up);
 * then every timed call starts on all ranks at one simulated instant, after
 * the previous call's last end, and rank 0 prints "SIZE seconds": the last
 * rank's end minus that instant. The buffers' content does not matter:
 * under SMPI they are shared between ranks (at 64 ranks and 4 MiB per pair,
 * 32 GiB otherwise). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "sim_until.h"

#ifdef SMPI_SHARED_MALLOC
#define BUFFER(bytes) SMPI_SHARED_MALLOC(bytes)
#define RELEASE(p) SMPI_SHARED_FREE(p)
#else
#define BUFFER(bytes) calloc(1, bytes)
#define RELEASE(p) free(p)
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 2) {
        if (me == 0)
            fprintf(stderr, "usage: alltoall_times SIZE...\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int k = argc - 1;
    long most = 1;
    for (int i = 0; i < k; i++) {
        long v = atol(argv[1 + i]);
        if (v < 1 || v > 1L << 30) {
            if (me == 0)
                fprintf(stderr, "alltoall_times: %s is not a size in 1..2^30 bytes\n", argv[1 + i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        most = v > most ? v : most;
    }
    char *a = BUFFER((size_t)most * n), *b = BUFFER((size_t)most * n);
    double took, last = 0, end, start = 0;
    int bad = MPI_Alltoall(a, (int)most, MPI_BYTE, b, (int)most, MPI_BYTE, MPI_COMM_WORLD); /* set-up, untimed */
    for (int i = 0; !bad && i < k; i++) {
        end = MPI_Wtime();
        MPI_Allreduce(&end, &start, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        start += 1e-3; /* one instant on every rank, after everybody's previous end */
        sim_until(start);
        int size = atoi(argv[1 + i]);
        bad = MPI_Alltoall(a, size, MPI_BYTE, b, size, MPI_BYTE, MPI_COMM_WORLD);
        took = MPI_Wtime() - start;
        MPI_Reduce(&took, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (me == 0)
            printf("%s %.9e\n", argv[1 + i], last);
    }
    if (bad) {
        fprintf(stderr, "alltoall_times: MPI_Alltoall failed on rank %d\n", me);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    RELEASE(a);
    RELEASE(b);
    MPI_Finalize();
    return 0;
}
