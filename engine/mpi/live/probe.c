/* rw_live_probe: the next slice of the node pairs, measured by the
 * leaders in the rounds of a round-robin tournament (rw_tournament_partner:
 * the pairs of a round at once, both ways, as the full probe's concurrent
 * mode), as many rounds as the budget allows from what a round took last
 * time. Each leader's results go to every leader (MPI_Allgather), then to
 * its node's ranks (MPI_Bcast): every rank merges the same table into its
 * copy of the model (merge.c). */
#include "coll.h"
#include "decision/decision.h"
#include "internal.h"
#include "live.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A leader's block: its header (whether it measured everything, the
 * time from the probe's start to its end of measuring, the time of the
 * measurement), then one entry per round of the slice. */
enum { H_OK, H_SECONDS, H_WHEN, H_LEN };

static size_t block_len(int rounds)
{
    return H_LEN + (size_t)rounds * LIVE_ENTRY;
}

static int rounds_for(const rw_live *ctx, double budget, int total)
{
    if (!(ctx->round_seconds > 0))
        return 1; /* nothing known yet: one round, then the budget decides */
    double r = floor(budget / ctx->round_seconds);
    return r < 1 ? 1 : r > total ? total : (int)r;
}

/* This leader's block: peer[t] (< 0: none) in each round. */
static void measure_rounds(rw_live *ctx, const int32_t *peer, int rounds, double t0, double *block)
{
    rw_status st = RW_OK;
    for (int t = 0; t < rounds; t++) {
        double *e = block + H_LEN + (size_t)t * LIVE_ENTRY;
        e[0] = -1;
        rw_stat got[LIVE_MAX_SIZES];
        if (peer[t] < 0 || st || (st = live_measure_pair(ctx, peer[t], ctx->buf, got)))
            continue; /* after a failure nothing more is sent; the peers time out or fail too */
        e[0] = peer[t];
        for (int s = 0; s < ctx->n_sizes; s++) {
            e[1 + 3 * s] = got[s].min;
            e[2 + 3 * s] = got[s].median;
            e[3 + 3 * s] = got[s].max;
        }
    }
    block[H_OK] = !st;
    block[H_SECONDS] = PMPI_Wtime() - t0;
    block[H_WHEN] = ctx->wall0 + (PMPI_Wtime() - ctx->wtime0);
}

/* The samples of the table (n blocks); NULL and *n_out 0 when none. */
static rw_status samples_of(const rw_live *ctx, const double *table, int rounds, live_sample **out, int32_t *n_out)
{
    size_t len = block_len(rounds);
    live_sample *s = malloc(((size_t)ctx->n * rounds + 1) * sizeof *s);
    if (!s)
        return rw_fail(RW_ERR_NOMEM, "out of memory for a live probe of %d nodes", (int)ctx->n);
    int32_t k = 0;
    for (int32_t a = 0; a < ctx->n; a++)
        for (int t = 0; t < rounds; t++) {
            const double *e = table + a * len + H_LEN + (size_t)t * LIVE_ENTRY;
            if (e[0] < 0)
                continue;
            s[k] = (live_sample){.src = a, .dst = (int32_t)e[0]};
            for (int z = 0; z < ctx->n_sizes; z++) {
                double mn = e[1 + 3 * z], md = e[2 + 3 * z], mx = e[3 + 3 * z];
                s[k].stat[z] = (rw_stat){mn, md, mx, md > 0 ? (mx - mn) / md : 0, LIVE_REPS};
            }
            k++;
        }
    *out = s;
    *n_out = k;
    return RW_OK;
}

/* Changed pairs a trace line names: enough for a round of 16 nodes both ways. */
#define TRACE_PAIRS 16

/* The changed pairs of the last merge, for a trace line. */
static void trace_changes(const rw_live *ctx)
{
    for (int32_t k = 0; k < ctx->n_changes && k < TRACE_PAIRS; k++) {
        const rw_live_pair_change *c = &ctx->changes[k];
        fprintf(stderr, "%s %s->%s x%.2f", k ? "," : ":", rw_live_node_name(ctx, c->src),
                rw_live_node_name(ctx, c->dst), c->ratio);
    }
    if (ctx->n_changes > TRACE_PAIRS)
        fprintf(stderr, ", ...");
}

/* When rank 0 measured, in unix time: a reader with a clock of its own
 * (a test changing a link) tells what came before and after a moment
 * whatever the delay of the line's way to it. */
static void trace_window(const rw_live *ctx)
{
    fprintf(stderr, ", measured %.3f-%.3f", ctx->measured[0], ctx->measured[1]);
}

static void trace(const rw_live *ctx, const rw_live_report *r)
{
    if (ctx->rank != 0 || !live_tracing())
        return;
    fprintf(stderr, "rankwise-live: probe %d: %d of %d rounds, %d pairs in %.6f s, %d changed", (int)r->call,
            (int)r->rounds, (int)r->rounds_total, (int)r->pairs, r->seconds, (int)r->changed);
    trace_changes(ctx);
    fprintf(stderr, ", generation %llu", (unsigned long long)r->generation);
    trace_window(ctx);
    fprintf(stderr, "\n");
}

/* Every rank: the rounds peers[t * n + a] (node a's partner in round t,
 * < 0 none) measured by the leaders and merged into the model; a new
 * call of the probe when `new_call`. *slowest: the slowest leader's time.
 * A failure after the memory is there breaks the context. */
static rw_status measure_and_merge(rw_live *ctx, const int32_t *peers, int rounds, int new_call, int *figures,
                                   int32_t *n_measured, double *slowest)
{
    double t0 = PMPI_Wtime();
    size_t len = block_len(rounds);
    double *block = calloc(len, sizeof *block), *table = calloc((size_t)ctx->n * len, sizeof *table);
    int32_t *mine = malloc(((size_t)rounds + 1) * sizeof *mine);
    rw_status st = block && table && mine ? RW_OK : rw_fail(RW_ERR_NOMEM, "out of memory for a live probe");
    int ok = !st, all = 0; /* nobody measures while a rank lacks its memory */
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, ctx->comm) != MPI_SUCCESS || !all) {
        free(block);
        free(table);
        free(mine);
        return st ? st : rw_fail(RW_ERR_NOMEM, "out of memory for a live probe on another rank");
    }
    if (new_call)
        ctx->call++;
    if (ctx->leaders != MPI_COMM_NULL) {
        for (int t = 0; t < rounds; t++)
            mine[t] = peers[(size_t)t * ctx->n + ctx->me];
        measure_rounds(ctx, mine, rounds, t0, block);
        st = rwc_mpi(PMPI_Allgather(block, (int)len, MPI_DOUBLE, table, (int)len, MPI_DOUBLE, ctx->leaders),
                     "MPI_Allgather (live probe)");
    }
    if (!st)
        st = rwc_mpi(PMPI_Bcast(table, (int)(ctx->n * len), MPI_DOUBLE, 0, ctx->node), "MPI_Bcast (live probe)");
    ctx->measured[0] = ctx->wall0 + (t0 - ctx->wtime0);
    ctx->measured[1] = ctx->wall0 + (PMPI_Wtime() - ctx->wtime0);
    int32_t failed = -1;
    for (int32_t a = 0; !st && a < ctx->n; a++)
        if (!table[a * len + H_OK] && failed < 0)
            failed = a;
    if (!st && failed >= 0)
        st = rw_fail(RW_ERR_MPI, "the live probe gave up: node %s's ping-pongs failed or timed out",
                     rw_live_node_name(ctx, failed));
    live_sample *samples = NULL;
    int32_t n_samples = 0;
    *figures = 0;
    if (!st)
        st = samples_of(ctx, table, rounds, &samples, &n_samples);
    if (!st)
        st = live_merge(ctx, samples, n_samples, table[H_WHEN], figures);
    if (st) /* the model is as it was; the application goes on without us */
        ctx->broken = 1;
    *slowest = 0;
    for (int32_t a = 0; !st && a < ctx->n; a++)
        *slowest = fmax(*slowest, table[a * len + H_SECONDS]);
    /* the nodes of a changed pair: their other pairs are suspect until
     * measured again (remap.c decides on fresh pairs) */
    for (int32_t k = 0; !st && k < ctx->n_changes; k++)
        ctx->node_change_call[ctx->changes[k].src] = ctx->node_change_call[ctx->changes[k].dst] = ctx->call;
    *n_measured = n_samples;
    free(block);
    free(table);
    free(mine);
    free(samples);
    return st;
}

rw_status rw_live_probe(rw_live *ctx, double budget, rw_live_report *report)
{
    if (!ctx)
        return rw_fail(RW_ERR_ARG, "rw_live_probe: no context");
    if (!(budget >= 0) || !isfinite(budget))
        return rw_fail(RW_ERR_ARG, "rw_live_probe: the budget must be >= 0 s, got %g", budget);
    rw_live_report rep = {.generation = rwc_model_generation(), .passthrough = ctx->passthrough};
    if (report)
        *report = rep;
    if (ctx->passthrough)
        return RW_OK;
    if (ctx->broken)
        return rw_fail(RW_ERR_STATE, "the live probe gave up after an MPI error or a timeout");
    double t0 = PMPI_Wtime();
    int total = rw_tournament_rounds(ctx->n), rounds = rounds_for(ctx, budget > 0 ? budget : RW_LIVE_DEFAULT_BUDGET,
                                                                     total);
    int32_t *peers = malloc((size_t)rounds * ctx->n * sizeof *peers);
    if (!peers)
        return rw_fail(RW_ERR_NOMEM, "out of memory for a live probe");
    for (int t = 0; t < rounds; t++)
        for (int32_t a = 0; a < ctx->n; a++)
            peers[(size_t)t * ctx->n + a] = rw_tournament_partner(ctx->n, (ctx->cursor + t) % total, a);
    int figures = 0;
    int32_t n_samples = 0;
    double slowest = 0;
    rw_status st = measure_and_merge(ctx, peers, rounds, 1, &figures, &n_samples, &slowest);
    free(peers);
    if (st)
        return st;
    /* the slowest leader's time per round, the most seen: rounds differ
     * (some pair a slow node), and a budget is a bound */
    ctx->round_seconds = fmax(ctx->round_seconds, slowest / rounds);
    ctx->cursor = (ctx->cursor + rounds) % total;
    int was_complete = ctx->complete;
    ctx->complete = ctx->complete || live_complete(ctx);
    if (ctx->complete && (figures || !was_complete))
        live_publish(ctx); /* the collectives decide again */
    rep.call = ctx->call;
    rep.rounds = rounds;
    rep.rounds_total = total;
    rep.cycle_calls = ctx->cycle_calls = (total + rounds - 1) / rounds;
    rep.pairs = n_samples;
    rep.changed = ctx->n_changes;
    rep.nodes_changed = ctx->n_changed_nodes;
    rep.generation = rwc_model_generation();
    rep.seconds = PMPI_Wtime() - t0;
    trace(ctx, &rep);
    if (report)
        *report = rep;
    if (ctx->n_changes && ctx->on_drift) {
        rw_live_drift d;
        rw_live_get_drift(ctx, &d);
        ctx->on_drift(&d, ctx->on_drift_arg);
    }
    return RW_OK;
}

rw_status live_refresh(rw_live *ctx, const int *pairs, int32_t n_pairs)
{
    if (ctx->broken)
        return rw_fail(RW_ERR_STATE, "the live probe gave up after an MPI error or a timeout");
    double t0 = PMPI_Wtime();
    int32_t *peers = malloc(((size_t)n_pairs + 1) * ctx->n * sizeof *peers);
    if (!peers)
        return rw_fail(RW_ERR_NOMEM, "out of memory for a live probe");
    /* a matching per round, greedily: each pair in the first round where
     * neither of its nodes is busy */
    int rounds = 0;
    for (int32_t k = 0; k < n_pairs; k++) {
        int32_t a = pairs[2 * k], b = pairs[2 * k + 1];
        int t = 0;
        while (t < rounds && (peers[(size_t)t * ctx->n + a] >= 0 || peers[(size_t)t * ctx->n + b] >= 0))
            t++;
        if (t == rounds) {
            for (int32_t x = 0; x < ctx->n; x++)
                peers[(size_t)t * ctx->n + x] = -1;
            rounds++;
        }
        peers[(size_t)t * ctx->n + a] = b;
        peers[(size_t)t * ctx->n + b] = a;
    }
    int figures = 0;
    int32_t n_samples = 0;
    double slowest = 0;
    rw_status st = rounds ? measure_and_merge(ctx, peers, rounds, 0, &figures, &n_samples, &slowest) : RW_OK;
    free(peers);
    if (st)
        return st;
    if (ctx->complete && figures)
        live_publish(ctx);
    if (ctx->rank == 0 && live_tracing()) {
        fprintf(stderr, "rankwise-live: re-measured before the remap: %d pairs in %d rounds, %.6f s, %d changed",
                (int)n_samples, rounds, PMPI_Wtime() - t0, (int)ctx->n_changes);
        trace_changes(ctx);
        trace_window(ctx);
        fprintf(stderr, "\n");
    }
    return RW_OK;
}
