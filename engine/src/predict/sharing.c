/* Weighted max-min fair sharing by progressive filling: all unfixed flows
 * grow together, each at its weight times a common level; when a resource
 * saturates (or a flow reaches its own cap) the flows it holds are fixed at
 * that level and the others go on. SimGrid's CM02 weighs a flow by the
 * inverse of its route's latency (its sharing penalty is the latency,
 * network_cm02.cpp): at a shared NIC a flow to a nearby node gets more
 * than one to a distant or degraded node (TCP's bias against long round
 * trips). */
#include "sharing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

rw_status rw_sharing_init(rw_sharing *sh, const rw_pnet *net)
{
    int32_t n = net->n;
    sh->net = net;
    sh->n_res = 3 * n + net->n_links;
    size_t nr = (size_t)sh->n_res;
    sh->res_cap = calloc(nr, sizeof(double));
    sh->rem = calloc(nr, sizeof(double));
    sh->cnt = calloc(nr, sizeof(int32_t));
    sh->wsum = calloc(nr, sizeof(double));
    sh->sat = calloc(nr, sizeof(uint8_t));
    sh->touched = calloc(nr, sizeof(int32_t));
    if (!sh->res_cap || !sh->rem || !sh->cnt || !sh->wsum || !sh->sat || !sh->touched) {
        rw_sharing_free(sh);
        return rw_fail(RW_ERR_NOMEM, "simulation: out of memory");
    }
    for (int32_t i = 0; i < n; i++) {
        sh->res_cap[i] = net->inject ? net->inject[i] : 0.0;
        sh->res_cap[n + i] = net->eject ? net->eject[i] : 0.0;
        sh->res_cap[2 * n + i] = net->duplex ? net->duplex[i] : 0.0;
    }
    for (int32_t l = 0; l < net->n_links; l++)
        sh->res_cap[3 * n + l] = net->link_cap[l];
    return RW_OK;
}

void rw_sharing_free(rw_sharing *sh)
{
    free(sh->slot_of);
    free(sh->hkey);
    free(sh->hval);
    sh->slot_of = NULL;
    sh->hkey = NULL;
    sh->hval = NULL;
    free(sh->res_cap);
    free(sh->rem);
    free(sh->cnt);
    free(sh->wsum);
    free(sh->sat);
    free(sh->touched);
    sh->res_cap = sh->rem = sh->wsum = NULL;
    sh->cnt = sh->touched = NULL;
    sh->sat = NULL;
}

/* The resources flow (s -> d) crosses: up to four node caps (the sender's
 * injection and duplex, the receiver's ejection and duplex), then links;
 * u: the part of the flow on resource r (a link's share, else 1). */
#define RW_FOR_RES(sh, f, s, d, r, u, BODY)                                                \
    do {                                                                                \
        const rw_pnet *net_ = (sh)->net;                                                \
        if ((s) != (d)) {                                                               \
            int32_t r;                                                                  \
            double u = 1.0;                                                             \
            r = (s);                                                                    \
            if ((sh)->res_cap[r] > 0.0) { BODY }                                        \
            r = net_->n + (d);                                                          \
            if ((sh)->res_cap[r] > 0.0) { BODY }                                        \
            r = 2 * net_->n + (s);                                                      \
            if ((sh)->res_cap[r] > 0.0) { BODY }                                        \
            r = 2 * net_->n + (d);                                                      \
            if ((sh)->res_cap[r] > 0.0) { BODY }                                        \
            if ((sh)->slot_of[f] >= 0) {                                                \
                r = (sh)->slot_of[f];                                                   \
                BODY                                                                    \
            }                                                                           \
            if (net_->pair_start) {                                                     \
                int64_t p_ = (int64_t)(s) * net_->n + (d);                              \
                for (int64_t q_ = net_->pair_start[p_]; q_ < net_->pair_start[p_ + 1]; q_++) { \
                    r = 3 * net_->n + net_->link_of[q_];                                \
                    u = net_->share_of ? net_->share_of[q_] : 1.0;                      \
                    BODY                                                                \
                }                                                                       \
            }                                                                           \
            (void)u;                                                                    \
        }                                                                               \
    } while (0)

/* Room for n flows: per-flow slots, a hash of twice that, and n pair
 * resources after the fixed ones. */
static int ensure_slots(rw_sharing *sh, int64_t n)
{
    if (n <= sh->slots_cap)
        return 0;
    int64_t cap = sh->slots_cap ? sh->slots_cap : 64;
    while (cap < n)
        cap *= 2;
    int64_t hsize = 4 * cap;
    size_t nr = (size_t)(sh->n_res + cap);
    int32_t *so = realloc(sh->slot_of, (size_t)cap * sizeof(int32_t));
    if (so)
        sh->slot_of = so;
    int64_t *hk = realloc(sh->hkey, (size_t)hsize * sizeof(int64_t));
    if (hk)
        sh->hkey = hk;
    int32_t *hv = realloc(sh->hval, (size_t)hsize * sizeof(int32_t));
    if (hv)
        sh->hval = hv;
    double *rc = realloc(sh->res_cap, nr * sizeof(double));
    if (rc)
        sh->res_cap = rc;
    double *rm = realloc(sh->rem, nr * sizeof(double));
    if (rm)
        sh->rem = rm;
    int32_t *cn = realloc(sh->cnt, nr * sizeof(int32_t));
    if (cn)
        sh->cnt = cn;
    double *ws = realloc(sh->wsum, nr * sizeof(double));
    if (ws)
        sh->wsum = ws;
    uint8_t *sa = realloc(sh->sat, nr);
    if (sa)
        sh->sat = sa;
    int32_t *to = realloc(sh->touched, nr * sizeof(int32_t));
    if (to)
        sh->touched = to;
    if (!so || !hk || !hv || !rc || !rm || !cn || !ws || !sa || !to)
        return -1;
    for (size_t r = (size_t)sh->n_res + (size_t)sh->slots_cap; r < nr; r++) {
        sh->cnt[r] = 0;
        sh->wsum[r] = 0.0;
        sh->sat[r] = 0;
    }
    sh->hsize = hsize;
    sh->slots_cap = cap;
    return 0;
}

static void assign_pair_slots(rw_sharing *sh, int64_t n, const int32_t *sn, const int32_t *dn, const double *cap)
{
    int64_t mask = sh->hsize - 1, used = 0;
    int64_t nn = sh->net->n;
    memset(sh->hkey, 0, (size_t)sh->hsize * sizeof(int64_t));
    for (int64_t f = 0; f < n; f++) {
        sh->slot_of[f] = -1;
        if (sn[f] == dn[f] || !(cap[f] < INFINITY))
            continue;
        int64_t key = (int64_t)sn[f] * nn + dn[f] + 1;
        uint64_t h = ((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 7;
        int64_t i = (int64_t)(h & (uint64_t)mask);
        while (sh->hkey[i] != 0 && sh->hkey[i] != key)
            i = (i + 1) & mask;
        if (sh->hkey[i] == 0) {
            sh->hkey[i] = key;
            sh->hval[i] = sh->n_res + (int32_t)used;
            sh->res_cap[sh->n_res + used] = cap[f];
            used++;
        }
        sh->slot_of[f] = sh->hval[i];
    }
}

int32_t rw_sharing_rates(rw_sharing *sh, int64_t n, const int32_t *sn, const int32_t *dn, const double *cap,
                         const double *weight, double *rate, uint8_t *fixed)
{
    if (ensure_slots(sh, n) != 0)
        return -1;
    assign_pair_slots(sh, n, sn, dn, cap);
    /* a flow without a positive weight makes the sharing plain max-min */
    int weighted = weight != NULL;
    for (int64_t f = 0; weighted && f < n; f++)
        weighted = weight[f] > 0.0 && weight[f] < INFINITY;
#define RW_W(f) (weighted ? weight[f] : 1.0)
    int32_t nt = 0;
    for (int64_t f = 0; f < n; f++) {
        fixed[f] = 0;
        RW_FOR_RES(sh, f, sn[f], dn[f], r, u, {
            if (sh->cnt[r] == 0) {
                sh->touched[nt++] = r;
                sh->rem[r] = sh->res_cap[r];
                sh->wsum[r] = 0.0;
            }
            sh->cnt[r]++;
            sh->wsum[r] += u * RW_W(f);
        });
    }
    int64_t left = n;
    int32_t rounds = 0;
    while (left > 0) {
        rounds++;
        double m = INFINITY; /* the level: a flow's rate is its weight times it */
        for (int32_t t = 0; t < nt; t++) {
            int32_t r = sh->touched[t];
            if (sh->cnt[r] > 0 && sh->wsum[r] > 0.0) {
                double share = sh->rem[r] / sh->wsum[r];
                if (share < m)
                    m = share;
            }
        }
        for (int64_t f = 0; f < n; f++)
            if (!fixed[f] && sn[f] == dn[f] && cap[f] / RW_W(f) < m)
                m = cap[f] / RW_W(f);
        if (!(m < INFINITY)) { /* nothing limits the rest */
            for (int64_t f = 0; f < n; f++)
                if (!fixed[f]) {
                    rate[f] = INFINITY;
                    fixed[f] = 1;
                }
            break;
        }
        if (m < 0.0)
            m = 0.0;
        double thr = m * (1.0 + 1e-9);
        for (int32_t t = 0; t < nt; t++) {
            int32_t r = sh->touched[t];
            sh->sat[r] = sh->cnt[r] > 0 && sh->wsum[r] > 0.0 && sh->rem[r] / sh->wsum[r] <= thr;
        }
        for (int64_t f = 0; f < n; f++) {
            if (fixed[f])
                continue;
            int hit = sn[f] == dn[f] && cap[f] / RW_W(f) <= thr;
            if (!hit)
                RW_FOR_RES(sh, f, sn[f], dn[f], r, u, { hit |= sh->sat[r]; });
            if (!hit)
                continue;
            double got = m * RW_W(f);
            rate[f] = got;
            fixed[f] = 1;
            left--;
            RW_FOR_RES(sh, f, sn[f], dn[f], r, u, {
                sh->rem[r] -= u * got;
                sh->wsum[r] -= u * RW_W(f);
                sh->cnt[r]--;
            });
        }
    }
#undef RW_W
    for (int32_t t = 0; t < nt; t++) {
        sh->cnt[sh->touched[t]] = 0;
        sh->sat[sh->touched[t]] = 0;
    }
    return rounds;
}
