/* rankwise — mapping engine: choose nodes of an allocation and place the
 * ranks of a job on them so that its traffic rides the fast node pairs.
 *
 * Inputs: the cost of sending between the allocation's nodes (rw_network,
 * built from a measured model or from a static topology), the job's
 * traffic (rw_matrix), an objective and an algorithm. Output: a placement
 * rank -> (node, slot) that is always valid: every rank placed once, no
 * node holding more ranks than it has slots. Every algorithm is
 * deterministic for a given seed and never returns a placement costlier
 * than the one it started from.
 */
#ifndef RANKWISE_MAP_H
#define RANKWISE_MAP_H

#include "rankwise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------
 * The network an allocation offers
 * ------------------------------------------------------------------- */

/* Dense cost of a message from node a to node b of the allocation:
 * time = alpha[a*n+b] + bytes * beta[a*n+b]. The diagonal holds the
 * intra-node figures. Hop-bytes on a static topology is the same thing
 * with alpha = 0 and beta = hops. */
typedef struct rw_network {
    int32_t n_nodes;
    int32_t *slots; /* ranks each node can take (>= 0) */
    double *alpha;  /* n_nodes^2, seconds */
    double *beta;   /* n_nodes^2, seconds per byte */
} rw_network;

/* All costs zero; slots copied (NULL: one slot each). */
RW_API rw_status rw_network_create(int32_t n_nodes, const int32_t *slots, rw_network **out);
RW_API void rw_network_free(rw_network *net);

/* The allocation's nodes taken from a measured model: node k of the
 * network is model node model_index[k]. A pair the model lacks (UNPROBED
 * or MISSING, or an intra-node figure never measured) is an error unless
 * fill_missing is set; then it gets the slowest alpha and beta measured
 * between any two nodes, and *n_filled counts such pairs (may be NULL). */
RW_API rw_status rw_network_from_model(const rw_model *m, int32_t n_nodes, const int32_t *model_index,
                                       const int32_t *slots, int fill_missing, int64_t *n_filled,
                                       rw_network **out);

/* The sub-network of the nodes keep[0..n_keep) (indices into net). */
RW_API rw_status rw_network_subset(const rw_network *net, int32_t n_keep, const int32_t *keep,
                                   rw_network **out);

RW_API int64_t rw_network_total_slots(const rw_network *net);

/* ---------------------------------------------------------------------
 * Objectives
 * ------------------------------------------------------------------- */

typedef enum rw_objective {
    /* Sum over ordered rank pairs of msgs*alpha + bytes*beta between their
     * nodes: the communication time of the whole run, all messages in
     * sequence (Getmansky et al. 2015, eq. 4). */
    RW_OBJ_TIME = 0,
    /* The largest per-rank time: what rank r sends plus what it receives,
     * each message costed as above; what a bulk-synchronous step waits
     * for. */
    RW_OBJ_BOTTLENECK = 1
} rw_objective;

/* "time", "bottleneck" (NULL out of range) and back (-1 when unknown). */
RW_API const char *rw_objective_name(int objective);
RW_API int rw_objective_from_name(const char *name);

/* Cost of placement node_of[0..n_ranks) (n_ranks == traffic->n_ranks). */
RW_API rw_status rw_map_cost(const rw_matrix *traffic, const rw_network *net, rw_objective objective,
                             const int32_t *node_of, double *cost);

/* The placement decision (rw_map against the block placement, the CLI's
 * predictor decision, MPI's reorder flag and the live remap in the job): a
 * placement costing `cost` replaces the default costing default_cost only
 * when cost < default_cost * rw_decision_bar(...), the bar being 1 - the
 * largest of min_gain, 1e-9 (no change for nothing) and, when the
 * placement sends more bytes between the model's groups than the default
 * while the judge holds no shared-link capacities (loads_unseen_links),
 * RW_UNSEEN_LINK_MARGIN: what it adds crosses uplinks the judge cannot see
 * (measured: a broadcast predicted 4 % faster ran 10 % slower). */
#define RW_UNSEEN_LINK_MARGIN 0.10
RW_API double rw_decision_bar(double min_gain, int loads_unseen_links);
RW_API int rw_decision_replaces(double default_cost, double cost, double min_gain, int loads_unseen_links);

/* Bytes (or messages when by_msgs) between ranks on different nodes, and
 * the total; the fraction of a stencil's edges that cross nodes is
 * rw_map_cut(..., 1) / total messages of a one-message-per-edge matrix. */
RW_API rw_status rw_map_cut(const rw_matrix *traffic, const int32_t *node_of, int by_msgs,
                            int64_t *cut, int64_t *total);

/* ---------------------------------------------------------------------
 * Mapping
 * ------------------------------------------------------------------- */

typedef enum rw_algorithm {
    RW_ALG_AUTO = 0,       /* picks by size and pattern (see rw_map) */
    RW_ALG_BLOCK,          /* the launchers' default: fill nodes in order */
    RW_ALG_GREEDY,         /* greedy construction (MPIPP-like), then swap refinement */
    RW_ALG_REFINE,         /* swap/move refinement of the block placement */
    RW_ALG_ANNEAL,         /* simulated annealing from the greedy placement */
    RW_ALG_EXHAUSTIVE,     /* branch and bound, <= RW_EXHAUSTIVE_MAX_RANKS ranks */
    RW_ALG_STENCIL,        /* stencil blocks: 2x2x2 blocks of nodes, recursively */
    RW_ALG_TORUS,          /* virtual torus embedded on close nodes */
    RW_ALG_MULTILEVEL,     /* hierarchy from the numbers + graph partitioning + refinement */
    RW_ALG_COUNT
} rw_algorithm;

#define RW_EXHAUSTIVE_MAX_RANKS 10

/* Name of an algorithm ("auto", "block", ...; NULL out of range) and back
 * (-1 when unknown): bindings look values up by name (rankwise.h). */
RW_API const char *rw_algorithm_name(rw_algorithm a);
RW_API int rw_algorithm_from_name(const char *name);

typedef enum rw_node_selection {
    RW_SELECT_FIRST = 0,    /* the first nodes of the allocation, in order */
    RW_SELECT_GREEDY = 1,   /* Cui et al. 2020, fig. 8: two closest nodes, then the closest to the set */
    RW_SELECT_WEIGHTED = 2, /* the same, distances costed at the job's mean message size
                             * and a node weighted by the slots it brings */
    RW_SELECT_ALL = 3       /* keep every node (algorithms may use any free slot) */
} rw_node_selection;

/* "first", "greedy", "weighted", "all" (NULL out of range) and back (-1). */
RW_API const char *rw_node_selection_name(int selection);
RW_API int rw_node_selection_from_name(const char *name);

typedef struct rw_map_options {
    rw_algorithm algorithm;
    rw_objective objective;
    rw_node_selection selection;
    uint64_t seed;
    double time_limit;  /* seconds the search may take, 0 = the algorithm's default */
    int32_t grid[3];    /* process grid of a stencil/torus job (x fastest), 0 = unknown */
    int32_t periodic;   /* the grid wraps around (torus) */
    int32_t verbose;    /* progress lines on stderr */
    double min_gain;    /* the result replaces the default block placement only
                         * when predicted faster by this fraction: gains below
                         * the measurements' noise are not worth a change */
    /* Inside the node (rankwise_node.h), optional: when node is set, every
     * node of the allocation is taken to be built so, each node's ranks are
     * placed on its cores by rw_node_place (node_costs: NULL the default
     * table), and slot_of is a core (hwloc logical index). NULL: slot_of
     * numbers a node's ranks in order. */
    const struct rw_node_topology *node;
    const struct rw_node_costs *node_costs;
} rw_map_options;

/* auto, total time, weighted selection when slots outnumber ranks, seed 1,
 * min_gain 0.02. */
RW_API rw_map_options rw_map_options_default(void);

typedef struct rw_map_result {
    int32_t n_ranks;
    int32_t *node_of;        /* rank -> node of the network */
    int32_t *slot_of;        /* rank -> slot on its node; its core when options.node was given */
    double cost;             /* objective of the result */
    double block_cost;       /* objective of the launchers' default block placement */
    double start_cost;       /* objective the search started from */
    double seconds;          /* wall time of rw_map */
    rw_algorithm algorithm;  /* the one that ran (auto resolved) */
    int32_t n_selected;      /* nodes holding at least one rank */
    int32_t grid_detected;   /* auto found the traffic to be a grid in rank order */
} rw_map_result;

/* Place traffic->n_ranks ranks on net. Refused (RW_ERR_ARG): fewer slots
 * than ranks, an algorithm that does not apply (exhaustive beyond its
 * size, stencil/torus without a grid matching the rank count). auto
 * chooses stencil blocks (torus when periodic) when a grid is given or the
 * traffic is a stencil on a grid numbered in rank order (detected),
 * exhaustive up to 8 ranks on up to 8 nodes, annealing up to 256 ranks,
 * greedy up to 2,048, multilevel beyond. out is filled (free
 * with rw_map_result_free) only on RW_OK. */
RW_API rw_status rw_map(const rw_matrix *traffic, const rw_network *net, const rw_map_options *opt,
                        rw_map_result *out);
RW_API void rw_map_result_free(rw_map_result *r);

/* Nodes chosen by `how` to hold n_ranks ranks: keep[0..*n_keep) in order
 * of choice (an allocation of at least n_ranks slots). traffic may be NULL
 * (then RW_SELECT_WEIGHTED behaves as GREEDY). */
RW_API rw_status rw_map_select_nodes(const rw_network *net, const rw_matrix *traffic, int32_t n_ranks,
                                     rw_node_selection how, int32_t *keep, int32_t *n_keep);

/* Groups of close nodes found from the costs alone (no rack labels), as a
 * hierarchy. Nodes are compared by the round-trip time of a message of
 * `bytes` (alpha + bytes * beta, both directions). Level 0 puts each node
 * alone, the last level puts all nodes in one group; group_of[l * n_nodes
 * + i] is node i's group at level l, groups numbered in `order`. Returns
 * the number of levels (<= max_levels, >= 2 when n_nodes > 1 and
 * max_levels >= 2), -1 on
 * error. order[] receives the nodes in an order where each group at every
 * level is contiguous. */
RW_API int rw_network_hierarchy(const rw_network *net, double bytes, int32_t max_levels,
                                int32_t *group_of, int32_t *order);

#ifdef __cplusplus
}
#endif
#endif /* RANKWISE_MAP_H */
