/* Triple trinary trees (trinary.c): three spanning trees for the Tofu
 * broadcast (Ajima 2018), each carrying a third of the message. */
#ifndef RW_COLL_TRINARY_H
#define RW_COLL_TRINARY_H

#include "rankwise_predict.h"
#include "rankwise_tree.h"

/* The three trees over n_ranks ranks rooted at root, in out[0..2] (free
 * with rw_tree_free). With ranks numbered v = (r - root) mod n, tree k's
 * inner ranks are v = 1 + k, 4 + k, 7 + k, ...: a ternary heap among
 * themselves under the root, every other rank a leaf on an inner rank
 * with a free place (inner ranks have at most three children; the root has
 * one child per tree, two in tree 2 when n - 1 = 2 mod 3), ranks laid on
 * the shape depth-first in increasing v so that a subtree holds nearby
 * ranks. A rank is inner in at most one tree, so the trees share no
 * directed edge from n >= 4 on, and every non-root rank sends at most as
 * many bytes as the message. RW_ERR_ARG for n_ranks < 1 or a root out of
 * range. */
rw_status rw_tree_trinary(int32_t n_ranks, int32_t root, rw_tree *out[3]);

/* The same trees over ranks laid in `order` instead of rank order:
 * order[j] is the rank at position j (a permutation of 0..n_ranks-1; NULL:
 * rank order, rw_tree_trinary) and v = (position(r) - position(root)) mod
 * n. A relabelling of the ranks, so the trees keep every property above.
 * RW_ERR_ARG as above or for an order that is not a permutation. */
rw_status rw_tree_trinary_ordered(int32_t n_ranks, int32_t root, const int32_t *order, rw_tree *out[3]);

/* An order of net's ranks (its placement) along the network, for
 * rw_tree_trinary_ordered: from rank 0, each next rank the nearest to the
 * last one (the cost of a segment-sized message both ways, latency and
 * bandwidth), ties to the one nearest to all placed so far (the placed
 * ranks grow as one compact region), then the lowest rank. Stretches of
 * the order are then near in the network whatever the rank numbering: on
 * a torus mostly one hop apart, on racks one rack after another. Cost
 * O(n^2). RW_ERR_ARG for a NULL net or order. */
rw_status rw_trinary_order(const rw_pnet *net, int32_t *order);

/* The order the library lays the trinary trees in over net: rank order
 * where it already follows the network, else rw_trinary_order's walk.
 * Rank order follows it when the costs between consecutive ranks (as
 * rw_trinary_order measures them) add up to at most RW_TRINARY_FOLLOWS
 * times the walk's: on rankwise's generated tori (3x3x2, 4x4x2, 4x4x4),
 * fat trees (4 and 8 racks of 8) and the tests' degraded 2 racks of 4,
 * rank order is 1.00-1.13 times the walk, shuffled (three seeds each)
 * 1.24-1.86 times. A slow node lengthens both alike. The walk lowers the hops of the trees' edges
 * (4x4x2: 159 against 175 in torus order, 244 shuffled) but bends where
 * torus order runs straight along an axis, and measured slower there: where
 * rank order is good it is kept. */
#define RW_TRINARY_FOLLOWS 1.2
rw_status rw_trinary_best_order(const rw_pnet *net, int32_t *order);

/* Receives a rank of the trinary broadcast keeps posted per tree: under
 * SMPI a segment moves only once its receive is posted, so this bounds
 * the segments in flight into a rank (bcast_trinary.c; the predictor's
 * schedule, trinary_sched.c, follows it). */
enum { RW_TRINARY_WINDOW = 4 };

/* Bytes of part k (0..2) of a message of `bytes`, and where it starts:
 * the first bytes % 3 parts take one more byte. */
size_t rw_trinary_part(size_t bytes, int k, size_t *offset);

/* The pipeline segment of the trinary broadcast of `bytes` when none is
 * given: each third in about sixteen segments, 8 KiB to 24 KiB, a third
 * below 16 KiB in one piece. Measured under SMPI on a 4x4x2 torus (1 us
 * send and receive overhead per eager message, 12 GB/s links;
 * docs/results/coll.md, "Long messages on a torus"): smaller segments pay
 * the overhead of many messages, larger ones a longer pipeline fill. */
size_t rw_trinary_segment(size_t bytes);

#endif
