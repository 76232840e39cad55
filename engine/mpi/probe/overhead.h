/* Per-node send and receive overheads, measured by the probe (overhead.c). */
#ifndef RW_OVERHEAD_H
#define RW_OVERHEAD_H

#include <mpi.h>
#include <stdint.h>

/* Called by every leader of `leaders` at once (at least two): this node's
 * send overhead in seconds (median over batches of the time per
 * back-to-back blocking 8-byte send to the next leader on a ring) and its
 * receive overhead (median over batches of the time per 8-byte message
 * taken from the previous leader once they are all sent, the time of one
 * taken off). Each is NaN when the peer is known dead (`dead`, per
 * leader, may be NULL) or did not answer within `timeout`, and both with
 * a single leader. */
void rw_measure_overheads(MPI_Comm leaders, const uint8_t *dead, double timeout, double *send, double *recv);

#endif
