/* Fault injection for tests: world rank RW_STOP_RANK stops itself (SIGSTOP)
 * at its first MPI_Isend with tag T (RW_STOP_AT=isend:T) or its first
 * MPI_Ibcast (RW_STOP_AT=ibcast), as a node that stops answering at a chosen
 * point of a run. Built as a shared object and preloaded ahead of the MPI
 * library (LD_PRELOAD), the program under test unchanged. */
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static int stops_here(const char *call, int tag)
{
    const char *at = getenv("RW_STOP_AT"), *rank = getenv("RW_STOP_RANK");
    int me;
    if (!at || !rank || PMPI_Comm_rank(MPI_COMM_WORLD, &me) != MPI_SUCCESS || me != atoi(rank))
        return 0;
    size_t n = strlen(call);
    if (strncmp(at, call, n) != 0)
        return 0;
    return at[n] == ':' ? atoi(at + n + 1) == tag : at[n] == '\0';
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    if (stops_here("isend", tag))
        raise(SIGSTOP);
    return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req)
{
    if (stops_here("ibcast", -1))
        raise(SIGSTOP);
    return PMPI_Ibcast(buf, count, type, root, comm, req);
}
