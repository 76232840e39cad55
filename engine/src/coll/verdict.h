/* The statistics of a decision's trials in the job (engine/mpi/coll/
 * verify.c), kept free of MPI so that the unit tests can feed them times:
 * what a block of calls measured, how long a block must be, and whether a
 * choice beat the MPI's own beyond the trials' own spread. */
#ifndef RW_COLL_VERDICT_H
#define RW_COLL_VERDICT_H

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

/* 1 when the choice is faster: every one of its n_choice blocks' times per
 * call is below (1 - margin) times every one of the MPI's own n_own
 * blocks'; 0 when the two cannot be told apart (their blocks overlap, or
 * differ by less than margin) or a time is not a positive finite number:
 * then the MPI's own stays. */
int rw_verdict_keep(const double *choice, int n_choice, const double *own, int n_own, double margin);

#endif
