/* The in-job ping-pongs of a live probe, as the full probe makes them
 * (engine/mpi/probe/): a payload one way, an empty acknowledgement back,
 * nonblocking, one untimed then LIVE_REPS timed per size and direction,
 * both directions of a pair in turn (the lower node initiating first).
 * So a pair's figures are comparable with the model's.
 *
 * Unlike the full probe, every MPI call is checked: a live probe runs
 * inside somebody's application and gives up on the first error. Under a
 * real MPI, waits spin against the timeout; under SMPI they block (each
 * MPI_Test would add simulated time), and simulated time cannot hang. */
#include "coll.h"
#include "decision/decision.h"
#include "internal.h"
#include "live.h"

#include <stdlib.h>

enum { TAG_PING = 1 };

/* RW_ERR_MPI when the requests did not complete by the deadline (they are
 * left behind: receives cancelled, sends released). */
static rw_status wait_all(MPI_Request *req, int n, double deadline)
{
#ifdef RW_SMPI
    (void)deadline;
    return rwc_mpi(PMPI_Waitall(n, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
#else
    for (;;) {
        int done = 0;
        rw_status st = rwc_mpi(PMPI_Testall(n, req, &done, MPI_STATUSES_IGNORE), "MPI_Testall");
        if (st || done)
            return st;
        if (PMPI_Wtime() > deadline)
            break;
    }
    for (int k = 0; k < n; k++) {
        int flag = 0;
        if (req[k] == MPI_REQUEST_NULL)
            continue;
        PMPI_Cancel(&req[k]); /* a send's cancel may fail; it is released anyway */
        PMPI_Test(&req[k], &flag, MPI_STATUS_IGNORE);
        if (!flag)
            PMPI_Request_free(&req[k]);
    }
    return rw_fail(RW_ERR_MPI, "a ping-pong of the live probe took more than its timeout");
#endif
}

static rw_status ping(MPI_Comm comm, int peer, const char *buf, int64_t size, double timeout, double *rtt)
{
    static char ack; /* must outlive an abandoned receive */
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    double t0 = PMPI_Wtime();
    rw_status st = rwc_mpi(PMPI_Irecv(&ack, 0, MPI_BYTE, peer, TAG_PING, comm, &req[0]), "MPI_Irecv");
    if (!st)
        st = rwc_mpi(PMPI_Isend(buf, (int)size, MPI_BYTE, peer, TAG_PING, comm, &req[1]), "MPI_Isend");
    if (!st)
        st = wait_all(req, 2, t0 + timeout);
    *rtt = PMPI_Wtime() - t0;
    return st;
}

static rw_status pong(MPI_Comm comm, int peer, char *buf, int64_t size, double timeout)
{
    MPI_Request req = MPI_REQUEST_NULL;
    double deadline = PMPI_Wtime() + timeout;
    rw_status st = rwc_mpi(PMPI_Irecv(buf, (int)size, MPI_BYTE, peer, TAG_PING, comm, &req), "MPI_Irecv");
    if (!st)
        st = wait_all(&req, 1, deadline);
    if (!st)
        st = rwc_mpi(PMPI_Isend(buf, 0, MPI_BYTE, peer, TAG_PING, comm, &req), "MPI_Isend");
    if (!st)
        st = wait_all(&req, 1, deadline);
    return st;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void summarise(double *t, int n, rw_stat *out)
{
    qsort(t, (size_t)n, sizeof *t, by_value);
    double mean = 0;
    for (int k = 0; k < n; k++)
        mean += t[k] / n;
    *out = (rw_stat){t[0], n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]), t[n - 1],
                     mean > 0 ? (t[n - 1] - t[0]) / mean : 0, n};
}

rw_status live_measure_pair(rw_live *ctx, int peer, char *buf, rw_stat *out)
{
    rw_status st = RW_OK;
    for (int s = 0; s < ctx->n_sizes && !st; s++) {
        double t[LIVE_REPS];
        for (int half = 0; half < 2 && !st; half++) {
            int initiate = (half == 0) == (ctx->me < peer);
            for (int k = -1; k < LIVE_REPS && !st; k++) {
                double rtt = 0;
                st = initiate ? ping(ctx->leaders, peer, buf, ctx->sizes[s], ctx->timeout, &rtt)
                              : pong(ctx->leaders, peer, buf, ctx->sizes[s], ctx->timeout);
                if (!st && initiate && k >= 0)
                    t[k] = rtt;
            }
            if (!st && initiate)
                summarise(t, LIVE_REPS, &out[s]);
        }
    }
    return st;
}
