/* Calls timed in the 'other' class: communicator management and
 * cancellation (MPI_Request_free is in p2p.c with the persistent sends).
 * They add no traffic; communicators need no wrapper for the translation
 * to world ranks, which is built at a communicator's first use. */
#include "profile.h"

#define OTHER_CALL(call)                                                                           \
    RWP_ENTER;                                                                                     \
    int rc = (call);                                                                               \
    RWP_LEAVE(RWP_OTHER);                                                                          \
    return rc

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) { OTHER_CALL(PMPI_Comm_dup(comm, newcomm)); }

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    OTHER_CALL(PMPI_Comm_split(comm, color, key, newcomm));
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    OTHER_CALL(PMPI_Comm_create(comm, group, newcomm));
}

int MPI_Comm_free(MPI_Comm *comm) { OTHER_CALL(PMPI_Comm_free(comm)); }

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm *newcomm)
{
    OTHER_CALL(PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm));
}

int MPI_Cancel(MPI_Request *request) { OTHER_CALL(PMPI_Cancel(request)); }
