/* Which ranks share a node, and the communicators that follow from it. */
#ifndef RW_NODES_H
#define RW_NODES_H

#include <mpi.h>

#include "rankwise_probe.h"

#define RW_NAME_LEN 256

typedef struct rw_nodes {
    int n_nodes;
    int my_node;        /* node index of this rank */
    int is_leader;      /* lowest rank of its node */
    MPI_Comm node_comm; /* ranks of my node */
    MPI_Comm leaders;   /* one rank per node, rank = node index; NULL elsewhere */
    char (*names)[RW_NAME_LEN]; /* n_nodes names, on every rank */
    int *ranks_per_node;        /* n_nodes, on every rank */
} rw_nodes;

/* Collective. Nodes are numbered in order of their lowest rank, so rank 0
 * of comm is the leader of node 0 and rank 0 of `leaders`. */
rw_status rw_nodes_discover(MPI_Comm comm, rw_group_by by, rw_nodes *out);
void rw_nodes_free(rw_nodes *nodes);

#endif
