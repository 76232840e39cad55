/* Timed point-to-point primitives of the probe. */
#ifndef RW_PINGPONG_H
#define RW_PINGPONG_H

#include <mpi.h>
#include <stdint.h>

/* Wait for n requests until `deadline` (MPI_Wtime): 0, or -1 when they
 * did not complete in time (under SMPI the wait blocks). */
int rw_wait_all(MPI_Request *req, int n, double deadline);
/* Give up on requests after a timeout: receives are cancelled by the
 * caller, sends released (they may still complete in the background). */
void rw_abandon(MPI_Request *req, int n);

/* One ping-pong, initiator side: `size` bytes to peer, an empty message
 * back. Returns the round-trip time, or -1 when the peer did not answer
 * before `timeout` seconds. */
double rw_ping(MPI_Comm comm, int peer, const char *buf, int64_t size, double timeout);

/* Responder side of rw_ping. Returns 0, or -1 on timeout. */
int rw_pong(MPI_Comm comm, int peer, char *buf, int64_t size, double timeout);

/* Barrier that also agrees on a flag (max over ranks). Returns 0, or -1
 * when not every rank arrived within `timeout` (then the caller must stop
 * using collectives on comm). */
int rw_sync_flag(MPI_Comm comm, int *flag, double timeout);

/* MPI_Bcast and MPI_Reduce (max of doubles to rank 0) that give up after
 * `timeout` seconds: 0, or -1 when not every rank took part in time. Then
 * the collective stays pending: its buffers must never be freed or reused,
 * and the caller stops using collectives on comm. Under SMPI they block. */
int rw_timed_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, double timeout);
int rw_timed_reduce_max(const double *in, double *out, int count, MPI_Comm comm, double timeout);

#endif
