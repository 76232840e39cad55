/* MPI_Dist_graph_create called again and again on MPI_COMM_WORLD, each
 * rank giving its ring edges: under Open MPI 4.1 the edges travel on the
 * parent communicator with fixed internal tags that the tag counter of
 * its nonblocking collectives reaches after a few dozen communicators,
 * and the creation then waits forever on every rank in most runs at 7
 * ranks (open-mpi/ompi#13918). Under librankwise_coll every call must end
 * (tests/python/coll/test_coll_topo.py). argv[1]: the reorder flag (0
 * when not given). Prints "dist_graph_repeat: N graphs" on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { CALLS = 60 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me = 0, n = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int reorder = argc > 1 ? atoi(argv[1]) : 0;
    int dest[2] = {(me + 1) % n, (me + n - 1) % n}, weight[2] = {1, 1}, degree = 2, made = 0;
    for (int i = 0; i < CALLS; i++) {
        MPI_Comm c = MPI_COMM_NULL;
        if (MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, &degree, dest, weight, MPI_INFO_NULL, reorder, &c) ==
                MPI_SUCCESS &&
            c != MPI_COMM_NULL) {
            made++;
            MPI_Comm_free(&c);
        }
    }
    if (me == 0)
        printf("dist_graph_repeat: %d graphs\n", made);
    MPI_Finalize();
    return 0;
}
