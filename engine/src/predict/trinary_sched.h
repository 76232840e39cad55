/* The triple trinary tree broadcast as a predictor schedule (trinary_sched.c). */
#ifndef RW_PREDICT_TRINARY_SCHED_H
#define RW_PREDICT_TRINARY_SCHED_H

#include "predict_internal.h"

/* The collectives library's trinary broadcast (engine/mpi/coll/
 * bcast_trinary.c) message for message, on b's ranks from root: three
 * thirds, each down its tree (rw_tree_trinary) in segments of `segment`
 * bytes (0: rw_trinary_segment), every receive posted at the start and
 * every segment forwarded with a nonblocking send as soon as it is in. */
rw_status rw_b_trinary_bcast(rw_builder *b, int32_t root, double bytes, int64_t segment);

#endif
