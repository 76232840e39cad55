/* The multi-ring allgather as a predictor schedule (multiring_sched.c). */
#ifndef RW_PREDICT_MULTIRING_SCHED_H
#define RW_PREDICT_MULTIRING_SCHED_H

#include "predict_internal.h"

/* The collectives library's multi-ring allgather (engine/mpi/coll/
 * allgather_multiring.c) message for message, `bytes` per rank, on b's
 * ranks in ring order order[0..b->p) (rw_multiring_order of the network):
 * n - 1 steps; in each, every rank sends part k of one block to its
 * neighbour on ring k, all parts at once, and waits for all its sends and
 * receives before the next step. */
rw_status rw_b_multiring_allgather(rw_builder *b, const int32_t *order, double bytes);

/* The whole schedule on net's ranks, the ring order taken from net
 * (rw_sched_library "allgather" "multiring"). */
rw_status rw_sched_multiring(const rw_pnet *net, double bytes, const rw_coll_options *opt, rw_sched **out);

#endif
