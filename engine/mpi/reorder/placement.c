/* A new rank order on a measured model: the mapper (rw_map) places the
 * traffic's vertices on the slots the communicator already occupies, and
 * the result replaces the identity (vertex v on rank v) only when
 * rw_decision_replaces says so (min_gain; RW_UNSEEN_LINK_MARGIN when it
 * sends more bytes between the model's groups). Shared by MPI's reorder
 * flag (topo.c) and the live model's remap (engine/mpi/live/remap.c). No
 * MPI here. */
#include "coll.h"
#include "decision/decision.h"
#include "internal.h"
#include "placement.h"

#include <stdlib.h>

/* Whether the mapper's placement (vertex v on node cand[v]) sends more
 * bytes between the model's groups than the identity (node ident[v]): the
 * mapper's network holds no shared link, so those bytes are unseen. */
static rw_status crosses_more(const rw_model *m, const rw_matrix *traffic, const int32_t *idx, int32_t k_n,
                              const int32_t *ident, const int32_t *cand, int *more)
{
    int32_t n = traffic->n_ranks;
    int32_t *group = malloc((size_t)m->n_nodes * sizeof *group), *g = malloc(((size_t)n + 1) * sizeof *g);
    rw_status st = group && g ? RW_OK : rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks' groups", (int)n);
    int64_t before = 0, after = 0, total = 0;
    if (!st && rw_model_groups(m, group) < 0)
        st = RW_ERR_NOMEM;
    for (int pass = 0; !st && pass < 2; pass++) {
        const int32_t *node = pass ? cand : ident;
        for (int32_t v = 0; v < n; v++)
            g[v] = node[v] >= 0 && node[v] < k_n ? group[idx[node[v]]] : -1;
        st = rw_map_cut(traffic, g, 0, pass ? &after : &before, &total);
    }
    *more = !st && after > before;
    free(group);
    free(g);
    return st;
}

rw_status rwc_place_on_model(const rw_model *m, const rw_matrix *traffic, const int32_t *model_node, int size,
                             double min_gain, int *new_rank_of, rwc_placement *out)
{
    int n_virtual = traffic->n_ranks;
    int32_t *idx = malloc((size_t)size * sizeof *idx), *slots = calloc((size_t)size, sizeof *slots);
    int32_t *node_of = malloc((size_t)size * sizeof *node_of), *first = malloc(((size_t)size + 1) * sizeof *first);
    int32_t *rank_at = malloc((size_t)size * sizeof *rank_at), *fill = calloc((size_t)size, sizeof *fill);
    int32_t *taken = calloc((size_t)size, sizeof *taken);
    rw_network *net = NULL;
    rw_map_result res = {0};
    int have_res = 0;
    int32_t k_n = 0;
    *out = (rwc_placement){0};
    rw_status st = idx && slots && node_of && first && rank_at && fill && taken
                       ? RW_OK
                       : rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks", size);
    if (!st && n_virtual > size)
        st = rw_fail(RW_ERR_ARG, "traffic between %d ranks on a communicator of %d", n_virtual, size);
    for (int r = 0; !st && r < size; r++) { /* the nodes, in order of first rank */
        int32_t k = 0;
        while (k < k_n && idx[k] != model_node[r])
            k++;
        if (k == k_n)
            idx[k_n++] = model_node[r];
        node_of[r] = k;
        slots[k]++;
    }
    if (!st) { /* the ranks of each node in rank order: slot s of node k is rank_at[first[k] + s] */
        first[0] = 0;
        for (int32_t k = 0; k < k_n; k++)
            first[k + 1] = first[k] + slots[k];
        for (int r = 0; r < size; r++)
            rank_at[first[node_of[r]] + fill[node_of[r]]++] = r;
    }
    if (!st)
        st = rw_network_from_model(m, k_n, idx, slots, 1, NULL, &net);
    if (!st) /* vertex v on rank v's node: what the MPI does with reorder = 0 */
        st = rw_map_cost(traffic, net, RW_OBJ_TIME, node_of, &out->identity);
    rw_map_options opt = rw_map_options_default();
    if (!st)
        st = rw_map(traffic, net, &opt, &res);
    have_res = !st;
    if (!st) {
        out->cost = res.cost;
        out->algorithm = res.algorithm;
        out->n_nodes = k_n;
        int more = 0;
        st = crosses_more(m, traffic, idx, k_n, node_of, res.node_of, &more);
        out->changed = !st && rw_decision_replaces(out->identity, res.cost, min_gain, more);
    }
    for (int32_t v = 0; !st && v < n_virtual; v++) {
        int r = v;
        if (out->changed) {
            int32_t k = res.node_of[v], s = res.slot_of[v];
            if (k < 0 || k >= k_n || s < 0 || s >= slots[k])
                st = rw_fail(RW_ERR_STATE, "the mapper placed vertex %d on no slot of the communicator", (int)v);
            else
                r = rank_at[first[k] + s];
        }
        if (!st && taken[r]++)
            st = rw_fail(RW_ERR_STATE, "the mapper placed two vertices on rank %d's slot", r);
        if (!st)
            new_rank_of[r] = v;
    }
    int next_rank = n_virtual; /* ranks left out of the traffic follow, in order */
    for (int r = 0; !st && r < size; r++)
        if (!taken[r])
            new_rank_of[r] = next_rank++;
    if (have_res)
        rw_map_result_free(&res);
    rw_network_free(net);
    free(idx);
    free(slots);
    free(node_of);
    free(first);
    free(rank_at);
    free(fill);
    free(taken);
    return st;
}
