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
#include "rankwise_predict.h"

struct rw_builder;

/* Concurrent sends per rank without a network to size them from. */
enum { RW_A2A_DEFAULT_CAP = 4 };
/* How much slower than the fastest width a narrower one may be predicted. */
#define RW_A2A_SLACK 0.01

/* The n - 1 shifts of n ranks in phases of symmetric relative positions
 * (+d and -d; n/2 alone for even n), a near phase beside a far one (d = 1,
 * n/2, 2, n/2 - 1, ...), packed in that order into sub-phases of
 * at most max(cap, 2) shifts without splitting a phase: shift[0..n-1)
 * receives the shifts (in 1..n-1: rank r sends to r + shift), start[0..k]
 * the sub-phases' first index (start[k] = n - 1). Returns k (0 for n < 2).
 * shift and start need room for n - 1 and n entries. */
int32_t rw_a2a_subphases(int32_t n, int32_t cap, int32_t *shift, int32_t *start);

/* The cap on concurrent sends per rank for net's placement and `bytes` per
 * pair (injection-rate control): the narrowest sub-phases, among 2, 4, 8,
 * ... and n - 1 sends in flight, whose predicted time (rw_simulate, flows
 * sharing the node caps and shared links max-min) is within RW_A2A_SLACK
 * of the fastest width's: more sends in flight only where the shared links
 * leave room for them. At least 2, at most n - 1; RW_A2A_DEFAULT_CAP
 * (clamped) when net has neither node caps nor shared links. */
int32_t rw_a2a_cap(const rw_pnet *net, double bytes);

/* The library's symmetric all-to-all of `bytes` per rank pair as a
 * schedule: per sub-phase, every rank posts its receives and nonblocking
 * sends to r + shift for the sub-phase's shifts, then waits for them all.
 * cap <= 0: rw_a2a_cap(net, bytes). The library's pairwise all-to-all is SMPI's
 * ring (rw_coll_alltoall "ring"). */
rw_status rw_b_alltoall_symmetric(struct rw_builder *b, const rw_pnet *net, int32_t cap, double bytes);

#endif
