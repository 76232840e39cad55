/* Which algorithm Open MPI's allreduce ran, seen from a commutative user
 * operation: the element counts it was called with (recursive doubling
 * combines whole vectors, Rabenseifner's halves them). Runs COUNT ints on
 * MPI_COMM_WORLD, then on a communicator of ranks 0 and 1; checks each
 * result against MPI_SUM's; rank 0 prints a line per communicator and rank:
 *   world RANK: N1,N2,...    pair RANK: N1,...
 * Usage: ompi_op_lengths COUNT */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CALLS 64

static int lengths[MAX_CALLS], n_lengths;

static void add_ints(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    if (n_lengths < MAX_CALLS)
        lengths[n_lengths++] = *len;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* 0 when the user operation's result equals MPI_SUM's */
static int run(MPI_Comm comm, MPI_Op op, int count, const char *label)
{
    int rank, size, world_rank, bad = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    int *in = malloc((size_t)count * sizeof *in), *got = malloc((size_t)count * sizeof *got),
        *want = malloc((size_t)count * sizeof *want);
    for (int i = 0; i < count; i++)
        in[i] = (rank + 1) * 1000 + i;
    n_lengths = 0;
    MPI_Allreduce(in, got, count, MPI_INT, op, comm);
    MPI_Allreduce(in, want, count, MPI_INT, MPI_SUM, comm);
    bad = memcmp(got, want, (size_t)count * sizeof *got) != 0;
    /* rank 0 of comm prints every rank's lengths */
    int all[MAX_CALLS + 1];
    all[0] = n_lengths;
    memcpy(all + 1, lengths, sizeof lengths);
    int *table = rank == 0 ? malloc((size_t)size * sizeof all) : NULL;
    MPI_Gather(all, MAX_CALLS + 1, MPI_INT, table, MAX_CALLS + 1, MPI_INT, 0, comm);
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            printf("%s %d:", label, r);
            for (int k = 0; k < table[r * (MAX_CALLS + 1)]; k++)
                printf("%s%d", k ? "," : " ", table[r * (MAX_CALLS + 1) + 1 + k]);
            printf("\n");
        }
        fflush(stdout);
    }
    free(table);
    free(in);
    free(got);
    free(want);
    int any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm);
    if (any && rank == 0)
        fprintf(stderr, "%s: the user operation's result differs from MPI_SUM's\n", label);
    return any;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int count = argc > 1 ? atoi(argv[1]) : 1024, rank, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Op op;
    MPI_Op_create(add_ints, 1, &op);
    bad |= run(MPI_COMM_WORLD, op, count, "world");
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    if (pair != MPI_COMM_NULL) {
        bad |= run(pair, op, count, "pair");
        MPI_Comm_free(&pair);
    }
    MPI_Op_free(&op);
    MPI_Finalize();
    return bad;
}
