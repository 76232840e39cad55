/* A new rank order on a measured model (placement.c): shared by MPI's
 * reorder flag (topo.c) and the live model's remap (engine/mpi/live/). */
#ifndef RWC_PLACEMENT_H
#define RWC_PLACEMENT_H

#include "rankwise.h"
#include "rankwise_map.h"

typedef struct rwc_placement {
    double identity; /* predicted cost of vertex v on rank v, s (RW_OBJ_TIME) */
    double cost;     /* of the mapper's placement */
    rw_algorithm algorithm;
    int32_t n_nodes; /* nodes the communicator occupies */
    int changed;     /* cost beats identity by min_gain: new_rank_of is the mapper's */
} rwc_placement;

/* new_rank_of[r] for the size ranks on model nodes model_node[r], traffic
 * between traffic->n_ranks <= size vertices: the mapper's placement among
 * the ranks' own slots when predicted faster than the identity by
 * min_gain, else the identity. Ranks beyond the traffic's vertices follow
 * in order. */
rw_status rwc_place_on_model(const rw_model *m, const rw_matrix *traffic, const int32_t *model_node, int size,
                             double min_gain, int *new_rank_of, rwc_placement *out);

#endif
