/* The search state every mapping algorithm works on: the traffic in both
 * directions, the current placement and node loads, and the deltas of a
 * move or a swap (context.c). Algorithms depend on this and on
 * algorithms.h, never on map.c. */
#ifndef RW_MAP_CONTEXT_H
#define RW_MAP_CONTEXT_H

#include "../internal.h"
#include "rankwise_map.h"

/* Cost of n messages carrying d bytes from node a to node b. */
static inline double rw_edge_cost(const rw_network *net, int32_t a, int32_t b, double n, double d)
{
    size_t p = (size_t)a * (size_t)net->n_nodes + (size_t)b;
    return n * net->alpha[p] + d * net->beta[p];
}

/* Objective value during a search. For RW_OBJ_TIME only `total` counts;
 * for RW_OBJ_BOTTLENECK `max` decides and `total` breaks ties (a move that
 * leaves the slowest rank alone but lowers the rest is still progress). */
typedef struct rw_score {
    double max, total;
} rw_score;

/* Search state: the traffic in both directions (self traffic left out: it
 * never touches the network), the current placement and node loads. */
typedef struct rw_undo {
    int32_t rank;
    double time;
} rw_undo;

typedef struct rw_mapctx {
    const rw_network *net;
    rw_objective objective;
    int32_t n_ranks, n_nodes;
    int64_t *out_start, *in_start; /* CSR by source / by destination */
    int32_t *out_peer, *in_peer;
    double *out_msgs, *out_bytes, *in_msgs, *in_bytes;
    int64_t *part_start;           /* undirected partners of each rank, for neighbourhoods */
    int32_t *partner;
    int32_t *node_of; /* n_ranks */
    int32_t *load;    /* n_nodes: ranks placed on each node */
    double *rank_time; /* n_ranks: sends + receives of each rank (bottleneck only) */
    double *tree;      /* max segment tree over rank_time (bottleneck only) */
    int32_t tree_leaves;
    rw_undo *undo; /* rank times an evaluation changed, to put back */
    int64_t undo_len, undo_cap;
    rw_score score;
} rw_mapctx;

/* Build the state for traffic on net with the placement node_of (copied;
 * every rank placed, no node over its slots). */
rw_status rw_mapctx_init(rw_mapctx *c, const rw_matrix *traffic, const rw_network *net,
                         rw_objective objective, const int32_t *node_of);
void rw_mapctx_free(rw_mapctx *c);

/* RW_OK when node_of places n ranks on net within every node's slots. */
rw_status rw_mapctx_check(const rw_network *net, int32_t n, const int32_t *node_of);

/* Time of rank r's sends and receives if r sat on node `at`, the others
 * where they are. */
double rw_mapctx_rank_time(const rw_mapctx *c, int32_t r, int32_t at);

/* Score after moving r to node b (b must have a free slot) or swapping r
 * and s; nothing changes. */
rw_score rw_mapctx_eval_move(rw_mapctx *c, int32_t r, int32_t b);
rw_score rw_mapctx_eval_swap(rw_mapctx *c, int32_t r, int32_t s);
void rw_mapctx_move(rw_mapctx *c, int32_t r, int32_t b);
void rw_mapctx_swap(rw_mapctx *c, int32_t r, int32_t s);

/* a strictly better than b (relative tolerance 1e-12). */
int rw_score_better(rw_objective objective, rw_score a, rw_score b);
/* One number to minimise, for annealing: total, or max + total / n_ranks. */
double rw_score_energy(const rw_mapctx *c, rw_score s);
/* The objective value reported to users. */
double rw_score_value(rw_objective objective, rw_score s);

/* Monotonic wall clock, seconds: searches stop at a deadline on it. */
double rw_now(void);

#endif
