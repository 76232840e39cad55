/* The symmetric all-to-all with injection-rate control (Ajima, "Topology
 * Awareness in the Tofu Interconnect Series": the uniformly overlaid
 * symmetrical pattern), MPI-free: its order of peers, its sub-phases, the
 * cap on concurrent sends per rank taken from a network's shared links,
 * and its schedule for the predictor (alltoall_symmetric.c). The library
 * (engine/mpi/coll/alltoall.c) runs the same order and sub-phases. */
#ifndef RW_PREDICT_ALLTOALL_SYMMETRIC_H
#define RW_PREDICT_ALLTOALL_SYMMETRIC_H

/* Not predict_internal.h: the library includes this header, and its
 * rw_coll_<op> names are the predictor's schedule builders. */
#include "rankwise_coll_tune.h"

struct rw_builder;

/* Concurrent sends per rank without a network to size them from. */
enum { RW_A2A_DEFAULT_CAP = 4 };
/* How much slower than the fastest width a narrower one may be predicted. */
#define RW_A2A_SLACK 0.01

/* rw_a2a_subphases and rw_a2a_cap: rankwise_coll_tune.h (public: the studies use them). */

/* The library's symmetric all-to-all of `bytes` per rank pair as a
 * schedule: per sub-phase, every rank posts its receives and nonblocking
 * sends to r + shift for the sub-phase's shifts, then waits for them all.
 * cap <= 0: rw_a2a_cap(net, bytes). The library's pairwise all-to-all is SMPI's
 * ring (rwp_sched_alltoall "ring"). */
rw_status rw_b_alltoall_symmetric(struct rw_builder *b, const rw_pnet *net, int32_t cap, double bytes);

#endif
