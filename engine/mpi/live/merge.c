/* A live probe's measurements folded into the model, and what changed
 * (no MPI: every rank runs this on the same samples and model, so all
 * agree).
 *
 * A pair changed when, at a measured size, the new round trips [min, max]
 * do not overlap the model's (the noise it measured) and the medians
 * differ by more than the threshold: rw_drift_strength, the rule of
 * `rankwise diff` (docs/concepts/live.md). Its change is the ratio of the medians at its
 * most changed such size.
 *
 * The time is always replaced; the statistics at the measured sizes and
 * the fit only for a changed (or new) pair: the statistics stay the
 * evidence of the figures, so a sample half before and half after a change
 * (wide, not apart) cannot hide the change from the next probe. The fit
 * (alpha, beta, and the large-message fit beyond a knee) is scaled rather
 * than refitted: the latency by the
 * small size's ratio, the per-byte cost by the ratio of the size-dependent
 * parts (large minus small round trip), so the model's fit over all its
 * sizes keeps its shape. A pair never measured before gets the two-size
 * fit rtt = 2 alpha + beta size. */
#include "internal.h"
#include "live.h"

#include <math.h>
#include <stdlib.h>

static int has_stat(const rw_stat *s)
{
    return s->count > 0 && s->median > 0 && isfinite(s->median);
}

static double ratio_or(double num, double den, double fallback)
{
    double r = num / den;
    return den > 0 && num > 0 && isfinite(r) ? r : fallback;
}

static void scale(rw_model *m, size_t p, double lat, double per_byte)
{
    m->alpha[p] *= lat;
    m->beta[p] *= per_byte;
    if (m->alpha_large && isfinite(m->alpha_large[p]))
        m->alpha_large[p] *= lat;
    if (m->beta_large && isfinite(m->beta_large[p]))
        m->beta_large[p] *= per_byte;
}

static void fit(const rw_live *ctx, const rw_stat *s, double *alpha, double *beta)
{
    double b = 0;
    if (ctx->n_sizes > 1 && ctx->sizes[1] > ctx->sizes[0])
        b = (s[1].median - s[0].median) / (double)(ctx->sizes[1] - ctx->sizes[0]);
    *beta = b > 0 ? b : 0;
    double a = (s[0].median - *beta * (double)ctx->sizes[0]) / 2;
    *alpha = a > 0 ? a : 0;
}

/* A changed pair's new round trips, as wide around their median as the
 * model's were around theirs: the level moved, the noise recorded over the
 * probe's rounds stays. Three round trips taken within milliseconds are
 * narrower than a loaded stack's noise; as the evidence they would make
 * the next sample of the same level look changed again (a re-probe on an
 * emulated cluster named 5-8 of its 8 pairs changed, before any change). */
static rw_stat widened(const rw_stat *now, const rw_stat *was)
{
    rw_stat w = *now;
    if (!has_stat(was) || !has_stat(now) || was->min > was->median || was->max < was->median)
        return w;
    w.min = fmin(w.min, w.median * (was->min / was->median));
    w.max = fmax(w.max, w.median * (was->max / was->median));
    w.jitter = fmax(w.jitter, was->jitter);
    return w;
}

int live_complete(const rw_live *ctx)
{
    const rw_model *m = ctx->model;
    for (int32_t a = 0; a < ctx->n; a++)
        for (int32_t b = 0; b < ctx->n; b++)
            if (a != b && m->pair_state[(size_t)ctx->model_index[a] * m->n_nodes + ctx->model_index[b]] !=
                              RW_PAIR_MEASURED)
                return 0;
    return 1;
}

rw_status live_merge(rw_live *ctx, const live_sample *samples, int32_t n_samples, double when, int *figures_changed)
{
    rw_model *m = ctx->model;
    int32_t *partners = calloc((size_t)ctx->n, sizeof *partners), *hits = calloc((size_t)ctx->n, sizeof *hits);
    int32_t *measured = calloc((size_t)ctx->n, sizeof *measured);
    rw_live_pair_change *changes = malloc(((size_t)n_samples + 1) * sizeof *changes);
    int32_t *nodes = malloc(((size_t)ctx->n + 1) * sizeof *nodes);
    if (!partners || !hits || !measured || !changes || !nodes) {
        free(partners);
        free(hits);
        free(measured);
        free(changes);
        free(nodes);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a live probe of %d nodes", (int)ctx->n);
    }
    int32_t n_changes = 0;
    *figures_changed = 0;
    for (int32_t k = 0; k < n_samples; k++) {
        const live_sample *x = &samples[k];
        size_t p = (size_t)ctx->model_index[x->src] * m->n_nodes + ctx->model_index[x->dst];
        int known = m->pair_state[p] == RW_PAIR_MEASURED && isfinite(m->alpha[p]) && isfinite(m->beta[p]);
        int changed = 0, all_refs = known;
        double worst = 0, worst_ratio = 1;
        int64_t worst_size = 0;
        rw_stat ref[LIVE_MAX_SIZES];
        for (int s = 0; s < ctx->n_sizes; s++) {
            ref[s] = m->pair_stats[p * m->n_sizes + ctx->size_index[s]];
            if (!has_stat(&ref[s]) || !has_stat(&x->stat[s])) {
                all_refs = 0;
                continue;
            }
            if (s == 0 && ctx->noisy_latency) /* noise: never a change */
                continue;
            double strength = rw_drift_strength(ref[s].min, ref[s].median, ref[s].max, x->stat[s].min,
                                                x->stat[s].median, x->stat[s].max, ctx->threshold);
            if (known && strength > worst) {
                changed = 1;
                worst = strength;
                worst_ratio = x->stat[s].median / ref[s].median;
                worst_size = ctx->sizes[s];
            }
        }
        if (changed && all_refs) {
            double lat = ctx->noisy_latency ? 1 : ratio_or(x->stat[0].median, ref[0].median, 1);
            /* where the small size's round trip reaches the large one's (a
             * loaded stack's latencies), the large size alone tells */
            double large = ctx->n_sizes > 1 ? ratio_or(x->stat[1].median, ref[1].median, lat) : lat;
            double per_byte = ctx->n_sizes < 2 ? lat
                              : ctx->noisy_latency
                                  ? large
                                  : ratio_or(x->stat[1].median - x->stat[0].median, ref[1].median - ref[0].median, large);
            scale(m, p, lat, per_byte);
            *figures_changed = 1;
        } else if (!known) {
            fit(ctx, x->stat, &m->alpha[p], &m->beta[p]);
            *figures_changed = 1;
        }
        for (int s = 0; (changed || !known) && s < ctx->n_sizes; s++) /* the evidence of the pair's figures */
            m->pair_stats[p * m->n_sizes + ctx->size_index[s]] = changed ? widened(&x->stat[s], &ref[s]) : x->stat[s];
        m->pair_state[p] = RW_PAIR_MEASURED;
        m->measured_at[p] = when;
        ctx->pair_call[(size_t)x->src * ctx->n + x->dst] = ctx->call;
        measured[x->src]++;
        measured[x->dst]++;
        partners[x->src]++; /* each direction names its sender once per partner */
        if (changed) {
            changes[n_changes++] = (rw_live_pair_change){x->src, x->dst, worst_size, worst_ratio};
            hits[x->src]++;
            hits[x->dst]++;
        }
    }
    int32_t n_nodes = 0;
    for (int32_t a = 0; a < ctx->n; a++) /* evidence from two partners at least, most of it changed */
        if (partners[a] >= 2 && hits[a] >= 2 && 4 * hits[a] >= 3 * measured[a])
            nodes[n_nodes++] = a;
    free(ctx->changes);
    free(ctx->changed_nodes);
    ctx->changes = changes;
    ctx->n_changes = n_changes;
    ctx->changed_nodes = nodes;
    ctx->n_changed_nodes = n_nodes;
    free(partners);
    free(hits);
    free(measured);
    return RW_OK;
}
