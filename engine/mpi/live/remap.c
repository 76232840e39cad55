/* rw_live_remap: the mapper on the live model (placement.c, as MPI's
 * reorder flag uses it), decided on rank 0 and broadcast; the new order
 * is a PMPI_Comm_split by new rank, which the context follows.
 * rw_live_move: the application's data to the process that took its rank.
 *
 * The rules (docs/concepts/live.md, "Remap"): decide on pairs measured since
 * the last change named on their nodes (re-measure them first); move only
 * when the order's cost rose beyond the drift threshold since the last
 * decision (before any, since the start model), or, on the start model's
 * picture, by a gain beyond the noise the model records for the pairs. */
#include "coll.h"
#include "decision/decision.h"
#include "internal.h"
#include "live.h"
#include "../reorder/placement.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { O_STATUS, O_CHANGED, O_GAIN, O_IDENTITY, O_COST, O_REFRESH, O_DECIDED, O_SWEPT, O_LEN };

/* Re-measurements before one decision, at most: each may show pairs the
 * next candidate rests on. */
#define REFRESH_PASSES 4

/* Whether a -> b was measured before a change was named on a pair of a or
 * b: a slowed link shows in every pair through it, and a re-probe measured
 * only some of them. */
static int stale(const rw_live *ctx, int32_t a, int32_t b)
{
    int32_t c = ctx->pair_call[(size_t)a * ctx->n + b];
    return c < ctx->node_change_call[a] || c < ctx->node_change_call[b];
}

/* The noise the model records for a -> b at its size index s: the
 * smallest and largest round trips over the median. */
static void spread(const rw_live *ctx, int32_t a, int32_t b, int s, double *lo, double *hi)
{
    const rw_model *m = ctx->model;
    size_t p = (size_t)ctx->model_index[a] * m->n_nodes + ctx->model_index[b];
    const rw_stat *x = &m->pair_stats[p * m->n_sizes + s];
    *lo = *hi = 1;
    if (x->count > 0 && x->median > 0 && isfinite(x->median) && x->min <= x->median && x->max >= x->median) {
        *lo = x->min / x->median;
        *hi = x->max / x->median;
    }
}

/* The model's size nearest (in log) to the traffic's mean message: where
 * the per-byte part's noise is read. */
static int traffic_size(const rw_model *m, const rw_matrix *traffic)
{
    double msgs = 0, bytes = 0;
    for (int32_t i = 0; i < traffic->n_ranks; i++)
        for (int64_t k = traffic->row_start[i]; k < traffic->row_start[i + 1]; k++)
            if (traffic->dst[k] != i) {
                msgs += (double)traffic->msgs[k];
                bytes += (double)traffic->bytes[k];
            }
    double mean = msgs > 0 && bytes > 0 ? bytes / msgs : 1;
    int best = m->n_sizes - 1;
    for (int s = 0; s < m->n_sizes; s++)
        if (fabs(log((double)m->sizes[s] / mean)) < fabs(log((double)m->sizes[best] / mean)))
            best = s;
    return best;
}

/* Rank 0: the candidate (new_rank_of, when `moved`) against the current
 * order, pair by pair. *robust: the predicted saving with each node pair
 * the current order loads more at its smallest round trips and each the
 * candidate loads more at its largest (the latency part's noise at the
 * smallest size, none where latencies are noise; the per-byte part's the
 * widest from the live model's large size to the one nearest the
 * traffic's messages), so a gain made of the model's noise comes out <= 0.
 * want[2k], want[2k+1] (a < b), *n_want: the stale pairs, those the
 * current order loads (`candidate` 0), or those whose load the candidate
 * changes (2); or (1, a sweep: the mapper would otherwise move ranks onto
 * the pairs the re-probes missed) every pair not measured in this call. id_cost, cand_cost (n*n, zeroed):
 * what each order costs on each node pair; start_cost: the current order
 * on the start model's figures. */
static rw_status judge(const rw_live *ctx, const rw_matrix *traffic, const int *new_rank_of, int moved, int candidate,
                       double *robust, int *want, int32_t *n_want, double *id_cost, double *cand_cost,
                       double *start_cost)
{
    int32_t n = ctx->n, nv = traffic->n_ranks;
    size_t nn = (size_t)n * n;
    double *da = calloc(nn, sizeof *da), *db = calloc(nn, sizeof *db);
    char *used = calloc(nn, 1);
    int32_t *slots = calloc((size_t)n, sizeof *slots), *cand = malloc(((size_t)nv + 1) * sizeof *cand);
    rw_network *net = NULL;
    rw_status st = da && db && used && slots && cand ? RW_OK : rw_fail(RW_ERR_NOMEM, "out of memory for %d nodes", (int)n);
    for (int r = 0; !st && r < ctx->size; r++) {
        slots[ctx->node_of[r]]++;
        if (new_rank_of[r] < nv)
            cand[new_rank_of[r]] = ctx->node_of[r];
    }
    if (!st)
        st = rw_network_from_model(ctx->model, n, ctx->model_index, slots, 1, NULL, &net);
    for (int32_t i = 0; !st && i < nv; i++)
        for (int64_t k = traffic->row_start[i]; k < traffic->row_start[i + 1]; k++) {
            int32_t j = traffic->dst[k];
            if (j == i)
                continue;
            double msgs = (double)traffic->msgs[k], bytes = (double)traffic->bytes[k];
            size_t p = (size_t)ctx->node_of[i] * n + ctx->node_of[j];
            if (ctx->node_of[i] != ctx->node_of[j]) {
                da[p] += msgs * net->alpha[p];
                db[p] += bytes * net->beta[p];
                id_cost[p] += msgs * net->alpha[p] + bytes * net->beta[p];
                if (ctx->start_net)
                    start_cost[p] += msgs * ctx->start_net->alpha[p] + bytes * ctx->start_net->beta[p];
                used[p] = 1;
            }
            p = (size_t)cand[i] * n + cand[j];
            if (moved && cand[i] != cand[j]) {
                da[p] -= msgs * net->alpha[p];
                db[p] -= bytes * net->beta[p];
                cand_cost[p] += msgs * net->alpha[p] + bytes * net->beta[p];
            }
        }
    *robust = 0;
    *n_want = 0;
    /* the per-byte figures come from the live model's large size and
     * serve the traffic's: the noise of both, and of the sizes between */
    int large = st ? 0 : traffic_size(ctx->model, traffic), live_large = ctx->size_index[ctx->n_sizes - 1];
    int lo_size = large < live_large ? large : live_large, hi_size = large < live_large ? live_large : large;
    for (int32_t a = 0; !st && a < n; a++)
        for (int32_t b = 0; b < n; b++) {
            size_t p = (size_t)a * n + b, q = (size_t)b * n + a;
            double d = da[p] + db[p], lo0, hi0, lo1, hi1;
            if (a == b)
                continue;
            if (d != 0) {
                spread(ctx, a, b, 0, &lo0, &hi0);
                if (ctx->noisy_latency) /* one latency for every pair then (network.c): no pair's noise */
                    lo0 = hi0 = 1;
                lo1 = hi1 = 1;
                for (int z = lo_size; z <= hi_size; z++) {
                    double l, h;
                    spread(ctx, a, b, z, &l, &h);
                    lo1 = fmin(lo1, l);
                    hi1 = fmax(hi1, h);
                }
                *robust += d > 0 ? da[p] * lo0 + db[p] * lo1 : da[p] * hi0 + db[p] * hi1;
            }
            int involved = candidate == 1 ? 1
                           : candidate == 2 ? moved && (d != 0 || da[q] + db[q] != 0)
                                            : used[p] || used[q];
            /* a sweep takes every pair this call has not measured: the
             * changes it finds would leave their nodes' other pairs stale */
            int old = candidate == 1 ? ctx->pair_call[p] < ctx->call || ctx->pair_call[q] < ctx->call
                                     : stale(ctx, a, b) || stale(ctx, b, a);
            if (a < b && involved && old) {
                want[2 * *n_want] = a;
                want[2 * *n_want + 1] = b;
                ++*n_want;
            }
        }
    rw_network_free(net);
    free(da);
    free(db);
    free(used);
    free(slots);
    free(cand);
    return st;
}

/* Rank 0: the plan, into out[] and new_rank_of; out[O_REFRESH] > 0: the
 * pairs in want to re-measure first (only when may_refresh). */
static void plan(rw_live *ctx, const rw_matrix *traffic, int *new_rank_of, double *out, int *want, int may_refresh)
{
    rw_status st = RW_OK;
    int32_t *model_node = malloc((size_t)ctx->size * sizeof *model_node);
    rwc_placement p = {0};
    double robust = 0;
    int32_t n_want = 0;
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
    /* Decided on pairs measured since the last change named on their
     * nodes: a re-probe measures a slice, while a slowed link shows in
     * every pair through it. First the current order's pairs (is its cost
     * up?), then the pairs a move would rest on (the mapper would move
     * ranks onto the pairs the re-probes missed). */
    int moved = p.changed, decided = 1, rise = 0, changed = 0;
    const char *why = moved ? "remapped" : "kept";
    size_t nn = (size_t)ctx->n * ctx->n;
    double *id_cost = st ? NULL : calloc(nn, sizeof *id_cost), *cand_cost = st ? NULL : calloc(nn, sizeof *cand_cost);
    double *start_cost = st ? NULL : calloc(nn, sizeof *start_cost);
    if (!st && (!id_cost || !cand_cost || !start_cost))
        st = rw_fail(RW_ERR_NOMEM, "out of memory for %d nodes", (int)ctx->n);
    if (!st)
        st = judge(ctx, traffic, new_rank_of, moved, 0, &robust, want, &n_want, id_cost, cand_cost, start_cost);
    /* a sweep of every stale pair before a move: at most once per
     * tournament cycle, so sweeps at most double the live probe's
     * measurements; between them, the pairs the candidate would load */
    int sweep = !ctx->swept_call || ctx->swept_call == ctx->call || ctx->call - ctx->swept_call >= ctx->cycle_calls;
    if (!st && n_want == 0) {
        /* the order's cost against the last decision's, or before any
         * decision against the start model's figures */
        const double *anchor = ctx->placed_pair ? ctx->placed_pair : ctx->start_net ? start_cost : NULL;
        double now = 0, was = 0;
        for (size_t q = 0; anchor && q < nn; q++) {
            now += id_cost[q];
            was += anchor[q];
        }
        changed = !anchor || now > was * (1 + ctx->threshold);
        rise = changed || !ctx->placed_pair;
        if (rise && moved && (changed || robust > 0)) {
            memset(id_cost, 0, nn * sizeof *id_cost);
            memset(cand_cost, 0, nn * sizeof *cand_cost);
            memset(start_cost, 0, nn * sizeof *start_cost);
            st = judge(ctx, traffic, new_rank_of, moved, sweep ? 1 : 2, &robust, want, &n_want, id_cost, cand_cost,
                       start_cost);
            if (!st && n_want > 0 && may_refresh && sweep)
                ctx->swept_call = ctx->call;
        }
    }
    if (!st && n_want > 0 && may_refresh) {
        why = "re-measuring its pairs first";
        moved = decided = 0;
    } else if (!st && !rise) {
        /* After the first decision, only a change of the network moves
         * ranks: the order's own cost must have risen beyond the drift
         * threshold since. Re-probes bring noise too, and a mapper rerun
         * on it finds gains no run would see (docs/concepts/live.md). */
        if (moved)
            why = n_want ? "kept: its pairs are not re-measured since the change" : "kept: the order's cost has not risen";
        moved = decided = 0;
    } else if (!st && moved && !changed && !(robust > 0)) {
        /* a first decision on the start model's picture reads its gain off
         * that model: beyond the noise it records, or it is the noise */
        why = "kept: the gain is within the pairs' noise";
        moved = 0;
    } else if (!st && moved && n_want > 0) {
        why = "kept: its pairs are not re-measured since the change";
        moved = decided = 0;
    }
    if (!st && decided) { /* what the order placed costs, pair by pair: the next rise is against it */
        free(ctx->placed_pair);
        ctx->placed_pair = moved ? cand_cost : id_cost;
        if (moved)
            cand_cost = NULL;
        else
            id_cost = NULL;
    }
    free(id_cost);
    free(cand_cost);
    free(start_cost);
    for (int r = 0; !st && !moved && r < ctx->size; r++)
        new_rank_of[r] = r;
    out[O_STATUS] = st;
    out[O_CHANGED] = !st && moved;
    out[O_GAIN] = !st && p.identity > 0 ? 1 - p.cost / p.identity : 0;
    out[O_IDENTITY] = p.identity;
    out[O_COST] = p.cost;
    out[O_REFRESH] = !st && may_refresh && !decided && n_want > 0 ? n_want : 0;
    out[O_DECIDED] = !st && decided;
    out[O_SWEPT] = ctx->swept_call;
    if (!st && live_tracing())
        fprintf(stderr,
                "rankwise-live: remap of %d ranks on %d nodes: current %.6g s, %s %.6g s (gain %.1f %%, %.1f %% "
                "beyond the pairs' noise, %d pairs not re-measured since a change, last sweep at probe %d): %s\n",
                ctx->size, (int)p.n_nodes, p.identity, rw_algorithm_name(p.algorithm), p.cost, 100 * out[O_GAIN],
                p.identity > 0 ? 100 * robust / p.identity : 0, (int)n_want, (int)ctx->swept_call, why);
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
    int *want = malloc(((size_t)ctx->n * ctx->n + 1) * sizeof *want);
    double out[O_LEN] = {RW_ERR_NOMEM, 0, 0, 0, 0, 0, 0, 0};
    /* where the decision's pair costs arrive on a rank that has none yet */
    double *placed = ctx->placed_pair ? NULL : malloc((size_t)ctx->n * ctx->n * sizeof *placed);
    int ok = new_rank_of && want && (ctx->placed_pair || placed), all = 0;
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, ctx->comm) != MPI_SUCCESS || !all) {
        free(new_rank_of);
        free(want);
        free(placed);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a remap of %d ranks", ctx->size);
    }
    rw_status st = RW_OK;
    for (int pass = 0; !st; pass++) {
        if (ctx->rank == 0)
            plan(ctx, traffic, new_rank_of, out, want, pass < REFRESH_PASSES);
        st = rwc_mpi(PMPI_Bcast(out, O_LEN, MPI_DOUBLE, 0, ctx->comm), "MPI_Bcast (remap)");
        if (!st && out[O_STATUS] != RW_OK && ctx->rank != 0)
            st = rw_fail((rw_status)out[O_STATUS], "rw_live_remap failed on rank 0");
        else if (!st)
            st = (rw_status)out[O_STATUS]; /* rank 0 keeps its own message */
        /* the decision's state to every rank: a remap gives rank 0 to
         * another process, which decides next time */
        if (!st)
            ctx->swept_call = (int32_t)out[O_SWEPT];
        if (!st && out[O_DECIDED] && !ctx->placed_pair) { /* rank 0 set its own */
            ctx->placed_pair = placed;
            placed = NULL;
        }
        if (!st && out[O_DECIDED])
            st = rwc_mpi(PMPI_Bcast(ctx->placed_pair, ctx->n * ctx->n, MPI_DOUBLE, 0, ctx->comm), "MPI_Bcast (remap)");
        if (st || !(out[O_REFRESH] > 0))
            break;
        int32_t n_want = (int32_t)out[O_REFRESH];
        st = rwc_mpi(PMPI_Bcast(want, 2 * n_want, MPI_INT, 0, ctx->comm), "MPI_Bcast (remap)");
        if (!st)
            st = live_refresh(ctx, want, n_want);
    }
    free(want);
    free(placed);
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
