/* MPI_Alltoall in the library: pairwise (step s: send to me + s, receive
 * from me - s; the baseline) and symmetric with injection-rate control
 * (Ajima, Tofu: the uniformly overlaid symmetrical pattern; the order and
 * sub-phases are engine/src/predict/alltoall_symmetric.c's, which the
 * predictor's schedule shares). Blocks go out in the send type and come in
 * in the receive type; with MPI_IN_PLACE the receive buffer is copied aside
 * first (every block is sent from the copy, received in place). */
#include "alltoall_symmetric.h"
#include "base.h"
#include "internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A rank's blocks: block j at base + j * count * extent. */
typedef struct blocks {
    char *base;
    int count;
    MPI_Datatype type;
    MPI_Aint ext;
} blocks;

static char *block(const blocks *b, int j)
{
    return b->base + (MPI_Aint)j * b->count * b->ext;
}

static rw_status pairwise(const blocks *s, const blocks *r, int me, int n, MPI_Comm dup)
{
    rw_status st = RW_OK;
    for (int k = 1; !st && k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        st = rwc_mpi(PMPI_Sendrecv(block(s, to), s->count, s->type, to, RWC_TAG_ALLTOALL, block(r, from), r->count,
                                   r->type, from, RWC_TAG_ALLTOALL, dup, MPI_STATUS_IGNORE),
                     "MPI_Sendrecv (alltoall)");
    }
    return st;
}

static rw_status symmetric(const blocks *s, const blocks *r, int me, int n, int cap, MPI_Comm dup)
{
    cap = cap > n ? n : cap; /* a sub-phase never holds more than every peer */
    int32_t *shift = malloc((size_t)n * sizeof *shift), *start = malloc((size_t)n * sizeof *start);
    MPI_Request *req = malloc(2 * (size_t)(cap < 2 ? 2 : cap) * sizeof *req);
    rw_status st = shift && start && req ? RW_OK : rw_fail(RW_ERR_NOMEM, "alltoall: out of memory for %d ranks", n);
    int32_t k = st ? 0 : rw_a2a_subphases(n, cap, shift, start);
    for (int32_t j = 0; !st && j < k; j++) {
        int m = 0;
        /* the sub-phase's receives first, so that no send waits for its receive to be posted */
        for (int32_t i = start[j]; !st && i < start[j + 1]; i++, m++) {
            int from = (me - shift[i] + n) % n;
            st = rwc_mpi(PMPI_Irecv(block(r, from), r->count, r->type, from, RWC_TAG_ALLTOALL, dup, &req[m]),
                         "MPI_Irecv (alltoall)");
        }
        for (int32_t i = start[j]; !st && i < start[j + 1]; i++, m++) {
            int to = (me + shift[i]) % n;
            st = rwc_mpi(PMPI_Isend(block(s, to), s->count, s->type, to, RWC_TAG_ALLTOALL, dup, &req[m]),
                         "MPI_Isend (alltoall)");
        }
        /* a failed post leaves earlier requests: wait for them before failing (their buffers are the user's) */
        rw_status wst = rwc_mpi(PMPI_Waitall(m, req, MPI_STATUSES_IGNORE), "MPI_Waitall (alltoall)");
        if (!st)
            st = wst;
    }
    free(shift);
    free(start);
    free(req);
    return st;
}

rw_status rwc_run_alltoall(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype,
                           MPI_Comm comm, rw_coll_alg alg, const rwc_params *prm)
{
    int inter = 0;
    size_t sbytes = 0, rbytes;
    if (comm == MPI_COMM_NULL)
        return rw_fail(RW_ERR_ARG, "MPI_COMM_NULL");
    if (alg == RW_COLL_PASSTHROUGH || !rw_algo_valid(RW_COLL_ALLTOALL, (int)alg)) {
        char known[128];
        return rw_fail(RW_ERR_ARG, "%s is not an alltoall algorithm (%s)",
                       rw_coll_alg_name(alg) ? rw_coll_alg_name(alg) : "an unknown value",
                       rw_algo_names(known, sizeof known, RW_ALGO_BINOMIAL, RW_COLL_ALLTOALL, 1));
    }
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return rw_fail(RW_ERR_ARG, "not a communicator");
    if (inter)
        return rw_fail(RW_ERR_STATE, "an intercommunicator (passed to the MPI)");
    if (rc < 0 || (s != MPI_IN_PLACE && sc < 0))
        return rw_fail(RW_ERR_ARG, "count %d is negative", rc < 0 ? rc : sc);
    rw_status st = rwc_type_bytes(rc, rtype, &rbytes);
    if (!st && s != MPI_IN_PLACE)
        st = rwc_type_bytes(sc, stype, &sbytes);
    if (st)
        return st;
    if (s != MPI_IN_PLACE && sbytes != rbytes) /* MPI reports the mismatch */
        return rw_fail(RW_ERR_ARG, "alltoall sends %zu bytes per rank and receives %zu", sbytes, rbytes);
    rwc_comm *c;
    if ((st = rwc_comm_get(comm, &c)))
        return st;
    if (rbytes == 0)
        return RW_OK;
    MPI_Aint lb, rext, sext;
    if ((st = rwc_mpi(PMPI_Type_get_extent(rtype, &lb, &rext), "MPI_Type_get_extent")))
        return st;
    blocks rb = {r, rc, rtype, rext}, sb = {(char *)s, sc, stype, 0};
    void *mem = NULL;
    if (s == MPI_IN_PLACE) {
        if ((size_t)rc * (size_t)c->size > INT_MAX) /* the copy aside is one MPI count */
            return rw_fail(RW_ERR_STATE, "%d blocks of %d elements exceed an MPI count", c->size, rc);
        char *base;
        if ((st = rwc_typed_alloc(rc * c->size, rtype, &mem, &base)) ||
            (st = rwc_copy(r, rc * c->size, rtype, base, rc * c->size, rtype, c->dup))) {
            free(mem);
            return st;
        }
        sb = (blocks){base, rc, rtype, rext};
    } else {
        if ((st = rwc_mpi(PMPI_Type_get_extent(stype, &lb, &sext), "MPI_Type_get_extent")))
            return st;
        sb.ext = sext;
        st = rwc_copy(block(&sb, c->rank), sc, stype, block(&rb, c->rank), rc, rtype, c->dup);
    }
    int cap = !st && alg == RW_COLL_SYMMETRIC ? prm->cap(c, rbytes) : 0;
    rwc_trace(RW_COLL_ALLTOALL, alg, comm, rbytes);
    if (!st && c->size > 1)
        st = alg == RW_COLL_PAIRWISE ? pairwise(&sb, &rb, c->rank, c->size, c->dup)
                                     : symmetric(&sb, &rb, c->rank, c->size, cap, c->dup);
    free(mem);
    return st;
}
