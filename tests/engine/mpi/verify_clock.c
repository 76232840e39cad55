/* The verification of a decision (engine/mpi/coll/decision/verify.c) under a clock
 * the test sets, and the MPI calls a gather or scatter makes once its
 * outcome is final, for tests/python/coll/test_coll_verify.py. Linked with
 * -rdynamic, so that this program's PMPI_ functions below come before
 * the MPI's for librankwise_coll (preloaded): each forwards to the next
 * definition and counts the calls made inside the collectives of the
 * counted window; PMPI_Wtime returns a clock that advances only as the
 * scenario says, so the trials measure exactly that.
 *
 * Usage: verify_clock OP SCENARIO CALLS AFTER (OP: gather, scatter or
 * bcast of 8 B a rank from rank 0). CALLS calls, then AFTER counted ones.
 *   same    every call takes 0.5 us, the choice's and the MPI's own; the
 *           2nd and 5th timed calls of the MPI's own lose 4 ms (a time
 *           slice): the two cannot be told apart;
 *   faster  the choice 0.25 us a call, the MPI's own 0.5 us; the 2nd and
 *           5th timed calls of the choice lose 4 ms.
 * A call ran the MPI's own when the library sent or received nothing in
 * it (the MPI's own collectives do not go through PMPI_Send and the
 * like). Each rank prints "rank R: after AFTER calls: N MPI calls, P
 * point-to-point, F wrong"; results are checked against MPI's definition. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int same; /* the scenario */
static int in_call, wtimes, p2p, counting;
static long counted, counted_p2p, own_ends, choice_ends;
static double clock_now = 1.0;

#define NEXT(name) static __typeof__(&name) next_; if (!next_) next_ = (__typeof__(&name))dlsym(RTLD_NEXT, #name)
#define COUNT() (counted += counting && in_call)
#define COUNT_P2P() (p2p += in_call, counted_p2p += counting && in_call, COUNT())

double PMPI_Wtime(void)
{
    NEXT(PMPI_Wtime);
    if (!in_call)
        return next_();
    COUNT();
    if (++wtimes == 2) { /* the end of a timed call: what it took */
        int own = p2p == 0;
        long k = own ? ++own_ends : ++choice_ends;
        clock_now += own || same ? 0.5e-6 : 0.25e-6;
        if ((k == 2 || k == 5) && own == same)
            clock_now += 4e-3;
    } else {
        clock_now += 1e-6; /* between calls: not counted by the library */
    }
    return clock_now;
}

int PMPI_Comm_rank(MPI_Comm c, int *r)
{
    NEXT(PMPI_Comm_rank);
    COUNT();
    return next_(c, r);
}

int PMPI_Comm_size(MPI_Comm c, int *n)
{
    NEXT(PMPI_Comm_size);
    COUNT();
    return next_(c, n);
}

int PMPI_Type_size(MPI_Datatype t, int *n)
{
    NEXT(PMPI_Type_size);
    COUNT();
    return next_(t, n);
}

int PMPI_Type_get_envelope(MPI_Datatype t, int *a, int *b, int *c, int *d)
{
    NEXT(PMPI_Type_get_envelope);
    COUNT();
    return next_(t, a, b, c, d);
}

int PMPI_Type_get_extent(MPI_Datatype t, MPI_Aint *lb, MPI_Aint *ext)
{
    NEXT(PMPI_Type_get_extent);
    COUNT();
    return next_(t, lb, ext);
}

int PMPI_Comm_get_attr(MPI_Comm c, int key, void *v, int *flag)
{
    NEXT(PMPI_Comm_get_attr);
    COUNT();
    return next_(c, key, v, flag);
}

int PMPI_Comm_test_inter(MPI_Comm c, int *flag)
{
    NEXT(PMPI_Comm_test_inter);
    COUNT();
    return next_(c, flag);
}

int PMPI_Barrier(MPI_Comm c)
{
    NEXT(PMPI_Barrier);
    COUNT();
    return next_(c);
}

int PMPI_Send(const void *b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c)
{
    NEXT(PMPI_Send);
    COUNT_P2P();
    return next_(b, n, t, to, tag, c);
}

int PMPI_Isend(const void *b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c, MPI_Request *r)
{
    NEXT(PMPI_Isend);
    COUNT_P2P();
    return next_(b, n, t, to, tag, c, r);
}

int PMPI_Recv(void *b, int n, MPI_Datatype t, int from, int tag, MPI_Comm c, MPI_Status *s)
{
    NEXT(PMPI_Recv);
    COUNT_P2P();
    return next_(b, n, t, from, tag, c, s);
}

int PMPI_Irecv(void *b, int n, MPI_Datatype t, int from, int tag, MPI_Comm c, MPI_Request *r)
{
    NEXT(PMPI_Irecv);
    COUNT_P2P();
    return next_(b, n, t, from, tag, c, r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc != 5 || (strcmp(argv[1], "gather") && strcmp(argv[1], "scatter") && strcmp(argv[1], "bcast")) ||
        (strcmp(argv[2], "same") && strcmp(argv[2], "faster"))) {
        if (me == 0)
            fprintf(stderr, "usage: verify_clock gather|scatter|bcast same|faster CALLS AFTER\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    same = !strcmp(argv[2], "same");
    int calls = atoi(argv[3]), after = atoi(argv[4]), wrong = 0;
    char mine[8], *all = malloc(8 * (size_t)n);
    for (int i = 0; i < calls + after; i++) {
        counting = i >= calls;
        for (int k = 0; k < 8; k++)
            mine[k] = (char)(me * 8 + k + i);
        for (int k = 0; k < 8 * n; k++)
            all[k] = me == 0 ? (char)(k + i) : -1;
        in_call = 1, wtimes = 0, p2p = 0;
        if (argv[1][0] == 'g')
            MPI_Gather(mine, 8, MPI_CHAR, all, 8, MPI_CHAR, 0, MPI_COMM_WORLD);
        else if (argv[1][0] == 's')
            MPI_Scatter(all, 8, MPI_CHAR, mine, 8, MPI_CHAR, 0, MPI_COMM_WORLD);
        else
            MPI_Bcast(all, 8, MPI_CHAR, 0, MPI_COMM_WORLD);
        in_call = 0;
        if (argv[1][0] == 'g')
            for (int k = 0; me == 0 && k < 8 * n; k++)
                wrong += all[k] != (char)(k + i);
        else if (argv[1][0] == 's')
            for (int k = 0; k < 8; k++)
                wrong += mine[k] != (char)(me * 8 + k + i);
        else
            for (int k = 0; k < 8; k++)
                wrong += all[k] != (char)(k + i);
    }
    printf("rank %d: after %d calls: %ld MPI calls, %ld point-to-point, %d wrong\n", me, after, counted,
           counted_p2p, wrong);
    free(all);
    MPI_Finalize();
    return 0;
}
