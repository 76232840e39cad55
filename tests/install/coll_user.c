/* An MPI program of librankwise_coll's, built against an installed prefix
 * by tests/python/test_install.py and run under mpirun: each algorithm's
 * allreduce and broadcast against the MPI's own (PMPI_; with no RANKWISE_
 * variable set the library hands those to the MPI), printing one
 * "rank R checks N mismatches M" line per rank. Values are halves, so sums
 * in any order are exact. */
#include <mpi.h>
#include <stdio.h>

#include <rankwise_coll.h>

enum { COUNT = 1000 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, checks = 0, mismatches = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static double in[COUNT], ours[COUNT], theirs[COUNT];
    for (int i = 0; i < COUNT; i++)
        in[i] = (rank + 1) * 0.5 + i;

    const char *reduce_algs[] = {"ring", "recursive_doubling", "binomial"};
    for (int a = 0; a < 3; a++) {
        rw_coll_alg alg;
        if (rw_coll_alg_parse(reduce_algs[a], &alg) != RW_OK ||
            rw_coll_allreduce(in, ours, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, alg) != RW_OK) {
            fprintf(stderr, "coll_user: %s: %s\n", reduce_algs[a], rw_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        PMPI_Allreduce(in, theirs, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < COUNT; i++, checks++)
            mismatches += ours[i] != theirs[i];
    }
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < COUNT; i++)
            ours[i] = theirs[i] = rank == root ? in[i] : -1;
        if (rw_coll_bcast(ours, COUNT, MPI_DOUBLE, root, MPI_COMM_WORLD, RW_COLL_BINOMIAL) != RW_OK) {
            fprintf(stderr, "coll_user: bcast: %s\n", rw_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        PMPI_Bcast(theirs, COUNT, MPI_DOUBLE, root, MPI_COMM_WORLD);
        for (int i = 0; i < COUNT; i++, checks++)
            mismatches += ours[i] != theirs[i];
    }
    printf("rank %d checks %d mismatches %d\n", rank, checks, mismatches);
    MPI_Finalize();
    return mismatches != 0;
}
