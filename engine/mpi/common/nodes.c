/* Node discovery: group ranks by processor name (or one node per rank). */
#include "nodes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

rw_status rw_nodes_discover(MPI_Comm comm, rw_group_by by, rw_nodes *out)
{
    memset(out, 0, sizeof *out);
    out->node_comm = out->leaders = MPI_COMM_NULL;
    int rank, size, len;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);

    char mine[RW_NAME_LEN] = {0};
    MPI_Get_processor_name(mine, &len);
    if (by == RW_GROUP_BY_RANK) { /* host:rank, the host cut to leave room for the rank */
        size_t n = strnlen(mine, RW_NAME_LEN - 16);
        snprintf(mine + n, sizeof mine - n, ":%d", rank);
    }
    for (char *c = mine; *c; c++) /* names are single tokens in the model file */
        if (*c == ' ' || *c == '\t')
            *c = '_';

    char (*all)[RW_NAME_LEN] = malloc((size_t)size * RW_NAME_LEN);
    int *node_of = malloc((size_t)size * sizeof *node_of);
    out->names = malloc((size_t)size * RW_NAME_LEN);
    out->ranks_per_node = calloc((size_t)size, sizeof *out->ranks_per_node);
    if (!all || !node_of || !out->names || !out->ranks_per_node) {
        free(all);
        free(node_of);
        rw_nodes_free(out);
        return rw_fail(RW_ERR_NOMEM, "out of memory discovering nodes");
    }
    MPI_Allgather(mine, RW_NAME_LEN, MPI_CHAR, all, RW_NAME_LEN, MPI_CHAR, comm);

    /* Every rank computes the same numbering from the same table. */
    int n = 0;
    for (int r = 0; r < size; r++) {
        int k;
        for (k = 0; k < n; k++)
            if (strncmp(all[r], out->names[k], RW_NAME_LEN) == 0)
                break;
        if (k == n)
            memcpy(out->names[n++], all[r], RW_NAME_LEN);
        node_of[r] = k;
        out->ranks_per_node[k]++;
    }
    out->n_nodes = n;
    out->my_node = node_of[rank];
    free(all);
    free(node_of);

    MPI_Comm_split(comm, out->my_node, rank, &out->node_comm);
    int local;
    MPI_Comm_rank(out->node_comm, &local);
    out->is_leader = local == 0;
    MPI_Comm_split(comm, out->is_leader ? 0 : MPI_UNDEFINED, out->my_node, &out->leaders);
    return RW_OK;
}

void rw_nodes_free(rw_nodes *nodes)
{
    if (nodes->node_comm != MPI_COMM_NULL)
        MPI_Comm_free(&nodes->node_comm);
    if (nodes->leaders != MPI_COMM_NULL)
        MPI_Comm_free(&nodes->leaders);
    free(nodes->names);
    free(nodes->ranks_per_node);
    nodes->names = NULL;
    nodes->ranks_per_node = NULL;
}
