/* Per-node send and receive overheads (LogP's o, on each side): the time a
 * node's processor is busy handing one small message to the network, and
 * taking one in, as opposed to the latency on the wire.
 *
 * Send: the time of back-to-back blocking sends of a small message: an
 * eager MPI_Send returns once the message is handed over, without the
 * receiver (under SMPI, a send below smpi/send-is-detached-thresh is
 * detached and charges smpi/os to its sender).
 *
 * Receive: empty messages already sent are received at once; the time to
 * take K of them less the time to take one, per message (empty: no bytes
 * on the wire stay in the difference). The sender sends them,
 * then a notice on another tag; the receiver waits for the notice, so the
 * messages are there (a real MPI's unexpected queue; under SMPI sent and
 * waiting to be matched), then posts K receives and waits for them. What
 * one message costs either way (the wire's latency, SMPI's transfer
 * starting at the match) cancels in the difference; each receive's own
 * cost (smpi/or, charged as each completes) does not.
 *
 * Nodes take turns along a ring, so no two batches share a link or a
 * receiver. */
#include "overhead.h"

#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "pingpong.h"

#define OVERHEAD_TAG 7324 /* probe.c: 7321 ping-pongs, 7322 rows, 7323 notices */
#define RECV_TAG 7325     /* the receive ring's messages */
#define NOTICE_TAG 7326   /* "they are all sent" */
#define TAKEN_TAG 7327    /* "all taken": the receive ring's acknowledgement */
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

static double send_overhead(MPI_Comm leaders, const uint8_t *dead, double timeout)
{
    int me, n;
    MPI_Comm_rank(leaders, &me);
    MPI_Comm_size(leaders, &n);
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

/* Receive `k` messages sent before a notice: the seconds from the notice
 * to the last of them, or -1 on timeout; then acknowledge. */
static double take(MPI_Comm comm, int from, int k, double timeout)
{
    MPI_Request req[SENDS];
    double deadline = MPI_Wtime() + timeout;
    MPI_Irecv(sink[0], 0, MPI_BYTE, from, NOTICE_TAG, comm, &req[0]);
    if (rw_wait_all(req, 1, deadline) != 0) {
        MPI_Cancel(&req[0]);
        rw_abandon(req, 1);
        return -1;
    }
    double t0 = MPI_Wtime();
    for (int m = 0; m < k; m++)
        MPI_Irecv(sink[m], 0, MPI_BYTE, from, RECV_TAG, comm, &req[m]);
    if (rw_wait_all(req, k, deadline) != 0) {
        for (int m = 0; m < k; m++)
            if (req[m] != MPI_REQUEST_NULL)
                MPI_Cancel(&req[m]);
        rw_abandon(req, k);
        return -1;
    }
    double t = MPI_Wtime() - t0;
    MPI_Request ack;
    MPI_Isend(sink[0], 0, MPI_BYTE, from, TAKEN_TAG, comm, &ack);
    if (rw_wait_all(&ack, 1, deadline) != 0) {
        rw_abandon(&ack, 1);
        return -1;
    }
    return t;
}

/* Send `k` messages, then the notice, and wait for the acknowledgement:
 * 0, or -1 when it did not come within the timeout. */
static int give(MPI_Comm comm, int to, int k, const char *payload, double timeout)
{
    static char ack; /* outlives an abandoned receive */
    MPI_Request req;
    MPI_Irecv(&ack, 0, MPI_BYTE, to, TAKEN_TAG, comm, &req);
    double t0 = MPI_Wtime();
    for (int m = 0; m < k; m++)
        MPI_Send(payload, 0, MPI_BYTE, to, RECV_TAG, comm);
    MPI_Send(payload, 0, MPI_BYTE, to, NOTICE_TAG, comm);
    if (rw_wait_all(&req, 1, t0 + timeout) != 0) {
        MPI_Cancel(&req);
        rw_abandon(&req, 1);
        return -1;
    }
    return 0;
}

/* The receive ring: each node gives its successor batches of 1 and of
 * SENDS messages; the successor times taking them. */
static double recv_overhead(MPI_Comm leaders, const uint8_t *dead, double timeout)
{
    int me, n;
    MPI_Comm_rank(leaders, &me);
    MPI_Comm_size(leaders, &n);
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    int from_prev = !(dead && dead[prev]), to_next = !(dead && dead[next]);
    static const char payload[BYTES];
    double per_recv[BATCHES];
    int timed = 0;
    if (me != 0)
        for (int b = -1; b < BATCHES && from_prev; b++) {
            double one = take(leaders, prev, 1, timeout), many = one < 0 ? -1 : take(leaders, prev, SENDS, timeout);
            from_prev = many >= 0;
            if (b >= 0 && from_prev)
                per_recv[timed++] = fmax(0.0, (many - one) / (SENDS - 1));
        }
    for (int b = -1; b < BATCHES && to_next; b++)
        to_next = give(leaders, next, 1, payload, timeout) == 0 && give(leaders, next, SENDS, payload, timeout) == 0;
    if (me == 0)
        for (int b = -1; b < BATCHES && from_prev; b++) {
            double one = take(leaders, prev, 1, timeout), many = one < 0 ? -1 : take(leaders, prev, SENDS, timeout);
            from_prev = many >= 0;
            if (b >= 0 && from_prev)
                per_recv[timed++] = fmax(0.0, (many - one) / (SENDS - 1));
        }
    return timed == BATCHES ? rw_median(per_recv, BATCHES) : NAN;
}

void rw_measure_overheads(MPI_Comm leaders, const uint8_t *dead, double timeout, double *send, double *recv)
{
    int n;
    MPI_Comm_size(leaders, &n);
    *send = *recv = NAN;
    if (n < 2)
        return;
    *send = send_overhead(leaders, dead, timeout);
    *recv = recv_overhead(leaders, dead, timeout);
}
