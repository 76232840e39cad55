/* rankwise — communication trees for rooted collectives (plain C11, no MPI,
 * part of librankwise and compiled into librankwise_coll).
 *
 * A tree says who forwards to whom in a broadcast (and, read upwards, who
 * collects from whom in a reduce or gather): the standard shapes (binomial,
 * k-nomial, flat, chain) and the trees built from a measured model share
 * this one representation, so the collectives library runs any of them and
 * the predictor costs any of them (docs/concepts/collectives.md).
 *
 * Ranks are communicator ranks 0..n_ranks-1. Contract as in rankwise.h:
 * functions return an rw_status, leave one line in rw_last_error()
 * and never exit; a tree is
 * owned by the caller (rw_tree_free). Only rankwise_status.h is included,
 * so that this header declares nothing librankwise_coll lacks.
 */
#ifndef RANKWISE_TREE_H
#define RANKWISE_TREE_H

#include <stdint.h>

#include "rankwise_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rw_tree {
    int32_t n_ranks;
    int32_t root;
    int32_t *parent;      /* n_ranks: parent of r, -1 at the root */
    int32_t *first_child; /* n_ranks + 1 offsets into child */
    int32_t *child;       /* n_ranks - 1: the children of r, child[first_child[r]] ..
                             child[first_child[r + 1] - 1], in the order r sends to them */
} rw_tree;

/* A tree from each rank's parent (-1 at the root only). order (may be
 * NULL) ranks the children of every node: children are sent to by
 * increasing order[child], ties by rank; NULL sends by increasing rank.
 * RW_ERR_ARG on n_ranks < 1, a root out of range, a parent out of range, a
 * second root or a cycle (every rank must reach the root). */
RW_API rw_status rw_tree_from_parents(int32_t n_ranks, int32_t root, const int32_t *parent,
                                      const int32_t *order, rw_tree **out);
RW_API void rw_tree_free(rw_tree *t);

/* RW_OK when t is a tree over its ranks (the rules of rw_tree_from_parents,
 * and child lists that agree with parent). */
RW_API rw_status rw_tree_check(const rw_tree *t);

/* Number of ranks in the subtree of r (r included). */
RW_API int32_t rw_tree_subtree_size(const rw_tree *t, int32_t r);


/* ---- standard shapes (engine/src/coll/shapes.c) ----
 * Ranks are numbered relative to the root, v = (r - root) mod n, and every
 * shape is returned as a tree over the real ranks. Send orders are the
 * order in which a broadcast sends; upward collectives (reduce, gather)
 * receive from the children in the reverse order (smallest subtree first).
 *
 * binomial  parent(v) = v with its lowest set bit cleared; children
 *           v + 2^j for 2^j below that bit, largest first: exactly the
 *           shape and send order of SimGrid 3.32 SMPI's binomial_tree bcast
 *           (and, read upwards, Open MPI's in-order binomial tree);
 * knomial   the same in base k (k >= 2; k = 2 is binomial): children
 *           v + d k^j, d = 1..k-1, for k^j below v's lowest non-zero digit,
 *           largest k^j first, then increasing d;
 * flat      the root sends to every other rank in increasing rank order
 *           (SMPI's flattree, Open MPI's linear algorithms);
 * chain     root -> root+1 -> ... -> root-1 (mod n);
 * binary    parent (v - 1) / 2, children by increasing v (Open MPI's and
 *           SMPI's NTSB binary tree);
 * inorder_binomial  the binomial tree with children by increasing v (Open
 *           MPI's in-order binomial gather and scatter). */
typedef enum rw_tree_shape {
    RW_SHAPE_BINOMIAL = 0,
    RW_SHAPE_KNOMIAL = 1,
    RW_SHAPE_FLAT = 2,
    RW_SHAPE_CHAIN = 3,
    RW_SHAPE_BINARY = 4,
    RW_SHAPE_INORDER_BINOMIAL = 5
} rw_tree_shape;

/* The shape of a name: "binomial", "knomial", "flat", "chain", "binary",
 * "inorder_binomial". RW_ERR_ARG naming the known shapes otherwise. */
RW_API rw_status rw_tree_shape_parse(const char *name, rw_tree_shape *out);

/* A standard shape over n_ranks with the given root (k only for knomial).
 * RW_ERR_ARG on n_ranks < 1, a root out of range, k < 2. */
RW_API rw_status rw_tree_shape_build(rw_tree_shape shape, int32_t n_ranks, int32_t root, int32_t k,
                                     rw_tree **out);

/* A standard shape by its name (rw_tree_shape_parse then rw_tree_shape_build:
 * the same shapes and send orders). radix is used by knomial only.
 * RW_ERR_ARG on an unknown shape, a root out of range, a knomial radix
 * below 2. */
RW_API rw_status rw_tree_by_name(const char *shape, int32_t n, int32_t root, int32_t radix, rw_tree **out);

/* A two-level tree: node_of[r] names the node of rank r (any integers).
 * Each node's leader is its lowest rank, except the root's node, led by
 * the root. The leaders form `between` (ordered by rank, rooted at the
 * root), each node's ranks form `inside` rooted at its leader; a leader
 * sends to the other leaders first, then inside its node. */
RW_API rw_status rw_tree_hierarchical(int32_t n_ranks, int32_t root, const int32_t *node_of,
                                      rw_tree_shape between, rw_tree_shape inside, int32_t k,
                                      rw_tree **out);

/* 1 when every subtree covers a contiguous interval of ranks, so that
 * combining the children in rank order, the node in its place, applies a
 * non-commutative operation in rank order (an in-order tree). */
RW_API int rw_tree_is_in_order(const rw_tree *t);

#ifdef __cplusplus
}
#endif
#endif /* RANKWISE_TREE_H */
