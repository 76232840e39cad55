/* Choosing the nodes of an allocation a job runs on (seed 000, fig. 8):
 * start from the two closest nodes, then keep adding the node closest to
 * the chosen set, until the chosen nodes have slots for every rank. */
#include <float.h>
#include <stdlib.h>

#include "map_internal.h"

/* Mean bytes per message of the traffic (0 without traffic). */
static double mean_message(const rw_matrix *t)
{
    if (!t) return 0;
    int64_t msgs = rw_matrix_total_msgs(t), bytes = rw_matrix_total_bytes(t);
    return msgs > 0 ? (double)bytes / (double)msgs : (double)bytes;
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
    double bytes = how == RW_SELECT_WEIGHTED ? mean_message(traffic) : 0;
    double *sum = calloc((size_t)n, sizeof *sum);
    char *chosen = calloc((size_t)n, 1);
    if (!sum || !chosen) {
        free(sum);
        free(chosen);
        return rw_fail(RW_ERR_NOMEM, "out of memory");
    }
#define DIST(a, b)                                                                  \
    (net->alpha[(size_t)(a) * n + (b)] + net->alpha[(size_t)(b) * n + (a)] +         \
     bytes * (net->beta[(size_t)(a) * n + (b)] + net->beta[(size_t)(b) * n + (a)]))

    /* One node enough: take the first with the slots (no pair needed). */
    for (int32_t a = 0; a < n; a++)
        if (net->slots[a] >= n_ranks) {
            keep[(*n_keep)++] = a;
            free(sum);
            free(chosen);
            return RW_OK;
        }
    int64_t have = 0;
    int32_t first = -1, second = -1;
    double best = DBL_MAX;
    for (int32_t a = 0; a < n; a++) {
        if (net->slots[a] == 0) continue;
        if (first < 0) first = a; /* a lone node when it alone suffices */
        for (int32_t b = a + 1; b < n; b++) {
            if (net->slots[b] == 0) continue;
            double d = DIST(a, b);
            if (d < best) best = d, first = a, second = b;
        }
    }
    int32_t next = first;
    while (have < n_ranks && next >= 0) {
        int32_t s = next;
        chosen[s] = 1;
        keep[(*n_keep)++] = s;
        /* A chosen node weighs by the ranks it will hold (weighted variant). */
        int64_t hold = net->slots[s] < n_ranks - have ? net->slots[s] : n_ranks - have;
        have += net->slots[s];
        double w = how == RW_SELECT_WEIGHTED ? (double)hold : 1.0;
        for (int32_t c = 0; c < n; c++)
            if (!chosen[c]) sum[c] += w * DIST(s, c);
        if (*n_keep == 1 && second >= 0) {
            next = second;
            continue;
        }
        next = -1;
        best = DBL_MAX;
        for (int32_t c = 0; c < n; c++)
            if (!chosen[c] && net->slots[c] > 0 && sum[c] < best) best = sum[c], next = c;
    }
#undef DIST
    free(sum);
    free(chosen);
    return RW_OK;
}
