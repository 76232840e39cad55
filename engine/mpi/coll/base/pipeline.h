/* A pipelined algorithm's requests (pipeline.c): the receives it keeps
 * posted and its nonblocking sends, in lanes of bounded depth, waited for
 * together. Waiting on one kind alone is what deadlocks a pipeline under a
 * rendezvous protocol: a rank blocked on a send posts no more receives,
 * and its peer may be blocked on a send to it. Here a rank always keeps
 * its receives posted and never blocks on a send, and each lane (one tree
 * of the trinary trees) holds its own sends, so one tree's stalled sends
 * never hold another tree's (every tree's progress then depends only on
 * its own subtrees, which is acyclic). */
#ifndef RW_COLL_PIPELINE_H
#define RW_COLL_PIPELINE_H

#include "coll.h"

typedef struct rwc_pipe {
    MPI_Request *req; /* n_recv receives, then lanes x depth sends */
    int n_recv, lanes, depth;
    int *in_flight;   /* per lane: sends not yet complete */
} rwc_pipe;

/* A pipe of n_recv receive slots (MPI_REQUEST_NULL, to be posted into
 * p->req[0 .. n_recv - 1] by the caller) and lanes x depth send slots. */
rw_status rwc_pipe_open(rwc_pipe *p, int n_recv, int lanes, int depth);

/* Whether lane can take one more send now. */
int rwc_pipe_room(const rwc_pipe *p, int lane);

/* MPI_Isend into a free slot of lane (RW_ERR_STATE when it has none). */
rw_status rwc_pipe_send(rwc_pipe *p, int lane, const void *buf, int count, MPI_Datatype type, int to, int tag,
                        MPI_Comm comm);

/* Waits for any receive or send of p. *recv is the index of the receive
 * that completed (its slot is MPI_REQUEST_NULL again), or -1 when a send
 * completed (its slot freed). RW_ERR_STATE when nothing is pending. */
rw_status rwc_pipe_wait(rwc_pipe *p, int *recv);

/* Ends the pipe: cancels the receives still posted (only after a
 * failure) and waits for the sends still out. Frees p; returns st, or the
 * failure of the ending. */
rw_status rwc_pipe_close(rwc_pipe *p, rw_status st);

#endif
