/* The triple trinary tree broadcast as a predictor schedule (trinary_sched.c). */
#ifndef RW_PREDICT_TRINARY_SCHED_H
#define RW_PREDICT_TRINARY_SCHED_H

#include "predict_internal.h"

/* The collectives library's trinary broadcast (engine/mpi/coll/
 * bcast_trinary.c) message for message, on b's ranks from root: three
 * thirds, each down its tree (rw_tree_trinary_ordered over `order`, NULL:
 * rank order) in segments of `segment` bytes (0: rw_trinary_segment),
 * every segment forwarded with a nonblocking send as soon as it is in. A
 * rank keeps RW_TRINARY_WINDOW receives posted per tree: segment i into
 * it moves once segment i - WINDOW is received. The root's sends wait for
 * the transfers after[0..n_after) (none: 0); with start (n entries, -1:
 * none) rank r posts its first receives once transfer start[r] is over
 * (an allreduce: the end of r's reduce). */
rw_status rw_b_trinary_bcast(rw_builder *b, int32_t root, double bytes, int64_t segment, const int32_t *order,
                             const int64_t *after, int32_t n_after, const int64_t *start);

/* The library's trinary reduce (engine/mpi/coll/reduce_trinary.c): the
 * trees reversed (over `order` as above), a vector of bytes / elem_size
 * elements to root. ends (n entries, or NULL: none) gets for each rank an
 * empty transfer to itself that ends once everything the reduce sends it
 * is in (-1 for a rank that only sends): what a broadcast after the
 * reduce waits for. */
rw_status rw_b_trinary_reduce(rw_builder *b, int32_t root, double bytes, double elem_size, int64_t segment,
                              const int32_t *order, int64_t *ends);

/* rw_sched_library's "trinary": the broadcast or reduce from opt->root,
 * or the allreduce (reduce to rank 0, then broadcast from it, each rank's
 * broadcast after its own reduce, as the library calls them), over trees
 * laid as rw_trinary_best_order says, as the library lays them when it has
 * a network; 4-byte elements. op is a registry id (rw_coll_op); RW_ERR_ARG
 * for an operation trinary does not run or a root out of range. */
rw_status rw_sched_trinary(const rw_pnet *net, int op, double bytes, const rw_coll_options *opt, rw_sched **out);

#endif
