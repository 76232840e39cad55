/* rw_live_probe: the next slice of the node pairs, measured by the
 * leaders in the rounds of a round-robin tournament (rw_tournament_partner:
 * the pairs of a round at once, both ways, as the full probe's concurrent
 * mode), as many rounds as the budget allows from what a round took last
 * time. Each leader's results go to every leader (MPI_Allgather), then to
 * its node's ranks (MPI_Bcast): every rank merges the same table into its
 * copy of the model (merge.c). */
#include "coll.h"
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

/* This leader's block: the slice's rounds from the cursor. */
static void measure_slice(rw_live *ctx, int rounds, int total, double t0, double *block)
{
    rw_status st = RW_OK;
    for (int t = 0; t < rounds; t++) {
        double *e = block + H_LEN + (size_t)t * LIVE_ENTRY;
        int peer = rw_tournament_partner(ctx->n, (ctx->cursor + t) % total, ctx->me);
        e[0] = -1;
        rw_stat got[LIVE_MAX_SIZES];
        if (peer < 0 || st || (st = live_measure_pair(ctx, peer, ctx->buf, got)))
            continue; /* after a failure nothing more is sent; the peers time out or fail too */
        e[0] = peer;
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

static void trace(const rw_live *ctx, const rw_live_report *r)
{
    if (ctx->rank != 0 || !live_tracing())
        return;
    fprintf(stderr, "rankwise-live: probe %d: %d of %d rounds, %d pairs in %.6f s, %d changed", (int)r->call,
            (int)r->rounds, (int)r->rounds_total, (int)r->pairs, r->seconds, (int)r->changed);
    for (int32_t k = 0; k < ctx->n_changes && k < TRACE_PAIRS; k++) {
        const rw_live_pair_change *c = &ctx->changes[k];
        fprintf(stderr, "%s %s->%s x%.2f", k ? "," : ":", rw_live_node_name(ctx, c->src),
                rw_live_node_name(ctx, c->dst), c->ratio);
    }
    fprintf(stderr, "%s, generation %llu\n", ctx->n_changes > TRACE_PAIRS ? ", ..." : "", (unsigned long long)r->generation);
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
    size_t len = block_len(rounds);
    double *block = calloc(len, sizeof *block), *table = calloc((size_t)ctx->n * len, sizeof *table);
    rw_status st = block && table ? RW_OK : rw_fail(RW_ERR_NOMEM, "out of memory for a live probe");
    int ok = !st, all = 0; /* nobody measures while a rank lacks its memory */
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, ctx->comm) != MPI_SUCCESS || !all) {
        free(block);
        free(table);
        return st ? st : rw_fail(RW_ERR_NOMEM, "out of memory for a live probe on another rank");
    }
    ctx->call++;
    if (ctx->leaders != MPI_COMM_NULL) {
        measure_slice(ctx, rounds, total, t0, block);
        st = rwc_mpi(PMPI_Allgather(block, (int)len, MPI_DOUBLE, table, (int)len, MPI_DOUBLE, ctx->leaders),
                     "MPI_Allgather (live probe)");
    }
    if (!st)
        st = rwc_mpi(PMPI_Bcast(table, (int)(ctx->n * len), MPI_DOUBLE, 0, ctx->node), "MPI_Bcast (live probe)");
    int32_t failed = -1;
    for (int32_t a = 0; !st && a < ctx->n; a++)
        if (!table[a * len + H_OK] && failed < 0)
            failed = a;
    if (!st && failed >= 0)
        st = rw_fail(RW_ERR_MPI, "the live probe gave up: node %s's ping-pongs failed or timed out",
                     rw_live_node_name(ctx, failed));
    live_sample *samples = NULL;
    int32_t n_samples = 0;
    int figures = 0;
    if (!st)
        st = samples_of(ctx, table, rounds, &samples, &n_samples);
    if (!st)
        st = live_merge(ctx, samples, n_samples, table[H_WHEN], &figures);
    if (st) { /* the model is as it was; the application goes on without us */
        ctx->broken = 1;
        free(block);
        free(table);
        free(samples);
        return st;
    }
    /* the slowest leader's time per round, the most seen: rounds differ
     * (some pair a slow node), and a budget is a bound */
    double slowest = 0;
    for (int32_t a = 0; a < ctx->n; a++)
        slowest = fmax(slowest, table[a * len + H_SECONDS]);
    ctx->round_seconds = fmax(ctx->round_seconds, slowest / rounds);
    ctx->cursor = (ctx->cursor + rounds) % total;
    int was_complete = ctx->complete;
    ctx->complete = ctx->complete || live_complete(ctx);
    if (ctx->complete && (figures || !was_complete))
        live_publish(ctx); /* the collectives decide again */
    rep.call = ctx->call;
    rep.rounds = rounds;
    rep.rounds_total = total;
    rep.cycle_calls = (total + rounds - 1) / rounds;
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
    free(block);
    free(table);
    free(samples);
    return RW_OK;
}
