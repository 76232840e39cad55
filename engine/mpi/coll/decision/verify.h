/* Decisions verified in the job (verify.c): a choice made from rules or a
 * network is a prediction; on a real MPI the first calls of each decision
 * run it and the MPI's own in turn, timed, and the ranks agree on the
 * faster, which every later call of that decision runs. */
#ifndef RW_COLL_VERIFY_H
#define RW_COLL_VERIFY_H

#include "coll.h"

/* Before a call whose decision is ch (from rules, a model or the in-job
 * probe; not RANKWISE_COLL_<OP>): 1 when the MPI's own must run instead of
 * ch (a trial's turn, or the verdict), 0 to run ch. Starts the timing of
 * a trial call; rwc_verify_end must follow the call. *settled = 1 when the
 * answer is final (the verdict, or no verification): later calls of the
 * decision may reuse it. Local. */
int rwc_verify_begin(rw_coll_op op, MPI_Comm comm, int root, size_t bytes, const rwc_choice *ch, int *settled);

/* Whether reducing with (op, type) gives the same bits in any order, so
 * that a decision's trials may alternate algorithms: predefined
 * comparisons and logical and bitwise operations, sums and products of
 * predefined integers. Not floating-point sums nor user operations: MPI
 * asks that a reduction repeated on the same arguments give the same
 * result, which alternating algorithms would break (those decisions run
 * unverified). Local. */
int rwc_verify_order_free(MPI_Op op, MPI_Datatype type);

/* After the call (ran_mpi: the MPI's own ran, also when ch refused the
 * call). The last trial of a decision agrees on its verdict: collective on
 * the call's communicator, at the same call on every rank. */
void rwc_verify_end(int ran_mpi);

/* Whether decisions are verified: RANKWISE_COLL_VERIFY, by default on
 * with a real MPI and off under SMPI (whose network the predictor
 * imitates, and whose tests assert the predicted choice's times). */
int rwc_verify_enabled(void);

/* Frees c's trials and verdicts (cache.c, with c or its network). */
void rwc_verify_forget(rwc_comm *c);

#endif
