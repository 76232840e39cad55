/* The requests of a pipelined algorithm, waited for together (pipeline.h). */
#include "pipeline.h"

#include "internal.h"

#include <stdlib.h>

rw_status rwc_pipe_open(rwc_pipe *p, int n_recv, int lanes, int depth)
{
    *p = (rwc_pipe){.n_recv = n_recv, .lanes = lanes, .depth = depth};
    size_t n = (size_t)n_recv + (size_t)lanes * (size_t)depth;
    p->req = malloc((n > 0 ? n : 1) * sizeof *p->req);
    p->in_flight = calloc((size_t)(lanes > 0 ? lanes : 1), sizeof *p->in_flight);
    if (!p->req || !p->in_flight) {
        free(p->req);
        free(p->in_flight);
        *p = (rwc_pipe){0};
        return rw_fail(RW_ERR_NOMEM, "out of memory for %zu requests", n);
    }
    for (size_t i = 0; i < n; i++)
        p->req[i] = MPI_REQUEST_NULL;
    return RW_OK;
}

int rwc_pipe_room(const rwc_pipe *p, int lane)
{
    return p->in_flight[lane] < p->depth;
}

rw_status rwc_pipe_send(rwc_pipe *p, int lane, const void *buf, int count, MPI_Datatype type, int to, int tag,
                        MPI_Comm comm)
{
    MPI_Request *slot = p->req + p->n_recv + (size_t)lane * (size_t)p->depth;
    int i = 0;
    while (i < p->depth && slot[i] != MPI_REQUEST_NULL)
        i++;
    if (i == p->depth)
        return rw_fail(RW_ERR_STATE, "pipeline: lane %d has no free send slot", lane);
    if (PMPI_Isend(buf, count, type, to, tag, comm, &slot[i]) != MPI_SUCCESS)
        return rw_fail(RW_ERR_MPI, "MPI_Isend (pipeline) to rank %d failed", to);
    p->in_flight[lane]++;
    return RW_OK;
}

rw_status rwc_pipe_wait(rwc_pipe *p, int *recv)
{
    int n = p->n_recv + p->lanes * p->depth, idx = MPI_UNDEFINED;
    *recv = -1;
    if (PMPI_Waitany(n, p->req, &idx, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return rw_fail(RW_ERR_MPI, "MPI_Waitany (pipeline) failed");
    if (idx == MPI_UNDEFINED)
        return rw_fail(RW_ERR_STATE, "pipeline: waiting with nothing pending");
    p->req[idx] = MPI_REQUEST_NULL;
    if (idx < p->n_recv)
        *recv = idx;
    else
        p->in_flight[(idx - p->n_recv) / p->depth]--;
    return RW_OK;
}

rw_status rwc_pipe_close(rwc_pipe *p, rw_status st)
{
    if (!p->req)
        return st;
    for (int i = 0; i < p->n_recv; i++)
        if (p->req[i] != MPI_REQUEST_NULL) { /* only after a failure */
            PMPI_Cancel(&p->req[i]);
            PMPI_Request_free(&p->req[i]);
        }
    /* the sends are waited for even after a failure: their buffers are
     * the caller's, freed once this returns */
    rw_status sent = rwc_mpi(PMPI_Waitall(p->lanes * p->depth, p->req + p->n_recv, MPI_STATUSES_IGNORE),
                             "MPI_Waitall (pipeline)");
    st = st ? st : sent;
    free(p->req);
    free(p->in_flight);
    *p = (rwc_pipe){0};
    return st;
}
