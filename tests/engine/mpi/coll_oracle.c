/* Times of broadcasts under SMPI, for the oracle test
 * (tests/python/coll/test_coll_oracle.py): rankwise's binomial and flat
 * broadcasts must take the same simulated time as SMPI's own pinned
 * binomial_tree and flattree. Every call starts on all ranks at one
 * instant (each rank sleeps until it: a barrier would release the ranks
 * at different instants, and the library's first call makes its
 * communicator's duplicate, which takes simulated time); each rank prints
 * "rank call nanoseconds" from that instant to the end of its call.
 * Usage: coll_oracle (an SMPI program; nanosleep is SMPI's). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "sim_until.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const int sizes[] = {1, 1000, 60000, 300000, 1 << 20};
    const int n_sizes = sizeof sizes / sizeof *sizes;
    char *buf = calloc(1 << 20, 1);
    MPI_Bcast(buf, 1, MPI_CHAR, 0, MPI_COMM_WORLD); /* the library's set-up, untimed */
    double took[2 * sizeof sizes / sizeof *sizes];
    int calls = 0;
    for (int r = 0; r < 2; r++) {
        int root = r == 0 ? 0 : n / 2 + 1 < n ? n / 2 + 1 : n - 1;
        for (int s = 0; s < n_sizes; s++) {
            double start = 0.1 * (calls + 1); /* far after the previous call's end */
            sim_until(start);
            double t0 = MPI_Wtime();
            MPI_Bcast(buf, sizes[s], MPI_CHAR, root, MPI_COMM_WORLD);
            took[calls++] = MPI_Wtime() - t0;
        }
    }
    for (int c = 0; c < calls; c++)
        printf("%d %d %.0f\n", me, c, took[c] * 1e9);
    free(buf);
    MPI_Finalize();
    return 0;
}
