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
    int32_t width = cap < 2 ? 2 : cap, k = 0, m = 0, in_sub = 0, half = n / 2;
    /* phases 1, n/2, 2, n/2 - 1, ...: a near one beside a far one, so that
     * every sub-phase carries about the same load (on a ring, d + (n/2 + 1 - d)
     * hops per pair of phases) */
    for (int32_t i = 0; i < half; i++) {
        int32_t d = i % 2 == 0 ? i / 2 + 1 : half - i / 2;
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

/* The predicted time of the symmetric all-to-all with sub-phases of width w. */
static double width_time(const rw_pnet *net, int32_t w, double bytes)
{
    rw_coll_options opt = rw_coll_options_default();
    rw_builder b;
    rw_sched *s = NULL;
    rw_sim_result r;
    if (rw_builder_init(&b, net->n_ranks, &opt) != RW_OK)
        return INFINITY;
    rw_status st = rw_b_alltoall_symmetric(&b, net, w, bytes);
    if (st != RW_OK && b.err == RW_OK)
        b.err = st;
    st = rw_builder_finish(&b, &s);
    double t = st == RW_OK && rw_simulate(net, s, RW_SIM_SHARED, &r, NULL) == RW_OK ? r.time : INFINITY;
    rw_sched_free(s);
    return t;
}

int32_t rw_a2a_cap(const rw_pnet *net, double bytes)
{
    int32_t p = net ? net->n_ranks : 0;
    int32_t most = p - 1 < 2 ? 2 : p - 1;
    int32_t fallback = RW_A2A_DEFAULT_CAP < most ? RW_A2A_DEFAULT_CAP : most;
    if (p < 3 || !net->node_of || !(bytes > 0) || (!net->inject && !net->eject && net->n_links == 0))
        return fallback;
    double time[32];
    int32_t width[32], k = 0;
    for (int32_t w = 2; k < 32; w = w > most / 2 ? most : 2 * w) {
        width[k] = w;
        time[k++] = width_time(net, w, bytes);
        if (w == most)
            break;
    }
    double best = INFINITY;
    for (int32_t i = 0; i < k; i++)
        best = fmin(best, time[i]);
    if (!isfinite(best))
        return fallback;
    for (int32_t i = 0; i < k; i++)
        if (time[i] <= best * (1.0 + RW_A2A_SLACK))
            return width[i];
    return fallback;
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
    int32_t k = rw_a2a_subphases(p, cap > 0 ? cap : rw_a2a_cap(net, bytes), shift, start);
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
