/* Triple trinary trees (trinary.c): three spanning trees for the Tofu
 * broadcast (Ajima 2018), each carrying a third of the message. */
#ifndef RW_COLL_TRINARY_H
#define RW_COLL_TRINARY_H

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

/* Bytes of part k (0..2) of a message of `bytes`, and where it starts:
 * the first bytes % 3 parts take one more byte. */
size_t rw_trinary_part(size_t bytes, int k, size_t *offset);

/* The pipeline segment of the trinary broadcast of `bytes` when none is
 * given: each third in about sixteen segments, 8 KiB to 24 KiB, a third
 * below 16 KiB in one piece. Measured under SMPI on a 4x4x2 torus (1 us
 * send and receive overhead per eager message, 12 GB/s links;
 * docs/benchmarks.md, "Long messages on a torus"): smaller segments pay
 * the overhead of many messages, larger ones a longer pipeline fill. */
size_t rw_trinary_segment(size_t bytes);

#endif
