/* Per-node send overhead o (LogP's o): the time a node's
 * processor is busy handing one small message to the network, as opposed
 * to the gap between messages and the latency on the wire. Measured as
 * the time of back-to-back blocking sends of a small message: an eager
 * MPI_Send returns once the message is handed over, without the receiver
 * (under SMPI, a send below smpi/send-is-detached-thresh is detached and
 * charges smpi/os to its sender). Nodes take turns along a ring, so no
 * two batches share a link or a receiver. */
#include "overhead.h"

#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "pingpong.h"

#define OVERHEAD_TAG 7324 /* probe.c: 7321 ping-pongs, 7322 rows, 7323 notices */
#define SENDS 16  /* back-to-back sends per batch */
#define BATCHES 5 /* timed batches (after one untimed) */
#define BYTES 8

/* Receive buffers outlive an abandoned receive (never written after one). */
static char sink[SENDS][BYTES];

/* Receive a batch from `from` and acknowledge it: 0, or -1 on timeout. */
static int absorb(MPI_Comm comm, int from, double timeout)
{
    MPI_Request req[SENDS];
    double deadline = MPI_Wtime() + timeout;
    for (int k = 0; k < SENDS; k++)
        MPI_Irecv(sink[k], BYTES, MPI_BYTE, from, OVERHEAD_TAG, comm, &req[k]);
    if (rw_wait_all(req, SENDS, deadline) != 0) {
        for (int k = 0; k < SENDS; k++)
            if (req[k] != MPI_REQUEST_NULL)
                MPI_Cancel(&req[k]);
        rw_abandon(req, SENDS);
        return -1;
    }
    MPI_Request ack;
    MPI_Isend(sink[0], 0, MPI_BYTE, from, OVERHEAD_TAG, comm, &ack);
    if (rw_wait_all(&ack, 1, deadline) != 0) {
        rw_abandon(&ack, 1);
        return -1;
    }
    return 0;
}

/* Send a batch to `to`: the seconds per send, or -1 when the acknowledgement
 * did not come within the timeout (real MPI: given up). Under SMPI waits
 * block, so a slow receiver's batch completes late: *late is set, and the
 * ring goes on (its receiver still expects every batch). */
static double emit(MPI_Comm comm, int to, const char *payload, double timeout, int *late)
{
    static char ack; /* outlives an abandoned receive */
    MPI_Request req;
    MPI_Irecv(&ack, 0, MPI_BYTE, to, OVERHEAD_TAG, comm, &req);
    double t0 = MPI_Wtime();
    for (int k = 0; k < SENDS; k++)
        MPI_Send(payload, BYTES, MPI_BYTE, to, OVERHEAD_TAG, comm);
    double t = (MPI_Wtime() - t0) / SENDS;
    if (rw_wait_all(&req, 1, t0 + timeout) != 0) {
        MPI_Cancel(&req);
        rw_abandon(&req, 1);
        return -1;
    }
    if (MPI_Wtime() - t0 > timeout)
        *late = 1;
    return t;
}

double rw_measure_overhead(MPI_Comm leaders, const uint8_t *dead, double timeout)
{
    int me, n;
    MPI_Comm_rank(leaders, &me);
    MPI_Comm_size(leaders, &n);
    if (n < 2)
        return NAN;
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    int from_prev = !(dead && dead[prev]), to_next = !(dead && dead[next]);
    static const char payload[BYTES];
    double per_send[BATCHES];
    int late = 0;
    /* Node 0 starts; every other node first absorbs its predecessor's
     * batches, then sends its own (even when its predecessor failed, so
     * that the ring goes on); node 0 absorbs last. A failure stops a loop. */
    if (me != 0)
        for (int b = -1; b < BATCHES && from_prev; b++)
            from_prev = absorb(leaders, prev, timeout) == 0;
    for (int b = -1; b < BATCHES && to_next; b++) {
        double t = emit(leaders, next, payload, timeout, &late);
        to_next = t >= 0;
        if (b >= 0)
            per_send[b] = t;
    }
    if (me == 0)
        for (int b = -1; b < BATCHES && from_prev; b++)
            from_prev = absorb(leaders, prev, timeout) == 0;
    return to_next && !late ? rw_median(per_send, BATCHES) : NAN;
}
