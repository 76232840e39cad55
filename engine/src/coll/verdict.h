/* The statistics of a decision's trials in the job (engine/mpi/coll/
 * verify.c), kept free of MPI so that the unit tests can feed them times:
 * what a block of calls measured, how long a block must be, and whether a
 * choice beat the MPI's own beyond the trials' own spread. */
#ifndef RW_COLL_VERDICT_H
#define RW_COLL_VERDICT_H

#include "rankwise_coll_tune.h"

/* A block's time per call: the mean of its n per-call times (seconds)
 * without the slowest quarter (rounded up: one of 3 or 4, 32 of 128), where
 * a call that lost the processor to another process lands: a scheduler
 * time slice is milliseconds, a short collective a microsecond. Sorts
 * calls. n >= 1. */
double rw_verdict_block(double *calls, int n);

/* Calls in a block so that it lasts at least min_seconds at per_call
 * seconds a call, within lo..hi (hi bounds a trial's cost where calls are
 * shorter than min_seconds / hi; lo when per_call is not a positive
 * number). */
int rw_verdict_block_calls(double per_call, double min_seconds, int lo, int hi);

/* rw_verdict_keep: rankwise_coll_tune.h (public: `coll tune --verify` decides by it too). */

#endif
