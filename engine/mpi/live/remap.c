/* rw_live_remap: the mapper on the live model (placement.c, as MPI's
 * reorder flag uses it), decided on rank 0 and broadcast; the new order
 * is a PMPI_Comm_split by new rank, which the context follows.
 * rw_live_move: the application's data to the process that took its rank. */
#include "coll.h"
#include "internal.h"
#include "live.h"
#include "placement.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { O_STATUS, O_CHANGED, O_GAIN, O_IDENTITY, O_COST, O_LEN };

/* Rank 0: the plan, into out[] and new_rank_of. */
static void plan(rw_live *ctx, const rw_matrix *traffic, int *new_rank_of, double *out)
{
    rw_status st = RW_OK;
    int32_t *model_node = malloc((size_t)ctx->size * sizeof *model_node);
    rwc_placement p = {0};
    if (!traffic)
        st = rw_fail(RW_ERR_ARG, "rw_live_remap: no traffic");
    else if (traffic->n_ranks != ctx->size)
        st = rw_fail(RW_ERR_ARG, "rw_live_remap: traffic between %d ranks on a communicator of %d",
                     (int)traffic->n_ranks, ctx->size);
    else if (!ctx->complete)
        st = rw_fail(RW_ERR_STATE, "rw_live_remap: the live model has not measured every pair of the "
                                   "communicator's nodes yet");
    else if (!model_node)
        st = rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks", ctx->size);
    for (int r = 0; !st && r < ctx->size; r++)
        model_node[r] = ctx->model_index[ctx->node_of[r]];
    if (!st)
        st = rwc_place_on_model(ctx->model, traffic, model_node, ctx->size, ctx->min_gain, new_rank_of, &p);
    free(model_node);
    /* After the first decision, only a change of the network moves ranks:
     * the order's own cost must have risen beyond the drift threshold
     * since. Re-probes bring noise too, and a mapper rerun on it finds
     * gains no run would see (docs/live-model.md, "Remap"). */
    const char *why = p.changed ? "remapped" : "kept";
    if (!st && ctx->placed_cost > 0 && !(p.identity > ctx->placed_cost * (1 + ctx->threshold))) {
        if (p.changed)
            why = "kept: the order's cost has not risen";
        p.changed = 0;
        for (int r = 0; r < ctx->size; r++)
            new_rank_of[r] = r;
    } else if (!st) {
        ctx->placed_cost = p.changed ? p.cost : p.identity;
    }
    out[O_STATUS] = st;
    out[O_CHANGED] = !st && p.changed;
    out[O_GAIN] = !st && p.identity > 0 ? 1 - p.cost / p.identity : 0;
    out[O_IDENTITY] = p.identity;
    out[O_COST] = p.cost;
    if (!st && live_tracing())
        fprintf(stderr,
                "rankwise-live: remap of %d ranks on %d nodes: current %.6g s, %s %.6g s (gain %.1f %%): %s\n",
                ctx->size, (int)p.n_nodes, p.identity, rw_algorithm_name(p.algorithm), p.cost, 100 * out[O_GAIN],
                why);
}

/* The context on the new order: its communicator and each rank's node. */
static rw_status follow(rw_live *ctx, MPI_Comm newcomm, const int *new_rank_of)
{
    int32_t *node_of = malloc((size_t)ctx->size * sizeof *node_of);
    MPI_Comm dup = MPI_COMM_NULL;
    rw_status st = rwc_mpi(PMPI_Comm_dup(newcomm, &dup), "MPI_Comm_dup");
    if (!st && !node_of)
        st = rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks", ctx->size);
    if (st) {
        free(node_of);
        if (dup != MPI_COMM_NULL)
            PMPI_Comm_free(&dup);
        return st;
    }
    for (int r = 0; r < ctx->size; r++)
        node_of[new_rank_of[r]] = ctx->node_of[r];
    PMPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    PMPI_Comm_free(&ctx->comm);
    ctx->comm = dup;
    PMPI_Comm_rank(dup, &ctx->rank);
    free(ctx->node_of);
    ctx->node_of = node_of;
    return RW_OK;
}

rw_status rw_live_remap(rw_live *ctx, const rw_matrix *traffic, MPI_Comm *newcomm, double *gain)
{
    if (!ctx || !newcomm)
        return rw_fail(RW_ERR_ARG, "rw_live_remap: no context or no place for the communicator");
    *newcomm = MPI_COMM_NULL;
    if (gain)
        *gain = 0;
    if (ctx->passthrough)
        return RW_OK;
    int *new_rank_of = malloc((size_t)ctx->size * sizeof *new_rank_of);
    double out[O_LEN] = {RW_ERR_NOMEM, 0, 0, 0, 0};
    int ok = new_rank_of != NULL, all = 0;
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, ctx->comm) != MPI_SUCCESS || !all) {
        free(new_rank_of);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a remap of %d ranks", ctx->size);
    }
    if (ctx->rank == 0)
        plan(ctx, traffic, new_rank_of, out);
    rw_status st = rwc_mpi(PMPI_Bcast(out, O_LEN, MPI_DOUBLE, 0, ctx->comm), "MPI_Bcast (remap)");
    if (!st && out[O_STATUS] != RW_OK && ctx->rank != 0)
        st = rw_fail((rw_status)out[O_STATUS], "rw_live_remap failed on rank 0");
    else if (!st)
        st = (rw_status)out[O_STATUS]; /* rank 0 keeps its own message */
    if (!st && out[O_CHANGED])
        st = rwc_mpi(PMPI_Bcast(new_rank_of, ctx->size, MPI_INT, 0, ctx->comm), "MPI_Bcast (remap)");
    if (!st && out[O_CHANGED])
        st = rwc_mpi(PMPI_Comm_split(ctx->comm, 0, new_rank_of[ctx->rank], newcomm), "MPI_Comm_split (remap)");
    if (!st && out[O_CHANGED] && ctx->app_errors != MPI_ERRHANDLER_NULL) /* the split took our handler */
        PMPI_Comm_set_errhandler(*newcomm, ctx->app_errors);
    if (!st && out[O_CHANGED] && (st = follow(ctx, *newcomm, new_rank_of)))
        PMPI_Comm_free(newcomm);
    if (!st && gain)
        *gain = out[O_GAIN];
    free(new_rank_of);
    return st;
}

rw_status rw_live_move(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Comm oldcomm,
                       MPI_Comm newcomm)
{
    int old = 0, now = 0, size = 0, old_size = 0;
    rw_status st = rwc_mpi(PMPI_Comm_rank(oldcomm, &old), "MPI_Comm_rank");
    if (!st)
        st = rwc_mpi(PMPI_Comm_rank(newcomm, &now), "MPI_Comm_rank");
    if (!st)
        st = rwc_mpi(PMPI_Comm_size(newcomm, &size), "MPI_Comm_size");
    if (!st)
        st = rwc_mpi(PMPI_Comm_size(oldcomm, &old_size), "MPI_Comm_size");
    if (!st && size != old_size)
        return rw_fail(RW_ERR_ARG, "rw_live_move: communicators of %d and %d ranks", old_size, size);
    int *old_of = st ? NULL : malloc((size_t)size * sizeof *old_of);
    if (!st && !old_of)
        st = rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks", size);
    if (!st)
        st = rwc_mpi(PMPI_Allgather(&old, 1, MPI_INT, old_of, 1, MPI_INT, newcomm), "MPI_Allgather (move)");
    int from = -1; /* the process whose old rank is my new one */
    for (int q = 0; !st && q < size; q++)
        if (old_of[q] == now)
            from = q;
    if (!st)
        st = rwc_mpi(PMPI_Sendrecv(sendbuf, count, type, old, 0, recvbuf, count, type, from, 0, newcomm,
                                   MPI_STATUS_IGNORE),
                     "MPI_Sendrecv (move)");
    free(old_of);
    return st;
}
