/* Placeholder until the hierarchy lands: one level of singletons, one of all. */
#include "map_internal.h"
int rw_network_hierarchy(const rw_network *net, double bytes, int32_t max_levels,
                         int32_t *group_of, int32_t *order)
{
    int32_t n = net->n_nodes;
    for (int32_t i = 0; i < n; i++) {
        order[i] = i;
        group_of[i] = i;
        if (max_levels > 1) group_of[n + i] = 0;
    }
    return max_levels > 1 ? 2 : 1;
}
