/* Costing a complete placement: the objective, and the traffic it cuts. */
#include <stdlib.h>

#include "context.h"

static rw_status check_placement(const rw_matrix *traffic, int32_t n_nodes, const int32_t *node_of)
{
    for (int32_t i = 0; i < traffic->n_ranks; i++)
        if (node_of[i] < 0 || node_of[i] >= n_nodes)
            return rw_fail(RW_ERR_ARG, "rank %d is placed on node %d (the network has %d)", i,
                           node_of[i], n_nodes);
    return RW_OK;
}

rw_status rw_map_cost(const rw_matrix *traffic, const rw_network *net, rw_objective objective,
                      const int32_t *node_of, double *cost)
{
    rw_status st = check_placement(traffic, net->n_nodes, node_of);
    if (st) return st;
    int32_t n = traffic->n_ranks;
    double *per_rank = NULL;
    if (objective == RW_OBJ_BOTTLENECK) {
        per_rank = calloc((size_t)(n > 0 ? n : 1), sizeof *per_rank);
        if (!per_rank) return rw_fail(RW_ERR_NOMEM, "out of memory");
    }
    double total = 0;
    for (int32_t i = 0; i < n; i++)
        for (int64_t k = traffic->row_start[i]; k < traffic->row_start[i + 1]; k++) {
            int32_t j = traffic->dst[k];
            if (j == i) continue; /* never touches the network */
            double t = rw_edge_cost(net, node_of[i], node_of[j], (double)traffic->msgs[k],
                                    (double)traffic->bytes[k]);
            total += t;
            if (per_rank) {
                per_rank[i] += t;
                per_rank[j] += t;
            }
        }
    if (per_rank) {
        double worst = 0;
        for (int32_t i = 0; i < n; i++)
            if (per_rank[i] > worst) worst = per_rank[i];
        free(per_rank);
        *cost = worst;
    } else {
        *cost = total;
    }
    return RW_OK;
}

rw_status rw_map_cut(const rw_matrix *traffic, const int32_t *node_of, int by_msgs, int64_t *cut,
                     int64_t *total)
{
    int64_t c = 0, t = 0;
    for (int32_t i = 0; i < traffic->n_ranks; i++) {
        if (node_of[i] < 0) return rw_fail(RW_ERR_ARG, "rank %d is not placed", i);
        for (int64_t k = traffic->row_start[i]; k < traffic->row_start[i + 1]; k++) {
            int32_t j = traffic->dst[k];
            if (j == i) continue;
            int64_t w = by_msgs ? traffic->msgs[k] : traffic->bytes[k];
            t += w;
            if (node_of[i] != node_of[j]) c += w;
        }
    }
    *cut = c;
    *total = t;
    return RW_OK;
}
