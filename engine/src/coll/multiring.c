/* The multi-ring allgather's rings: parts and the order of the ranks
 * (multiring.h). The order is a short closed tour over the network's
 * latencies, so that on a torus ring neighbours sit one hop apart and on a
 * fat tree a ring leaves each rack once, whatever the rank numbering. */
#include "multiring.h"

#include "../predict/predict_internal.h"
#include "rankwise_coll_tune.h"

#include <math.h>
#include <stdlib.h>

size_t rw_multiring_part(size_t bytes, int parts, int k, size_t *offset)
{
    size_t base = bytes / (size_t)parts, rest = bytes % (size_t)parts;
    if (offset)
        *offset = (size_t)k * base + ((size_t)k < rest ? (size_t)k : rest);
    return base + ((size_t)k < rest);
}

int32_t rw_multiring_next(int32_t n, int k, int32_t p)
{
    return k % 2 == 0 ? (p + 1) % n : (p + n - 1) % n;
}

int32_t rw_multiring_prev(int32_t n, int k, int32_t p)
{
    return rw_multiring_next(n, k + 1, p);
}

/* A ring edge's cost: the pair's latency both ways (rings run both ways). */
static double cost(const rw_pnet *net, int32_t a, int32_t b)
{
    int32_t i = net->node_of[a], j = net->node_of[b], n = net->n;
    return net->alpha[(size_t)i * n + j] + net->alpha[(size_t)j * n + i];
}

static int32_t distance(int32_t a, int32_t b)
{
    return a > b ? a - b : b - a;
}

/* 2-opt: replace edges (t[i], t[i+1]) and (t[j], t[j+1]) by (t[i], t[j])
 * and (t[i+1], t[j+1]) where that shortens the tour, reversing t[i+1..j];
 * t[0] stays. A few passes: the greedy tour is mostly right already. */
static void two_opt(const rw_pnet *net, int32_t n, int32_t *t)
{
    double total = 0;
    for (int32_t i = 0; i < n; i++)
        total += cost(net, t[i], t[(i + 1) % n]);
    double eps = 1e-6 * total / n; /* gains below this are rounding */
    for (int pass = 0; pass < 4; pass++) {
        int changed = 0;
        for (int32_t i = 0; i + 2 < n; i++)
            for (int32_t j = i + 2; j < n; j++) {
                int32_t a = t[i], b = t[i + 1], c = t[j], d = t[(j + 1) % n];
                if (d == a)
                    continue;
                double gain = cost(net, a, b) + cost(net, c, d) - cost(net, a, c) - cost(net, b, d);
                if (gain > eps) {
                    for (int32_t lo = i + 1, hi = j; lo < hi; lo++, hi--) {
                        int32_t x = t[lo];
                        t[lo] = t[hi];
                        t[hi] = x;
                    }
                    changed = 1;
                }
            }
        if (!changed)
            break;
    }
}

rw_status rw_multiring_order(const rw_pnet *net, int32_t n_ranks, int32_t *order)
{
    if (!order || n_ranks < 1 || (net && net->n_ranks != n_ranks))
        return rw_fail(RW_ERR_ARG, "ring order: %d ranks, %d in the network", (int)n_ranks,
                       net ? (int)net->n_ranks : -1);
    for (int32_t r = 0; r < n_ranks; r++)
        order[r] = r;
    if (!net || n_ranks < 4)
        return RW_OK; /* every ring of three or fewer is the same */
    unsigned char *used = calloc((size_t)n_ranks, 1);
    if (!used)
        return rw_fail(RW_ERR_NOMEM, "ring order: out of memory for %d ranks", (int)n_ranks);
    used[0] = 1;
    for (int32_t p = 1; p < n_ranks; p++) {
        int32_t cur = order[p - 1], best = -1;
        double low = INFINITY;
        for (int32_t r = 0; r < n_ranks; r++)
            if (!used[r] && cost(net, cur, r) < low)
                low = cost(net, cur, r);
        for (int32_t r = 0; r < n_ranks; r++) /* ties (within 1 %): nearest in rank order, then lowest */
            if (!used[r] && cost(net, cur, r) <= low * 1.01 &&
                (best < 0 || distance(r, cur) < distance(best, cur)))
                best = r;
        order[p] = best;
        used[best] = 1;
    }
    free(used);
    if (n_ranks <= 4096) /* O(n^2) per pass */
        two_opt(net, n_ranks, order);
    return RW_OK;
}

rw_status rw_coll_multiring_order(const rw_pnet *net, int32_t *order)
{
    if (!net || !order || net->n_ranks < 1)
        return rw_fail(RW_ERR_ARG, "rw_coll_multiring_order: a network with a placement and an order are required");
    return rw_multiring_order(net, net->n_ranks, order);
}
