/* The symmetric all-to-all (alltoall_symmetric.h): phases of peers at
 * symmetric relative positions, sub-phases capped by the shared links. */
#include "alltoall_symmetric.h"
#include "predict_internal.h"

#include <math.h>
#include <stdlib.h>

int32_t rw_a2a_subphases(int32_t n, int32_t cap, int32_t *shift, int32_t *start)
{
    if (n < 2)
        return 0;
    int32_t width = cap < 2 ? 2 : cap, k = 0, m = 0, in_sub = 0;
    for (int32_t d = 1; 2 * d <= n; d++) {
        int32_t phase = 2 * d == n ? 1 : 2; /* n/2 is its own mirror */
        if (in_sub == 0 || in_sub + phase > width) {
            start[k++] = m;
            in_sub = 0;
        }
        shift[m++] = d;
        if (phase == 2)
            shift[m++] = n - d;
        in_sub += phase;
    }
    start[k] = m;
    return k;
}

/* The worst oversubscription of a shared resource (a node's injection or
 * ejection cap, a shared link) in the sub-phase of shifts
 * shift[0..m): every flow at its pair's own bandwidth over m (what the
 * sender's m flows get when its own link is the only limit), summed over
 * the flows crossing the resource, over its capacity. load has room for
 * 2n + links. */
static double subphase_load(const rw_pnet *net, const int32_t *shift, int32_t m, double *load)
{
    int32_t p = net->n_ranks, n = net->n;
    int32_t n_res = 2 * n + net->n_links;
    for (int32_t i = 0; i < n_res; i++)
        load[i] = 0;
    for (int32_t i = 0; i < m; i++)
        for (int32_t r = 0; r < p; r++) {
            int32_t a = net->node_of[r], b = net->node_of[(r + shift[i]) % p];
            int64_t q = (int64_t)a * n + b;
            if (a == b || !(net->beta[q] > 0))
                continue;
            double want = 1.0 / (net->beta[q] * m);
            load[a] += want;
            load[n + b] += want;
            for (int64_t k = net->pair_start ? net->pair_start[q] : 0; net->pair_start && k < net->pair_start[q + 1];
                 k++)
                load[2 * n + net->link_of[k]] += want;
        }
    double worst = 0;
    for (int32_t i = 0; i < n; i++) {
        if (net->inject && net->inject[i] > 0)
            worst = fmax(worst, load[i] / net->inject[i]);
        if (net->eject && net->eject[i] > 0)
            worst = fmax(worst, load[n + i] / net->eject[i]);
    }
    for (int32_t l = 0; l < net->n_links; l++)
        worst = fmax(worst, load[2 * n + l] / net->link_cap[l]);
    return worst;
}

/* The worst subphase_load over the sub-phases of width w. */
static double width_load(const rw_pnet *net, int32_t w, int32_t *shift, int32_t *start, double *load)
{
    int32_t k = rw_a2a_subphases(net->n_ranks, w, shift, start);
    double worst = 0;
    for (int32_t j = 0; j < k; j++)
        worst = fmax(worst, subphase_load(net, shift + start[j], start[j + 1] - start[j], load));
    return worst;
}

int32_t rw_a2a_cap(const rw_pnet *net)
{
    int32_t p = net ? net->n_ranks : 0;
    int32_t most = p - 1 < 2 ? 2 : p - 1;
    int32_t fallback = RW_A2A_DEFAULT_CAP < most ? RW_A2A_DEFAULT_CAP : most;
    if (p < 3 || !net->node_of || (!net->inject && !net->eject && net->n_links == 0))
        return fallback;
    if (rw_pnet_index_links((rw_pnet *)net) != RW_OK) /* the index is a cache: net stays the same network */
        return fallback;
    double *load = malloc((size_t)(2 * net->n + net->n_links) * sizeof *load);
    int32_t *shift = malloc((size_t)p * sizeof *shift), *start = malloc((size_t)p * sizeof *start);
    int32_t best = fallback;
    if (load && shift && start) {
        /* widths 2, 4, 8, ... up to every peer at once: the first that
         * oversubscribes nothing, else the least oversubscribed (the
         * narrower on a tie within 1 %) */
        double least = INFINITY;
        for (int32_t w = 2;; w = w > most / 2 ? most : 2 * w) {
            double worst = width_load(net, w, shift, start, load);
            if (worst <= 1.0 + RW_A2A_SLACK) {
                best = w;
                break;
            }
            if (worst < least * (1.0 - 0.01)) {
                least = worst;
                best = w;
            }
            if (w == most)
                break;
        }
    }
    free(load);
    free(shift);
    free(start);
    return best;
}

rw_status rw_b_alltoall_symmetric(rw_builder *b, const rw_pnet *net, int32_t cap, double bytes)
{
    int32_t p = b->p;
    if (p < 2 || bytes <= 0)
        return RW_OK; /* the own block is a free local copy */
    int32_t *shift = malloc((size_t)p * sizeof *shift), *start = malloc((size_t)p * sizeof *start);
    if (!shift || !start) {
        free(shift);
        free(start);
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory for %d ranks", (int)p);
    }
    int32_t k = rw_a2a_subphases(p, cap > 0 ? cap : rw_a2a_cap(net), shift, start);
    for (int32_t j = 0; j < k; j++) {
        /* every receive and send of the sub-phase posted, then one Waitall */
        for (int32_t r = 0; r < p; r++)
            for (int32_t i = start[j]; i < start[j + 1]; i++) {
                int32_t to = (r + shift[i]) % p;
                int64_t id = rw_b_xfer(b, r, to, bytes, 0.0);
                rw_b_next(b, to, id);
                rw_b_send_done(b, r, id, bytes);
            }
        rw_b_commit(b);
    }
    free(shift);
    free(start);
    return b->err;
}
