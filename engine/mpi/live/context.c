/* A live context: the communicator's nodes in the model, the node and
 * leader communicators, every rank's copy of the model, the settings.
 *
 * A rank's node is found as the collectives find it (net_decide.c): its
 * processor name (blanks as '_'), else "name:<rank in MPI_COMM_WORLD>"
 * (`rankwise probe --group-by rank` names). Ranks on one model node are
 * one node: its lowest rank at rw_live_init is its leader, which measures
 * for it. Node k is the k-th of the model's nodes the ranks are on.
 * Without a model the nodes are the processor names and the model is made
 * here, every pair unmeasured. */
#include "coll.h"
#include "decision/decision.h"
#include "internal.h"
#include "live.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define NAME_LEN RWC_NAME_LEN

static int warned;

int live_tracing(void)
{
    return rwc_tracing(); /* RANKWISE_COLL_TRACE, parsed once (comm/trace.c) */
}

static void warn_once(const rw_live *ctx, const char *what)
{
    if (ctx->rank == 0 && !warned)
        fprintf(stderr, "rankwise-live: warning: %s (the live model passes through)\n", what);
    warned = 1;
}

/* The sizes measured: the model's smallest and its nearest to LIVE_LARGE. */
static void choose_sizes(rw_live *ctx)
{
    const rw_model *m = ctx->model;
    int best = m->n_sizes - 1;
    for (int s = 0; s < m->n_sizes; s++)
        if (fabs(log((double)m->sizes[s] / LIVE_LARGE)) < fabs(log((double)m->sizes[best] / LIVE_LARGE)))
            best = s;
    ctx->size_index[0] = 0;
    ctx->sizes[0] = m->sizes[0];
    ctx->n_sizes = 1;
    if (best > 0) {
        ctx->size_index[1] = best;
        ctx->sizes[1] = m->sizes[best];
        ctx->n_sizes = 2;
    }
}

/* The model without a file: the distinct names, in order of first rank. */
static rw_status fresh_model(const char *names, int size, rw_model **out)
{
    const char **distinct = malloc((size_t)size * sizeof *distinct);
    int32_t *ranks = calloc((size_t)size, sizeof *ranks);
    int n = 0;
    rw_status st = distinct && ranks ? RW_OK : rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks", size);
    for (int r = 0; !st && r < size; r++) {
        const char *name = names + (size_t)r * NAME_LEN;
        int k = 0;
        while (k < n && strcmp(distinct[k], name))
            k++;
        if (k == n)
            distinct[n++] = name;
        ranks[k]++;
    }
    const int64_t sizes[2] = {LIVE_SMALL, LIVE_LARGE};
    if (!st)
        st = rw_model_create(n, distinct, ranks, 2, sizes, out);
    if (!st)
        snprintf((*out)->source, sizeof (*out)->source, "rankwise live probe (in the job)");
    free(distinct);
    free(ranks);
    return st;
}

/* The same status on every rank: the worst; a rank whose own call went
 * well says another failed. */
static rw_status agree(MPI_Comm comm, rw_status st, const char *what)
{
    int mine = (int)st, worst = 0;
    if (PMPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return rw_fail(RW_ERR_MPI, "MPI_Allreduce failed while %s", what);
    if (worst && !st)
        return rw_fail((rw_status)worst, "another rank failed while %s", what);
    return (rw_status)worst;
}

static double unix_now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec;
}

static int by_index(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The nodes of the ranks (model nodes model_node[r]) and the buffers (no
 * MPI: a failure is agreed on before any communicator is made). */
static rw_status set_up_nodes(rw_live *ctx, const int32_t *model_node)
{
    ctx->node_of = malloc((size_t)ctx->size * sizeof *ctx->node_of);
    ctx->model_index = malloc((size_t)ctx->size * sizeof *ctx->model_index);
    if (!ctx->node_of || !ctx->model_index)
        return rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks", ctx->size);
    /* the nodes in the model's order: the tournament then pairs them in
     * the rounds the probe that made the model used (on the same nodes),
     * and a concurrent round's figures depend on which pairs share it */
    ctx->n = 0;
    for (int r = 0; r < ctx->size; r++) {
        int32_t k = 0;
        while (k < ctx->n && ctx->model_index[k] != model_node[r])
            k++;
        if (k == ctx->n)
            ctx->model_index[ctx->n++] = model_node[r];
    }
    qsort(ctx->model_index, (size_t)ctx->n, sizeof *ctx->model_index, by_index);
    for (int r = 0; r < ctx->size; r++)
        for (int32_t k = 0; k < ctx->n; k++)
            if (ctx->model_index[k] == model_node[r])
                ctx->node_of[r] = k;
    ctx->me = ctx->node_of[ctx->rank];
    if (!(ctx->pair_call = calloc((size_t)ctx->n * ctx->n, sizeof *ctx->pair_call)) ||
        !(ctx->node_change_call = calloc((size_t)ctx->n, sizeof *ctx->node_change_call)))
        return rw_fail(RW_ERR_NOMEM, "out of memory for %d nodes", (int)ctx->n);
    if (!(ctx->buf = calloc((size_t)ctx->sizes[ctx->n_sizes - 1], 1)))
        return rw_fail(RW_ERR_NOMEM, "out of memory for a %lld-byte message", (long long)ctx->sizes[ctx->n_sizes - 1]);
    return RW_OK;
}

/* The node's ranks, and the leaders (the lowest rank of each node), rank
 * k of theirs leading node k. */
static rw_status split(rw_live *ctx)
{
    int leader = 1;
    for (int r = 0; r < ctx->rank; r++)
        leader &= ctx->node_of[r] != ctx->me;
    rw_status st = rwc_mpi(PMPI_Comm_split(ctx->comm, ctx->me, ctx->rank, &ctx->node), "MPI_Comm_split (node)");
    if (!st)
        st = rwc_mpi(PMPI_Comm_split(ctx->comm, leader ? 0 : MPI_UNDEFINED, ctx->me, &ctx->leaders),
                     "MPI_Comm_split (leaders)");
    return st;
}

/* names and world ranks of every rank, in rank order */
static rw_status gather_names(rw_live *ctx, char **names, int **world)
{
    char mine[NAME_LEN] = {0};
    int len = 0, me = 0;
    PMPI_Get_processor_name(mine, &len);
    for (char *p = mine; *p; p++)
        if (*p == ' ' || *p == '\t')
            *p = '_';
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    *names = calloc((size_t)ctx->size, NAME_LEN);
    *world = calloc((size_t)ctx->size, sizeof **world);
    rw_status st = *names && *world ? RW_OK : rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks", ctx->size);
    if ((st = agree(ctx->comm, st, "gathering the ranks' names")))
        return st;
    st = rwc_mpi(PMPI_Allgather(mine, NAME_LEN, MPI_CHAR, *names, NAME_LEN, MPI_CHAR, ctx->comm), "MPI_Allgather");
    if (!st)
        st = rwc_mpi(PMPI_Allgather(&me, 1, MPI_INT, *world, 1, MPI_INT, ctx->comm), "MPI_Allgather");
    return st;
}

static rw_status init(rw_live *ctx, MPI_Comm comm, const char *path)
{
    rw_status st = rwc_mpi(PMPI_Comm_dup(comm, &ctx->comm), "MPI_Comm_dup");
    if (st)
        return st;
    PMPI_Comm_get_errhandler(comm, &ctx->app_errors);
    PMPI_Comm_set_errhandler(ctx->comm, MPI_ERRORS_RETURN);
    PMPI_Comm_size(ctx->comm, &ctx->size);
    PMPI_Comm_rank(ctx->comm, &ctx->rank);
    char *names = NULL;
    int *world = NULL;
    int32_t *model_node = NULL;
    if (!(st = gather_names(ctx, &names, &world))) {
        st = path ? rwc_model_read(path, &ctx->model) : fresh_model(names, ctx->size, &ctx->model);
        st = agree(ctx->comm, st, path ? "reading the model" : "making the model");
    }
    if (!st && !(model_node = malloc((size_t)ctx->size * sizeof *model_node)))
        st = rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks", ctx->size);
    if (!st && path && rwc_model_nodes(ctx->model, path, names, world, ctx->size, model_node) != RW_OK) {
        warn_once(ctx, rw_last_error()); /* the same names and model everywhere: every rank sees it */
        ctx->passthrough = 1;
    }
    for (int r = 0; !st && !path && r < ctx->size; r++) /* fresh_model's nodes, in order of first rank */
        for (int32_t k = 0; k < ctx->model->n_nodes; k++)
            if (!strcmp(ctx->model->node_names[k], names + (size_t)r * NAME_LEN))
                model_node[r] = k;
    if (!st && !ctx->passthrough) {
        choose_sizes(ctx);
        /* as the mapper's network reads them (network.c): a loaded stack's
         * 8-byte round trips are the scheduler's, not the pair's */
        ctx->noisy_latency = ctx->n_sizes > 1 && rw_model_latency_noisy(ctx->model) == 1;
        st = agree(ctx->comm, set_up_nodes(ctx, model_node), "setting up the live probe");
    }
    if (!st && !ctx->passthrough && ctx->n >= 2)
        st = split(ctx);
    if (!st && !ctx->passthrough && ctx->n < 2) {
        warn_once(ctx, "the communicator's ranks are all on one node: nothing to measure");
        ctx->passthrough = 1;
    }
    if (!st && ctx->passthrough) {
        rw_model_free(ctx->model);
        ctx->model = NULL;
    }
    if (!st && !ctx->passthrough) {
        double start[2] = {unix_now(), 0};
        st = rwc_mpi(PMPI_Bcast(start, 1, MPI_DOUBLE, 0, ctx->comm), "MPI_Bcast");
        ctx->wall0 = start[0];
        ctx->wtime0 = PMPI_Wtime();
        if (!st && (ctx->complete = live_complete(ctx)))
            live_publish(ctx);
        int32_t *slots = ctx->complete ? calloc((size_t)ctx->n, sizeof *slots) : NULL;
        for (int r = 0; slots && r < ctx->size; r++)
            slots[ctx->node_of[r]]++;
        /* the start figures, to tell a change from the start model's own
         * picture (every rank: whichever holds rank 0 decides a remap) */
        if (slots && rw_network_from_model(ctx->model, ctx->n, ctx->model_index, slots, 1, NULL, &ctx->start_net))
            ctx->start_net = NULL; /* then a first decision has no start figures: it counts as after a change */
        free(slots);
    }
    free(names);
    free(world);
    free(model_node);
    return st;
}

rw_status rw_live_init(MPI_Comm comm, const char *model_path, rw_live **out)
{
    if (!out)
        return rw_fail(RW_ERR_ARG, "rw_live_init: no place for the context");
    *out = NULL;
    int inter = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return rw_fail(RW_ERR_ARG, "rw_live_init: not a communicator");
    if (inter)
        return rw_fail(RW_ERR_STATE, "rw_live_init: an intercommunicator");
    rw_live *ctx = calloc(1, sizeof *ctx);
    int ok = ctx != NULL, all = 0;
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS || !all) {
        free(ctx);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a live context");
    }
    ctx->comm = ctx->node = ctx->leaders = MPI_COMM_NULL;
    ctx->app_errors = MPI_ERRHANDLER_NULL;
    ctx->threshold = 0.10;
    ctx->min_gain = 0.10;
    ctx->timeout = 10;
    rw_status st = init(ctx, comm, model_path);
    if (st) {
        rw_live_free(&ctx);
        return st;
    }
    *out = ctx;
    return RW_OK;
}

void rw_live_free(rw_live **pctx)
{
    if (!pctx || !*pctx)
        return;
    rw_live *ctx = *pctx;
    live_withdraw(ctx);
    rw_model_free(ctx->model);
    free(ctx->node_of);
    free(ctx->model_index);
    free(ctx->pair_call);
    free(ctx->node_change_call);
    free(ctx->placed_pair);
    rw_network_free(ctx->start_net);
    free(ctx->changes);
    free(ctx->changed_nodes);
    free(ctx->buf);
    if (ctx->leaders != MPI_COMM_NULL)
        PMPI_Comm_free(&ctx->leaders);
    if (ctx->node != MPI_COMM_NULL)
        PMPI_Comm_free(&ctx->node);
    if (ctx->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&ctx->comm);
    if (ctx->app_errors != MPI_ERRHANDLER_NULL)
        PMPI_Errhandler_free(&ctx->app_errors);
    free(ctx);
    *pctx = NULL;
}

static rw_status fraction(double x, const char *what)
{
    return x >= 0 && x < 1 ? RW_OK : rw_fail(RW_ERR_ARG, "%s must be in [0, 1), got %g", what, x);
}

rw_status rw_live_set_threshold(rw_live *ctx, double x)
{
    if (!ctx)
        return rw_fail(RW_ERR_ARG, "rw_live_set_threshold: no context");
    rw_status st = fraction(x, "the drift threshold");
    if (!st)
        ctx->threshold = x;
    return st;
}

rw_status rw_live_set_min_gain(rw_live *ctx, double x)
{
    if (!ctx)
        return rw_fail(RW_ERR_ARG, "rw_live_set_min_gain: no context");
    rw_status st = fraction(x, "the remap's minimum gain");
    if (!st)
        ctx->min_gain = x;
    return st;
}

rw_status rw_live_set_timeout(rw_live *ctx, double seconds)
{
    if (!ctx)
        return rw_fail(RW_ERR_ARG, "rw_live_set_timeout: no context");
    if (!(seconds > 0) || !isfinite(seconds))
        return rw_fail(RW_ERR_ARG, "the live probe's timeout must be > 0 s, got %g", seconds);
    ctx->timeout = seconds;
    return RW_OK;
}

rw_status rw_live_on_drift(rw_live *ctx, rw_live_drift_fn fn, void *arg)
{
    if (!ctx)
        return rw_fail(RW_ERR_ARG, "rw_live_on_drift: no context");
    ctx->on_drift = fn;
    ctx->on_drift_arg = arg;
    return RW_OK;
}

rw_status rw_live_get_drift(const rw_live *ctx, rw_live_drift *out)
{
    if (!ctx || !out)
        return rw_fail(RW_ERR_ARG, "rw_live_get_drift: no context or no place for the drift");
    *out = (rw_live_drift){ctx->n_changes, ctx->changes, ctx->n_changed_nodes, ctx->changed_nodes};
    return RW_OK;
}

int32_t rw_live_n_nodes(const rw_live *ctx)
{
    return ctx && !ctx->passthrough ? ctx->n : 0;
}

const char *rw_live_node_name(const rw_live *ctx, int32_t node)
{
    if (!ctx || ctx->passthrough || node < 0 || node >= ctx->n)
        return NULL;
    return ctx->model->node_names[ctx->model_index[node]];
}

int32_t rw_live_pair_call(const rw_live *ctx, int32_t src, int32_t dst)
{
    if (!ctx || ctx->passthrough || src < 0 || dst < 0 || src >= ctx->n || dst >= ctx->n)
        return 0;
    return ctx->pair_call[(size_t)src * ctx->n + dst];
}

const rw_model *rw_live_model(const rw_live *ctx)
{
    return ctx ? ctx->model : NULL;
}

const char *rw_live_last_error(void)
{
    return rw_last_error();
}
