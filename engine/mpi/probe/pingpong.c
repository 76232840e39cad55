/* Timed point-to-point primitives of the probe.
 *
 * Under a real MPI, waits spin on MPI_Test* against a wall-clock deadline
 * so that a node that stops answering cannot hang the probe. Under SMPI
 * every MPI_Test injects simulated time (smpi/test, 0.1 ms by default),
 * which would distort the measurement, so waits block: simulated time is
 * free, and the caller still records pairs slower than the timeout as
 * missing. */
#include "pingpong.h"

#include <stdlib.h>

#define PROBE_TAG 7321

int rw_wait_all(MPI_Request *req, int n, double deadline)
{
#ifdef RW_SMPI
    (void)deadline;
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    return 0;
#else
    int done = 0;
    for (;;) {
        MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
        if (done)
            return 0;
        if (MPI_Wtime() > deadline)
            return -1;
    }
#endif
}

/* Give up on requests after a timeout: receives are cancelled, sends are
 * released (they may still complete in the background). */
void rw_abandon(MPI_Request *req, int n)
{
    for (int k = 0; k < n; k++) {
        if (req[k] == MPI_REQUEST_NULL)
            continue;
        int flag = 0;
        MPI_Test(&req[k], &flag, MPI_STATUS_IGNORE);
        if (!flag)
            MPI_Request_free(&req[k]);
    }
}

double rw_ping(MPI_Comm comm, int peer, const char *buf, int64_t size, double timeout)
{
    MPI_Request req[2];
    static char ack; /* 0 bytes: never written, but must outlive an abandoned receive */
    double t0 = MPI_Wtime();
    MPI_Irecv(&ack, 0, MPI_BYTE, peer, PROBE_TAG, comm, &req[0]);
    MPI_Isend(buf, (int)size, MPI_BYTE, peer, PROBE_TAG, comm, &req[1]);
    if (rw_wait_all(req, 2, t0 + timeout) != 0) {
        MPI_Cancel(&req[0]);
        rw_abandon(req, 2);
        return -1.0;
    }
    return MPI_Wtime() - t0;
}

int rw_pong(MPI_Comm comm, int peer, char *buf, int64_t size, double timeout)
{
    MPI_Request req;
    double deadline = MPI_Wtime() + timeout;
    MPI_Irecv(buf, (int)size, MPI_BYTE, peer, PROBE_TAG, comm, &req);
    if (rw_wait_all(&req, 1, deadline) != 0) {
        MPI_Cancel(&req);
        rw_abandon(&req, 1);
        return -1;
    }
    MPI_Isend(buf, 0, MPI_BYTE, peer, PROBE_TAG, comm, &req);
    if (rw_wait_all(&req, 1, deadline) != 0) {
        rw_abandon(&req, 1);
        return -1;
    }
    return 0;
}

int rw_sync_flag(MPI_Comm comm, int *flag, double timeout)
{
#ifdef RW_SMPI
    /* SMPI's non-blocking allreduce sends O(n^2) messages; waits block
     * under SMPI anyway, so the blocking collective loses nothing. */
    (void)timeout;
    int in = *flag;
    MPI_Allreduce(&in, flag, 1, MPI_INT, MPI_MAX, comm);
    return 0;
#else
    /* The buffers live on the heap: an abandoned collective may still
     * write into them after this function returned. */
    int *buf = malloc(2 * sizeof *buf);
    if (!buf)
        return -1;
    buf[0] = *flag;
    MPI_Request req;
    MPI_Iallreduce(&buf[0], &buf[1], 1, MPI_INT, MPI_MAX, comm, &req);
    if (rw_wait_all(&req, 1, MPI_Wtime() + timeout) != 0) {
        /* A pending collective can be neither cancelled nor freed: it is
         * left behind with its buffers, and the caller stops using
         * collectives. */
        return -1;
    }
    *flag = buf[1];
    free(buf);
    return 0;
#endif
}

int rw_timed_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, double timeout)
{
#ifdef RW_SMPI
    (void)timeout;
    MPI_Bcast(buf, count, type, root, comm);
    return 0;
#else
    MPI_Request req;
    MPI_Ibcast(buf, count, type, root, comm, &req);
    return rw_wait_all(&req, 1, MPI_Wtime() + timeout);
#endif
}

int rw_timed_reduce_max(const double *in, double *out, int count, MPI_Comm comm, double timeout)
{
#ifdef RW_SMPI
    (void)timeout;
    MPI_Reduce(in, out, count, MPI_DOUBLE, MPI_MAX, 0, comm);
    return 0;
#else
    MPI_Request req;
    MPI_Ireduce(in, out, count, MPI_DOUBLE, MPI_MAX, 0, comm, &req);
    return rw_wait_all(&req, 1, MPI_Wtime() + timeout);
#endif
}
