/* The in-job measurement behind RANKWISE_COLL_PROBE=1: when no model is
 * given, the node leaders measure the network the decision reasons on, at
 * a cost small enough to pay once per communicator (Wang et al. 2024
 * measure network states in-job at low overhead).
 *
 * What it measures, each in a few ping-pongs of two sizes (the full probe,
 * engine/mpi/probe/, fits eleven sizes with many repetitions):
 *   - every ordered pair of nodes: the leaders meet in the rounds of a
 *     round-robin tournament (rw_tournament_partner), the pairs of a round
 *     at once, each pair both ways;
 *   - each node's own pair: its leader and its second rank, all nodes at
 *     once, before the rounds;
 *   - each node's send overhead o: blocking small sends around a ring;
 *   - each node's receive overhead: around the same ring, batches of
 *     O_SENDS and of one message already sent taken at once (the
 *     difference per message; engine/mpi/probe/overhead.c's method).
 * The ping-pongs' alpha holds both overheads, which the predictor charges
 * apart: they are taken out of it (as from a model, model_net.c).
 * A ping-pong sends `size` bytes and gets an empty message back, so its
 * round trip is 2 alpha + beta size (rw_fit_hockney's convention); two sizes
 * give alpha and beta, each round trip the least of a few (noise only ever
 * adds time). Rank 0 gathers the leaders' rows and broadcasts the figures:
 * every rank builds the same rw_pnet, so decisions agree everywhere. */
#include "decision.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Both below SMPI's and most MPIs' 64 KiB eager threshold: the decisions
 * this network feeds are mostly about eager messages, and one fit spans
 * them (no protocol knee is measured). */
#define SMALL 8
#define LARGE 32768
#define REPS 5     /* timed ping-pongs per size, after one untimed */
#define O_SENDS 16 /* back-to-back sends per overhead batch */
#define O_BATCHES 3
/* Tags of the private duplicate above the collectives' (coll.h). */
enum { TAG_PING = 101, TAG_READY, TAG_OVERHEAD, TAG_RECV_O, TAG_NOTICE };

static const int sizes[2] = {SMALL, LARGE};

/* One ping-pong from this rank: the round trip in seconds. Nonblocking
 * sends, as the full probe's: under SMPI a blocking one would also charge
 * the send overhead (smpi/os), which the network keeps apart (o). */
static rw_status ping(MPI_Comm comm, int peer, const char *buf, int size, double *rtt)
{
    MPI_Request req[2];
    char ack;
    double t0 = PMPI_Wtime();
    rw_status st = rwc_mpi(PMPI_Irecv(&ack, 0, MPI_BYTE, peer, TAG_PING, comm, &req[0]), "MPI_Irecv");
    if (!st)
        st = rwc_mpi(PMPI_Isend(buf, size, MPI_BYTE, peer, TAG_PING, comm, &req[1]), "MPI_Isend");
    if (!st)
        st = rwc_mpi(PMPI_Waitall(2, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
    *rtt = PMPI_Wtime() - t0;
    return st;
}

static rw_status pong(MPI_Comm comm, int peer, char *buf, int size)
{
    MPI_Request req;
    rw_status st = rwc_mpi(PMPI_Recv(buf, size, MPI_BYTE, peer, TAG_PING, comm, MPI_STATUS_IGNORE), "MPI_Recv");
    if (!st)
        st = rwc_mpi(PMPI_Isend(buf, 0, MPI_BYTE, peer, TAG_PING, comm, &req), "MPI_Isend");
    if (!st)
        st = rwc_mpi(PMPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
    return st;
}

/* alpha and beta from the two sizes' round trips. When noise leaves the
 * large round trip no longer than the small one (ranks sharing cores),
 * beta is the most the large one allows, as if it were all bandwidth: 0
 * would tell the predictor that the pair never limits a flow, which
 * nothing measured says. */
static void fit(const double rtt[2], double *alpha, double *beta)
{
    double b = (rtt[1] - rtt[0]) / (double)(LARGE - SMALL);
    *beta = b > 0 ? b : rtt[1] / LARGE;
    double a = (rtt[0] - *beta * SMALL) / 2;
    *alpha = a > 0 ? a : 0;
}

/* Both ways of the pair (me, peer) of comm: this rank's figures as the
 * sender. Each repetition has both directions, so that both see the same
 * moments (measured one after the other, the first direction paid a real
 * MPI's start: at localhost 2.5x the latency of the second). A direction
 * starts when its responder says it is ready: the responder of the second
 * is the first's initiator, which learns of the last reply one latency
 * after the other end sent it. The untimed first repetition also waits for
 * a peer still busy in its previous round. */
static rw_status measure_pair(MPI_Comm comm, int me, int peer, char *buf, double *alpha, double *beta)
{
    double rtt[2] = {0, 0};
    char ready = 0;
    rw_status st = RW_OK;
    for (int k = -1; k < REPS && !st; k++)
        for (int half = 0; half < 2 && !st; half++) {
            int initiate = (half == 0) == (me < peer);
            st = initiate ? rwc_mpi(PMPI_Recv(&ready, 0, MPI_BYTE, peer, TAG_READY, comm, MPI_STATUS_IGNORE),
                                    "MPI_Recv")
                          : rwc_mpi(PMPI_Send(&ready, 0, MPI_BYTE, peer, TAG_READY, comm), "MPI_Send");
            for (int s = 0; s < 2 && !st; s++) {
                double t = 0;
                if (!initiate) {
                    st = pong(comm, peer, buf, sizes[s]);
                    continue;
                }
                st = ping(comm, peer, buf, sizes[s], &t);
                if (k == 0 || (k > 0 && t < rtt[s]))
                    rtt[s] = t;
            }
        }
    if (!st)
        fit(rtt, alpha, beta);
    return st;
}

/* Send overhead around a ring over comm (size >= 2): every rank sends
 * batches of blocking SMALL-byte sends to the next while receiving the
 * previous one's (receives posted beforehand, so an eager send returns once
 * handed over); o is the least time per send of a batch. */
static rw_status measure_overhead(MPI_Comm comm, char *buf, double *o)
{
    int me, n;
    PMPI_Comm_rank(comm, &me);
    PMPI_Comm_size(comm, &n);
    enum { N = (O_BATCHES + 1) * O_SENDS };
    MPI_Request req[N];
    char sink[N][SMALL];
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    rw_status st = RW_OK;
    int posted = 0;
    for (; posted < N && !st; posted++)
        st = rwc_mpi(PMPI_Irecv(sink[posted], SMALL, MPI_BYTE, prev, TAG_OVERHEAD, comm, &req[posted]), "MPI_Irecv");
    /* every ring member has posted its receives before any batch is timed */
    if (!st)
        st = rwc_mpi(PMPI_Barrier(comm), "MPI_Barrier");
    *o = 0;
    for (int b = -1; b < O_BATCHES && !st; b++) {
        double t0 = PMPI_Wtime();
        for (int k = 0; k < O_SENDS && !st; k++)
            st = rwc_mpi(PMPI_Send(buf, SMALL, MPI_BYTE, next, TAG_OVERHEAD, comm), "MPI_Send");
        double t = (PMPI_Wtime() - t0) / O_SENDS;
        if (b == 0 || (b > 0 && t < *o))
            *o = t;
    }
    if (!st)
        st = rwc_mpi(PMPI_Waitall(posted, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
    return st;
}

/* The seconds to take k empty messages from prev that it sent before a
 * notice on another tag, after sending as many (and the notice) to next.
 * Empty: the difference of k and 1 keeps no bytes on the wire. */
static rw_status take_batch(MPI_Comm comm, int next, int prev, char *buf, int k, double *t)
{
    MPI_Request req[O_SENDS];
    char sink[O_SENDS][SMALL];
    rw_status st = RW_OK;
    for (int m = 0; m < k && !st; m++)
        st = rwc_mpi(PMPI_Send(buf, 0, MPI_BYTE, next, TAG_RECV_O, comm), "MPI_Send");
    if (!st)
        st = rwc_mpi(PMPI_Send(buf, 0, MPI_BYTE, next, TAG_NOTICE, comm), "MPI_Send");
    if (!st)
        st = rwc_mpi(PMPI_Recv(sink[0], 0, MPI_BYTE, prev, TAG_NOTICE, comm, MPI_STATUS_IGNORE), "MPI_Recv");
    double t0 = PMPI_Wtime();
    int posted = 0;
    for (; posted < k && !st; posted++)
        st = rwc_mpi(PMPI_Irecv(sink[posted], 0, MPI_BYTE, prev, TAG_RECV_O, comm, &req[posted]), "MPI_Irecv");
    if (posted)
        st = st ? st : rwc_mpi(PMPI_Waitall(posted, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
    *t = PMPI_Wtime() - t0;
    return st;
}

/* Receive overhead around the ring: the least time to take O_SENDS
 * messages less the least to take one, per message. */
static rw_status measure_recv_overhead(MPI_Comm comm, char *buf, double *o)
{
    int me, n;
    PMPI_Comm_rank(comm, &me);
    PMPI_Comm_size(comm, &n);
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    double one = 0, many = 0, t;
    rw_status st = RW_OK;
    for (int b = -1; b < O_BATCHES && !st; b++) {
        if (!(st = take_batch(comm, next, prev, buf, 1, &t)) && b >= 0 && (b == 0 || t < one))
            one = t;
        if (!st && !(st = take_batch(comm, next, prev, buf, O_SENDS, &t)) && b >= 0 && (b == 0 || t < many))
            many = t;
    }
    *o = many > one ? (many - one) / (O_SENDS - 1) : 0;
    return st;
}

/* What each leader sends rank 0: its row as the sender (alpha, beta to
 * every node), its node's own pair and its send and receive overheads. */
enum { R_INTRA_ALPHA, R_INTRA_BETA, R_O, R_OR, R_FIXED };
#define ROW_LEN(n) (2 * (size_t)(n) + R_FIXED)

/* This leader's row (leaders' rank me of n); every rank of a node of
 * several ranks takes part in its intra-node pair. */
static rw_status measure(rwc_comm *c, int n, char *buf, double *row)
{
    int node_rank = 0, node_size = 1;
    PMPI_Comm_rank(c->node, &node_rank);
    PMPI_Comm_size(c->node, &node_size);
    rw_status st = RW_OK;
    double *alpha = row + R_FIXED, *beta = alpha + n;
    /* the node's own pair, free when the node has one rank (as coll tune) */
    if (node_size > 1 && node_rank < 2)
        st = measure_pair(c->node, node_rank, 1 - node_rank, buf, &row[R_INTRA_ALPHA], &row[R_INTRA_BETA]);
    if (c->leaders == MPI_COMM_NULL || st)
        return st;
    int me;
    PMPI_Comm_rank(c->leaders, &me);
    for (int round = 0; round < rw_tournament_rounds(n) && !st; round++) {
        int peer = rw_tournament_partner(n, round, me);
        if (peer >= 0)
            st = measure_pair(c->leaders, me, peer, buf, &alpha[peer], &beta[peer]);
    }
    if (!st && n > 1)
        st = measure_overhead(c->leaders, buf, &row[R_O]);
    if (!st && n > 1)
        st = measure_recv_overhead(c->leaders, buf, &row[R_OR]);
    return st;
}

/* The network from rank 0's table (n rows of ROW_LEN): node k's row is
 * leader k's; node caps as the model's are guessed without a stress test
 * (rwc_pnet_from_model): the best bandwidth a node showed as a sender or
 * a receiver. */
static rw_status build(const rwc_comm *c, int n, const double *table, const int32_t *node_index, rw_pnet **out)
{
    size_t nn = (size_t)n * n;
    double *alpha = malloc(nn * sizeof *alpha), *beta = malloc(nn * sizeof *beta);
    double *o = malloc((size_t)n * sizeof *o), *inject = calloc((size_t)n, sizeof *inject);
    double *eject = calloc((size_t)n, sizeof *eject), *o_recv = malloc((size_t)n * sizeof *o_recv);
    rw_status st = alpha && beta && o && o_recv && inject && eject ? RW_OK
                                                         : rw_fail(RW_ERR_NOMEM, "out of memory for %d nodes", n);
    for (int i = 0; i < n && !st; i++) {
        const double *row = table + (size_t)i * ROW_LEN(n);
        for (int j = 0; j < n; j++) {
            alpha[(size_t)i * n + j] = i == j ? row[R_INTRA_ALPHA] : row[R_FIXED + j];
            beta[(size_t)i * n + j] = i == j ? row[R_INTRA_BETA] : row[R_FIXED + n + j];
            double bw = i != j && beta[(size_t)i * n + j] > 0 ? 1.0 / beta[(size_t)i * n + j] : 0;
            inject[i] = bw > inject[i] ? bw : inject[i];
            eject[j] = bw > eject[j] ? bw : eject[j];
        }
        o[i] = row[R_O];
        o_recv[i] = row[R_OR];
    }
    /* the ping-pongs' alpha holds the overheads the predictor charges apart */
    for (int i = 0; i < n && !st && n > 1; i++)
        for (int j = 0; j < n; j++)
            alpha[(size_t)i * n + j] = fmax(0.0, alpha[(size_t)i * n + j] - o[i] - o_recv[j]);
    rw_pnet *net = NULL;
    if (!st)
        st = rw_pnet_create(n, alpha, beta, &net);
#ifndef RW_SMPI
    if (!st) /* a real fabric shares a link equally, SimGrid by latency (the default) */
        st = rw_pnet_set_sharing(net, RW_SHARE_EQUAL);
#endif
    if (!st && n > 1)
        st = rw_pnet_set_overhead(net, o);
    if (!st && n > 1)
        st = rw_pnet_set_recv_overhead(net, o_recv);
    if (!st && n > 1)
        st = rw_pnet_set_node_caps(net, inject, eject);
    if (!st)
        st = rw_pnet_set_placement(net, c->size, node_index);
    free(alpha);
    free(beta);
    free(o);
    free(o_recv);
    free(inject);
    free(eject);
    if (st)
        rw_pnet_free(net);
    else
        *out = net;
    return st;
}

rw_status rwc_probe_pnet(rwc_comm *c, rw_pnet **out)
{
    *out = NULL;
    double t0 = PMPI_Wtime();
    rw_status st = rwc_nodes(c);
    if (st)
        return st;
    /* node k = the k-th leader in rank order (the leaders' communicator is
     * split with key = rank, so leader k is its rank k) */
    int n = 0;
    int32_t *node_index = malloc((size_t)c->size * sizeof *node_index);
    if (node_index)
        for (int r = 0; r < c->size; r++)
            node_index[r] = c->node_of[r] == r ? n++ : node_index[c->node_of[r]];
    size_t table_len = (size_t)n * ROW_LEN(n);
    double *table = node_index ? calloc(table_len, sizeof *table) : NULL;
    double *row = node_index ? calloc(ROW_LEN(n), sizeof *row) : NULL;
    char *buf = calloc(LARGE, 1);
    /* every rank goes on only if every rank has its memory */
    int fail = !(node_index && table && row && buf), any = 0;
    st = rwc_mpi(rwc_real_allreduce(&fail, &any, 1, MPI_INT, MPI_MAX, c->dup), "MPI_Allreduce");
    if (!st && any)
        st = rw_fail(RW_ERR_NOMEM, "out of memory for the in-job measurement of %d nodes", n);
    if (!st)
        st = measure(c, n, buf, row);
    if (!st && c->leaders != MPI_COMM_NULL)
        st = rwc_mpi(rwc_real_gather(row, (int)ROW_LEN(n), MPI_DOUBLE, table, (int)ROW_LEN(n), MPI_DOUBLE, 0,
                                     c->leaders),
                     "MPI_Gather (in-job measurement)");
    if (!st)
        st = rwc_mpi(rwc_real_bcast(table, (int)table_len, MPI_DOUBLE, 0, c->dup), "MPI_Bcast (in-job measurement)");
    if (!st)
        st = build(c, n, table, node_index, out);
    if (!st && c->rank == 0) {
        if (rwc_tracing())
            fprintf(stderr, "rankwise-coll: in-job measurement (nodes %d, ranks %d): %.6f s\n", n, c->size,
                    PMPI_Wtime() - t0);
    }
    free(node_index);
    free(table);
    free(row);
    free(buf);
    return st;
}
