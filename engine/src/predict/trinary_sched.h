/* The triple trinary tree broadcast as a predictor schedule (trinary_sched.c). */
#ifndef RW_PREDICT_TRINARY_SCHED_H
#define RW_PREDICT_TRINARY_SCHED_H

#include "predict_internal.h"

/* The collectives library's trinary broadcast (engine/mpi/coll/
 * bcast_trinary.c) message for message, on b's ranks from root: three
 * thirds, each down its tree (rw_tree_trinary) in segments of `segment`
 * bytes (0: rw_trinary_segment), every receive posted at the start and
 * every segment forwarded with a nonblocking send as soon as it is in;
 * the root's sends wait for the transfers after[0..n_after) (none: 0). */
rw_status rw_b_trinary_bcast(rw_builder *b, int32_t root, double bytes, int64_t segment, const int64_t *after,
                             int32_t n_after);

/* The library's trinary reduce (engine/mpi/coll/reduce_trinary.c): the
 * trees reversed, a vector of bytes / elem_size elements to root.
 * into_root (room for RW_TRINARY_ROOT_IN) receives the last transfers
 * into the root, *n_into their number: what a broadcast after it waits for
 * (the root has one child per tree, two in one of them). */
enum { RW_TRINARY_ROOT_IN = 4 };
rw_status rw_b_trinary_reduce(rw_builder *b, int32_t root, double bytes, double elem_size, int64_t segment,
                              int64_t *into_root, int32_t *n_into);

#endif
