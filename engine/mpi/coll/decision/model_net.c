/* The predictor's network (rw_pnet) for a communicator's ranks from a
 * measured model: rw_pnet_from_model as `rankwise coll tune --model` calls
 * it (one slot per node, the model's overheads), so the library decides as
 * the rules `coll tune` would write for the same placement. No MPI here. */
#include "decision.h"
#include "internal.h"

#include <stdlib.h>

rw_status rwc_pnet_from_model(const rw_model *m, int32_t n_ranks, const int32_t *model_node_of, rw_pnet **out)
{
    *out = NULL;
    /* the nodes used, in order of first rank; rank r on node node_of[r] */
    int32_t *idx = malloc((size_t)n_ranks * sizeof *idx), *node_of = malloc((size_t)n_ranks * sizeof *node_of);
    int32_t k_n = 0;
    if (!idx || !node_of) {
        free(idx);
        free(node_of);
        return rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks", (int)n_ranks);
    }
    for (int32_t r = 0; r < n_ranks; r++) {
        int32_t k = 0;
        while (k < k_n && idx[k] != model_node_of[r])
            k++;
        if (k == k_n)
            idx[k_n++] = model_node_of[r];
        node_of[r] = k;
    }
    rw_pnet_model_options opt = rw_pnet_model_options_default();
    opt.overheads = 1;
    rw_pnet *net = NULL;
    rw_status st = rw_pnet_from_model(m, k_n, idx, NULL, &opt, NULL, NULL, &net);
    if (!st)
        st = rw_pnet_set_placement(net, n_ranks, node_of);
    free(idx);
    free(node_of);
    if (st)
        rw_pnet_free(net);
    else
        *out = net;
    return st;
}
