/* Choosing the nodes of an allocation a job runs on (Cui et al. 2020, fig. 8):
 * start from the two closest nodes, then keep adding the node closest to
 * the chosen set, until the chosen nodes have slots for every rank. */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>

#include "../internal.h"
#include "rankwise_map.h"

/* Mean bytes per message of the traffic (0 without traffic). */
static double mean_message(const rw_matrix *t)
{
    if (!t) return 0;
    int64_t msgs = rw_matrix_total_msgs(t), bytes = rw_matrix_total_bytes(t);
    return msgs > 0 ? (double)bytes / (double)msgs : (double)bytes;
}

typedef struct grow_ctx {
    const rw_network *net;
    double bytes;   /* message size the distance is taken at */
    int32_t n_ranks;
    int weighted;   /* a chosen node weighs by the ranks it will hold */
} grow_ctx;

static double dist(const grow_ctx *g, int32_t a, int32_t b)
{
    size_t n = (size_t)g->net->n_nodes, p = (size_t)a * n + b, q = (size_t)b * n + a;
    return g->net->alpha[p] + g->net->alpha[q] + g->bytes * (g->net->beta[p] + g->net->beta[q]);
}

/* Grow a set from `start` (and `second` when >= 0): keep adding the node
 * whose summed (weighted) distance to the set is smallest until the slots
 * suffice. Returns the set's summed pairwise distance, weighted like the
 * choice. */
static double grow(const grow_ctx *g, int32_t start, int32_t second, double *sum, char *chosen,
                   int32_t *keep, int32_t *n_keep)
{
    const rw_network *net = g->net;
    int32_t n = net->n_nodes;
    for (int32_t i = 0; i < n; i++) sum[i] = 0, chosen[i] = 0;
    *n_keep = 0;
    int64_t have = 0;
    double total = 0;
    for (int32_t next = start; have < g->n_ranks && next >= 0;) {
        int32_t s = next;
        int64_t hold = net->slots[s] < g->n_ranks - have ? net->slots[s] : g->n_ranks - have;
        double w = g->weighted ? (double)hold : 1.0;
        total += w * sum[s];
        chosen[s] = 1;
        keep[(*n_keep)++] = s;
        have += net->slots[s];
        for (int32_t c = 0; c < n; c++)
            if (!chosen[c]) sum[c] += w * dist(g, s, c);
        if (*n_keep == 1 && second >= 0) {
            next = second;
            continue;
        }
        next = -1;
        double best = DBL_MAX;
        for (int32_t c = 0; c < n; c++)
            if (!chosen[c] && net->slots[c] > 0 && sum[c] < best) best = sum[c], next = c;
    }
    return total;
}

rw_status rw_map_select_nodes(const rw_network *net, const rw_matrix *traffic, int32_t n_ranks,
                              rw_node_selection how, int32_t *keep, int32_t *n_keep)
{
    int32_t n = net->n_nodes;
    *n_keep = 0;
    if (rw_network_total_slots(net) < n_ranks)
        return rw_fail(RW_ERR_ARG, "the allocation has %lld slots for %d ranks",
                       (long long)rw_network_total_slots(net), n_ranks);
    if (how == RW_SELECT_ALL || how == RW_SELECT_FIRST) {
        int64_t have = 0;
        for (int32_t i = 0; i < n && (how == RW_SELECT_ALL || have < n_ranks); i++) {
            if (net->slots[i] == 0) continue;
            keep[(*n_keep)++] = i;
            have += net->slots[i];
        }
        return RW_OK;
    }
    if (how != RW_SELECT_GREEDY && how != RW_SELECT_WEIGHTED)
        return rw_fail(RW_ERR_ARG, "unknown node selection %d", (int)how);

    /* Distance: the round trip of the job's mean message (weighted) or of
     * an empty one (plain greedy: latency, as the seed measured it). */
    grow_ctx g = {net, how == RW_SELECT_WEIGHTED ? mean_message(traffic) : 0, n_ranks,
                  how == RW_SELECT_WEIGHTED};
    /* One node enough: take the first with the slots (no pair needed). */
    for (int32_t a = 0; a < n; a++)
        if (net->slots[a] >= n_ranks) {
            keep[(*n_keep)++] = a;
            return RW_OK;
        }
    /* Every node needed (no node could be left out): nothing to choose. */
    int32_t smallest = INT32_MAX;
    for (int32_t a = 0; a < n; a++)
        if (net->slots[a] > 0 && net->slots[a] < smallest) smallest = net->slots[a];
    if (rw_network_total_slots(net) - smallest < n_ranks) {
        for (int32_t a = 0; a < n; a++)
            if (net->slots[a] > 0) keep[(*n_keep)++] = a;
        return RW_OK;
    }
    size_t n_alloc = n > 0 ? (size_t)n : 1;
    double *sum = malloc(n_alloc * sizeof *sum);
    char *chosen = malloc(n_alloc);
    int32_t *trial = malloc(n_alloc * sizeof *trial);
    if (!sum || !chosen || !trial) {
        free(sum), free(chosen), free(trial);
        return rw_fail(RW_ERR_NOMEM, "out of memory");
    }
    /* The seed's start, the two closest nodes, then growths from single
     * nodes (up to 64, spread over the allocation): one greedy growth can
     * take three nodes of a rack and have to finish in another, when a
     * whole rack was free elsewhere. The set with the least summed
     * distance wins; ties keep the earlier start. */
    int32_t first = -1, second = -1;
    double best_pair = DBL_MAX;
    for (int32_t a = 0; a < n; a++) {
        if (net->slots[a] == 0) continue;
        for (int32_t b = a + 1; b < n; b++) {
            if (net->slots[b] == 0) continue;
            double d = dist(&g, a, b);
            if (d < best_pair) best_pair = d, first = a, second = b;
        }
    }
    double best = grow(&g, first, second, sum, chosen, keep, n_keep);
    /* A growth costs ~n^2 distances: fewer starts on big allocations. */
    int64_t affordable = (int64_t)(4e8 / ((double)n * n));
    int32_t starts = (int32_t)(affordable < 1 ? 1 : affordable > 64 ? 64 : affordable);
    if (starts > n) starts = n;
    for (int32_t k = 0; k < starts; k++) {
        int32_t v = (int32_t)((int64_t)k * n / starts);
        if (net->slots[v] == 0) continue;
        int32_t n_trial;
        double cost = grow(&g, v, -1, sum, chosen, trial, &n_trial);
        if (cost < best * (1 - 1e-12)) {
            best = cost;
            *n_keep = n_trial;
            for (int32_t i = 0; i < n_trial; i++) keep[i] = trial[i];
        }
    }
    free(sum), free(chosen), free(trial);
    return RW_OK;
}
