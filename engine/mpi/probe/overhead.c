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
static const char payload[BYTES];

/* A turn of a ring: one batch given to or taken from `peer`. A sample
 * (>= 0, seconds) or -1 on a timeout; *late when a turn completed after its
 * timeout (under SMPI waits block). */
typedef double (*turn_fn)(MPI_Comm comm, int peer, double timeout, int *late);

/* Send overhead, taker: receive a batch and acknowledge it (sample 0). */
static double absorb(MPI_Comm comm, int from, double timeout, int *late)
{
    (void)late;
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

/* Send overhead, giver: the seconds per send of a batch, or -1 when the
 * acknowledgement did not come within the timeout (real MPI: given up).
 * Under SMPI waits block, so a slow receiver's batch completes late: *late
 * is set, and the ring goes on (its receiver still expects every batch). */
static double emit(MPI_Comm comm, int to, double timeout, int *late)
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

/* Receive `k` empty messages sent before a notice: the seconds from the
 * notice to the last of them, or -1 on timeout; then acknowledge. */
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

/* Send `k` empty messages, then the notice, and wait for the
 * acknowledgement: 0, or -1 when it did not come within the timeout. */
static int give(MPI_Comm comm, int to, int k, double timeout)
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

/* Receive overhead, taker: batches of 1 and of SENDS; the difference per
 * message. */
static double take_pair(MPI_Comm comm, int from, double timeout, int *late)
{
    (void)late;
    double one = take(comm, from, 1, timeout), many = one < 0 ? -1 : take(comm, from, SENDS, timeout);
    return many < 0 ? -1 : fmax(0.0, (many - one) / (SENDS - 1));
}

/* Receive overhead, giver: the two batches (sample 0). */
static double give_pair(MPI_Comm comm, int to, double timeout, int *late)
{
    (void)late;
    return give(comm, to, 1, timeout) == 0 && give(comm, to, SENDS, timeout) == 0 ? 0 : -1;
}

/* An untimed turn then BATCHES timed ones with `peer`, while alive:
 * whether all went through; the timed samples into `sample` (may be NULL). */
static int turns(turn_fn f, MPI_Comm comm, int peer, double timeout, int alive, int *late, double *sample)
{
    for (int b = -1; b < BATCHES && alive; b++) {
        double t = f(comm, peer, timeout, late);
        alive = t >= 0;
        if (alive && b >= 0 && sample)
            sample[b] = t;
    }
    return alive;
}

/* A ring of turns: node 0 starts; every other node first takes its
 * predecessor's turns, then gives its own (even when its predecessor
 * failed, so that the ring goes on); node 0 takes last. The median of the
 * timed side's samples (the giver's or the taker's), NaN when that side
 * failed or was late. */
static double ring(MPI_Comm leaders, const uint8_t *dead, double timeout, turn_fn taker, turn_fn giver,
                   int timed_by_giver)
{
    int me, n;
    MPI_Comm_rank(leaders, &me);
    MPI_Comm_size(leaders, &n);
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    int from_prev = !(dead && dead[prev]), to_next = !(dead && dead[next]);
    double sample[BATCHES];
    int late = 0;
    if (me != 0)
        from_prev = turns(taker, leaders, prev, timeout, from_prev, &late, timed_by_giver ? NULL : sample);
    to_next = turns(giver, leaders, next, timeout, to_next, &late, timed_by_giver ? sample : NULL);
    if (me == 0)
        from_prev = turns(taker, leaders, prev, timeout, from_prev, &late, timed_by_giver ? NULL : sample);
    int ok = timed_by_giver ? to_next && !late : from_prev;
    return ok ? rw_median(sample, BATCHES) : NAN;
}

void rw_measure_overheads(MPI_Comm leaders, const uint8_t *dead, double timeout, double *send, double *recv)
{
    int n;
    MPI_Comm_size(leaders, &n);
    *send = *recv = NAN;
    if (n < 2)
        return;
    *send = ring(leaders, dead, timeout, absorb, emit, 1);
    *recv = ring(leaders, dead, timeout, take_pair, give_pair, 0);
}
