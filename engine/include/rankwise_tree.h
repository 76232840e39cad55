/* rankwise — communication trees for rooted collectives (plain C11, no MPI,
 * part of librankwise and compiled into librankwise_coll).
 *
 * A tree says who forwards to whom in a broadcast (and, read upwards, who
 * collects from whom in a reduce or gather): the standard shapes (binomial,
 * k-nomial, flat, chain) and the trees built from a measured model share
 * this one representation, so the collectives library runs any of them and
 * the predictor costs any of them (docs/collectives.md).
 *
 * Ranks are communicator ranks 0..n_ranks-1. Contract as in rankwise.h:
 * functions return an rw_status, leave one line in rw_last_error() and
 * never exit; a tree is owned by the caller (rw_tree_free).
 */
#ifndef RANKWISE_TREE_H
#define RANKWISE_TREE_H

#include "rankwise.h"

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
rw_status rw_tree_from_parents(int32_t n_ranks, int32_t root, const int32_t *parent,
                               const int32_t *order, rw_tree **out);
void rw_tree_free(rw_tree *t);

/* RW_OK when t is a tree over its ranks (the rules of rw_tree_from_parents,
 * and child lists that agree with parent). */
rw_status rw_tree_check(const rw_tree *t);

/* Number of ranks in the subtree of r (r included). */
int32_t rw_tree_subtree_size(const rw_tree *t, int32_t r);

#ifdef __cplusplus
}
#endif
#endif /* RANKWISE_TREE_H */
