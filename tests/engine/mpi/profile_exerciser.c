/* profile_exerciser: MPI traffic whose communication matrix can be computed
 * by hand, for the profiler's tests (tests/python/measure/test_profile.py holds the
 * expected matrices) and its overhead benchmark (studies/probe/profile_overhead.py).
 * Built by those scripts with mpicc (run under LD_PRELOAD) or smpicc
 * (linked with librankwise_profile.a): it is not installed.
 *
 *   profile_exerciser all              p2p of every kind and every collective
 *   profile_exerciser split            traffic on split, duplicated (and, with
 *                                      a real MPI, inter-) communicators
 *   profile_exerciser phases FILE      write FILE mid-run, reset, pause, resume
 *   profile_exerciser crash            traffic, then rank 1 aborts
 *   profile_exerciser threads          MPI_THREAD_MULTIPLE: 4 threads per rank
 *                                      send and alltoall at once (real MPI)
 *   profile_exerciser pingpong N SIZE  rank 0 <-> 1 ping-pong, then rank 0
 *                                      MPI_Sendrecv to itself; prints ns per
 *                                      iteration on world and on a split comm
 *
 * Sizes are distinct on purpose so that a mistake names its call. Needs at
 * least 2 ranks; `all` and `split` are written for 4 (the tests' count)
 * but run on any count >= 2. */
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RW_PROFILE_OPTIONAL
#include "rankwise_profile.h"

/* SMPI 3.32 has no neighbourhood collectives nor intercommunicators;
 * its mpi.h defines SMPI_H. */
#ifdef SMPI_H
#define REAL_MPI 0
#else
#define REAL_MPI 1
#endif

static int rank, size;
static char buf_a[1 << 20], buf_b[1 << 20]; /* `all` fits up to ~700 ranks */

#define CHECK(call)                                                                                \
    do {                                                                                           \
        if ((call) != MPI_SUCCESS) {                                                               \
            fprintf(stderr, "exerciser: %s failed\n", #call);                                     \
            MPI_Abort(MPI_COMM_WORLD, 3);                                                          \
        }                                                                                          \
    } while (0)

static void point_to_point(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request req[4];

    /* Blocking: 0 -> 1 Send of 10 ints; 1 -> 0 Ssend of 3 doubles. */
    if (rank == 0) {
        CHECK(MPI_Send(buf_a, 10, MPI_INT, 1, 1, MPI_COMM_WORLD));
        CHECK(MPI_Recv(buf_b, 3, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else if (rank == 1) {
        CHECK(MPI_Recv(buf_b, 10, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(MPI_Ssend(buf_a, 3, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD));
    }
    /* Ready send: last rank -> 0, 5 ints, receive posted before a barrier. */
    if (rank == 0)
        CHECK(MPI_Irecv(buf_b, 5, MPI_INT, size - 1, 3, MPI_COMM_WORLD, &req[0]));
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == size - 1)
        CHECK(MPI_Rsend(buf_a, 5, MPI_INT, 0, 3, MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    /* Buffered send: 1 -> last rank, 7 chars. */
    if (rank == 1) {
        static char attach[MPI_BSEND_OVERHEAD + 64];
        void *old;
        int old_size;
        CHECK(MPI_Buffer_attach(attach, sizeof attach));
        CHECK(MPI_Bsend(buf_a, 7, MPI_CHAR, size - 1, 4, MPI_COMM_WORLD));
        CHECK(MPI_Buffer_detach(&old, &old_size));
    }
    if (rank == size - 1)
        CHECK(MPI_Recv(buf_b, 7, MPI_CHAR, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));

    /* Nonblocking ring: 100 bytes to the right (Isend), 2 doubles to the
     * left (Issend). */
    CHECK(MPI_Irecv(buf_b, 100, MPI_BYTE, left, 5, MPI_COMM_WORLD, &req[0]));
    CHECK(MPI_Irecv(buf_b + 200, 2, MPI_DOUBLE, right, 6, MPI_COMM_WORLD, &req[1]));
    CHECK(MPI_Isend(buf_a, 100, MPI_BYTE, right, 5, MPI_COMM_WORLD, &req[2]));
    CHECK(MPI_Issend(buf_a + 200, 2, MPI_DOUBLE, left, 6, MPI_COMM_WORLD, &req[3]));
    CHECK(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));

    /* Persistent: 6 ints to the right, started 3 times with MPI_Start and
     * twice with MPI_Startall: 5 messages, 120 bytes. The barriers keep
     * SMPI 3.32 from hanging when a message of the next round reaches a
     * persistent receive before it is started again. */
    MPI_Request pers[2];
    CHECK(MPI_Send_init(buf_a, 6, MPI_INT, right, 7, MPI_COMM_WORLD, &pers[0]));
    CHECK(MPI_Recv_init(buf_b, 6, MPI_INT, left, 7, MPI_COMM_WORLD, &pers[1]));
    for (int it = 0; it < 3; it++) {
        CHECK(MPI_Start(&pers[1]));
        CHECK(MPI_Start(&pers[0]));
        CHECK(MPI_Waitall(2, pers, MPI_STATUSES_IGNORE));
        CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    for (int it = 0; it < 2; it++) {
        CHECK(MPI_Startall(2, pers));
        CHECK(MPI_Waitall(2, pers, MPI_STATUSES_IGNORE));
        CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    CHECK(MPI_Request_free(&pers[0]));
    CHECK(MPI_Request_free(&pers[1]));

    /* Sendrecv: 9 bytes to the right; Sendrecv_replace: 4 ints to the left. */
    CHECK(MPI_Sendrecv(buf_a, 9, MPI_BYTE, right, 8, buf_b, 9, MPI_BYTE, left, 8, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
    CHECK(MPI_Sendrecv_replace(buf_a, 4, MPI_INT, left, 9, right, 9, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));

    /* A probed receive counts once, on the send side: 1 -> 0, 11 bytes. */
    if (rank == 1)
        CHECK(MPI_Send(buf_a, 11, MPI_BYTE, 0, 10, MPI_COMM_WORLD));
    if (rank == 0) {
        MPI_Status st;
        int count, flag = 0;
        CHECK(MPI_Probe(1, 10, MPI_COMM_WORLD, &st));
        while (!flag)
            CHECK(MPI_Iprobe(1, 10, MPI_COMM_WORLD, &flag, &st));
        CHECK(MPI_Get_count(&st, MPI_BYTE, &count));
        CHECK(MPI_Recv(buf_b, count, MPI_BYTE, 1, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }

    /* To nobody, and to oneself (5 bytes: a self entry). */
    CHECK(MPI_Send(buf_a, 12, MPI_BYTE, MPI_PROC_NULL, 11, MPI_COMM_WORLD));
    CHECK(MPI_Irecv(buf_b, 5, MPI_BYTE, rank, 12, MPI_COMM_WORLD, &req[0]));
    CHECK(MPI_Send(buf_a, 5, MPI_BYTE, rank, 12, MPI_COMM_WORLD));
    CHECK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
}

static void collectives(void)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int n = size;
    int *counts = calloc((size_t)n, sizeof *counts), *displs = calloc((size_t)n, sizeof *displs);
    int *rcounts = calloc((size_t)n, sizeof *rcounts), *rdispls = calloc((size_t)n, sizeof *rdispls);
    MPI_Datatype *stypes = calloc((size_t)n, sizeof *stypes), *rtypes = calloc((size_t)n, sizeof *rtypes);
    double *da = (double *)buf_a, *db = (double *)buf_b;
    int *ia = (int *)buf_a, *ib = (int *)buf_b;
    for (int i = 0; i < 1024; i++)
        ia[i] = i;

    CHECK(MPI_Barrier(w));
    CHECK(MPI_Bcast(buf_a, 25, MPI_INT, 0, w));                    /* 0 -> j: 100 B */
    CHECK(MPI_Reduce(da, db, 3, MPI_DOUBLE, MPI_SUM, 1 % n, w));   /* j -> 1: 24 B */
    CHECK(MPI_Allreduce(da, db, 10, MPI_DOUBLE, MPI_SUM, w));      /* blocks of 10 doubles */
    CHECK(MPI_Allreduce(ia, ib, 2, MPI_INT, MPI_MAX, w));          /* blocks of 2 ints */
    memcpy(ib, ia, 64);
    CHECK(MPI_Allreduce(MPI_IN_PLACE, ib, 4, MPI_INT, MPI_SUM, w)); /* blocks of 4 ints */
    CHECK(MPI_Gather(ia, 4, MPI_INT, ib, 4, MPI_INT, 2 % n, w));   /* j -> 2: 16 B */
    for (int j = 0; j < n; j++) {
        rcounts[j] = j + 1;
        rdispls[j] = j == 0 ? 0 : rdispls[j - 1] + rcounts[j - 1];
    }
    CHECK(MPI_Gatherv(ia, rank + 1, MPI_INT, ib, rcounts, rdispls, MPI_INT, 0, w)); /* j -> 0: 4(j+1) */
    CHECK(MPI_Scatter(da, 2, MPI_DOUBLE, db, 2, MPI_DOUBLE, n - 1, w)); /* n-1 -> j: 16 B */
    for (int j = 0; j < n; j++) {
        counts[j] = j;
        displs[j] = j == 0 ? 0 : displs[j - 1] + counts[j - 1];
    }
    CHECK(MPI_Scatterv(ia, counts, displs, MPI_INT, ib, rank, MPI_INT, 0, w)); /* 0 -> j: 4j */
    CHECK(MPI_Allgather(buf_a, 3, MPI_BYTE, buf_b, 3, MPI_BYTE, w));           /* i -> j: 3 B */
    CHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ib, 2, MPI_INT, w)); /* 8 B */
    for (int j = 0; j < n; j++) {
        rcounts[j] = j + 2;
        rdispls[j] = j == 0 ? 0 : rdispls[j - 1] + rcounts[j - 1];
    }
    CHECK(MPI_Allgatherv(buf_a, rank + 2, MPI_BYTE, buf_b, rcounts, rdispls, MPI_BYTE, w)); /* i+2 */
    CHECK(MPI_Alltoall(ia, 5, MPI_INT, ib, 5, MPI_INT, w));        /* i -> j: 20 B */
    for (int j = 0; j < n; j++) {
        counts[j] = (rank + j) % 3;
        displs[j] = 8 * j;
        rcounts[j] = (j + rank) % 3;
        rdispls[j] = 8 * j;
    }
    CHECK(MPI_Alltoallv(ia, counts, displs, MPI_INT, ib, rcounts, rdispls, MPI_INT, w)); /* 4((i+j)%3) */
    for (int j = 0; j < n; j++) {
        /* i -> j: (1 + j) ints for even j, (1 + j) doubles for odd j */
        counts[j] = 1 + j;
        stypes[j] = j % 2 ? MPI_DOUBLE : MPI_INT;
        displs[j] = 64 * j;
        rcounts[j] = 1 + rank;
        rtypes[j] = rank % 2 ? MPI_DOUBLE : MPI_INT;
        rdispls[j] = 64 * j;
    }
    CHECK(MPI_Alltoallw(buf_a, counts, displs, stypes, buf_b, rcounts, rdispls, rtypes, w));
    CHECK(MPI_Reduce_scatter_block(da, db, 2, MPI_DOUBLE, MPI_SUM, w)); /* i -> j: 16 B */
    for (int j = 0; j < n; j++)
        rcounts[j] = j + 1;
    CHECK(MPI_Reduce_scatter(ia, ib, rcounts, MPI_INT, MPI_SUM, w)); /* i -> j: 4(j+1) */
    CHECK(MPI_Scan(ia, ib, 3, MPI_INT, MPI_SUM, w));                 /* i -> i+1: 12 B */
    CHECK(MPI_Exscan(da, db, 2, MPI_DOUBLE, MPI_SUM, w));            /* i -> i+1: 16 B */

    /* Nonblocking, counted when posted. */
    MPI_Request req[9];
    static char nb[9][512];
    CHECK(MPI_Ibcast(nb[0], 6, MPI_BYTE, 1 % n, w, &req[0]));           /* 1 -> j: 6 B */
    CHECK(MPI_Iallreduce(ia, nb[1], 1, MPI_INT, MPI_SUM, w, &req[1]));  /* blocks of 1 int */
    CHECK(MPI_Ialltoall(buf_a, 2, MPI_BYTE, nb[2], 2, MPI_BYTE, w, &req[2])); /* i -> j: 2 B */
    CHECK(MPI_Igather(da, 1, MPI_DOUBLE, nb[3], 1, MPI_DOUBLE, 0, w, &req[3])); /* j -> 0: 8 B */
    CHECK(MPI_Ireduce(ia, nb[4], 5, MPI_INT, MPI_SUM, 0, w, &req[4]));  /* j -> 0: 20 B */
    CHECK(MPI_Iallgather(ia, 1, MPI_INT, nb[5], 1, MPI_INT, w, &req[5])); /* i -> j: 4 B */
    CHECK(MPI_Iscatter(buf_a, 3, MPI_BYTE, nb[6], 3, MPI_BYTE, 0, w, &req[6])); /* 0 -> j: 3 B */
    CHECK(MPI_Ibarrier(w, &req[7]));
    CHECK(MPI_Iexscan(ia, nb[8], 1, MPI_INT, MPI_SUM, w, &req[8]));     /* i -> i+1: 4 B */
    CHECK(MPI_Waitall(9, req, MPI_STATUSES_IGNORE));

#if REAL_MPI
    /* Neighbourhood collectives on a periodic ring and a distributed graph. */
    MPI_Comm ring, graph;
    int dims[1] = {n}, periods[1] = {1};
    CHECK(MPI_Cart_create(w, 1, dims, periods, 0, &ring));
    CHECK(MPI_Neighbor_alltoall(ia, 3, MPI_INT, ib, 3, MPI_INT, ring));      /* to i-1, i+1: 12 B */
    CHECK(MPI_Neighbor_allgather(da, 1, MPI_DOUBLE, db, 1, MPI_DOUBLE, ring)); /* to i-1, i+1: 8 B */
    int dest = (rank + 2) % n, src = (rank + n - 2) % n, seven = 7, zero = 0, weight = 1;
    CHECK(MPI_Dist_graph_create_adjacent(w, 1, &src, &weight, 1, &dest, &weight, MPI_INFO_NULL, 0,
                                         &graph));
    CHECK(MPI_Neighbor_alltoallv(buf_a, &seven, &zero, MPI_BYTE, buf_b, &seven, &zero, MPI_BYTE,
                                 graph)); /* i -> i+2: 7 B */
    CHECK(MPI_Comm_free(&graph));
    CHECK(MPI_Comm_free(&ring));
#endif
    free(counts);
    free(displs);
    free(rcounts);
    free(rdispls);
    free(stypes);
    free(rtypes);
}

/* Sub-communicators: ranks of the same parity, numbered backwards. */
static void split(void)
{
    MPI_Comm sub, dup;
    int sr, ss;
    CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &sub));
    CHECK(MPI_Comm_rank(sub, &sr));
    CHECK(MPI_Comm_size(sub, &ss));
    if (ss > 1) {
        if (sr == 0)
            CHECK(MPI_Send(buf_a, 13, MPI_BYTE, 1, 1, sub)); /* sub 0 -> sub 1: 13 B */
        if (sr == 1)
            CHECK(MPI_Recv(buf_b, 13, MPI_BYTE, 0, 1, sub, MPI_STATUS_IGNORE));
    }
    CHECK(MPI_Bcast(buf_a, 17, MPI_BYTE, 0, sub));          /* sub 0 -> others: 17 B */
    CHECK(MPI_Alltoall(buf_a, 1, MPI_INT, buf_b, 1, MPI_INT, sub)); /* 4 B each pair */
    CHECK(MPI_Comm_dup(sub, &dup));
    if (ss > 1) {
        if (sr == 1)
            CHECK(MPI_Send(buf_a, 19, MPI_BYTE, 0, 2, dup)); /* sub 1 -> sub 0: 19 B */
        if (sr == 0)
            CHECK(MPI_Recv(buf_b, 19, MPI_BYTE, 1, 2, dup, MPI_STATUS_IGNORE));
    }
    CHECK(MPI_Allgather(buf_a, 2, MPI_BYTE, buf_b, 2, MPI_BYTE, dup)); /* 2 B each pair */
    CHECK(MPI_Comm_free(&dup));
#if REAL_MPI
    /* Intercommunicator between the parities, led by their sub rank 0 (the
     * largest world rank of each parity): local rank k sends 21 bytes to
     * remote rank k when it exists. */
    {
        MPI_Comm inter;
        int rs, other = (size - 1) % 2 != rank % 2 ? size - 1 : size - 2;
        CHECK(MPI_Intercomm_create(sub, 0, MPI_COMM_WORLD, other, 99, &inter));
        CHECK(MPI_Comm_remote_size(inter, &rs));
        MPI_Request req[2];
        int nreq = 0;
        if (sr < rs) {
            CHECK(MPI_Isend(buf_a, 21, MPI_BYTE, sr, 3, inter, &req[nreq++]));
            CHECK(MPI_Irecv(buf_b, 21, MPI_BYTE, sr, 3, inter, &req[nreq++]));
        }
        CHECK(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
        CHECK(MPI_Comm_free(&inter));
    }
#endif
    CHECK(MPI_Comm_free(&sub));
}

static void ring_send(int to_right, int bytes)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int to = to_right ? right : left, from = to_right ? left : right;
    CHECK(MPI_Sendrecv(buf_a, bytes, MPI_BYTE, to, 20, buf_b, bytes, MPI_BYTE, from, 20,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

/* Phase A written to `path`; phase B paused (API); phase C recorded but for
 * an alltoall inside MPI_Pcontrol(0)..(1): the final file holds C only. */
static int phases(const char *path)
{
    if (!rw_profile_write) {
        if (rank == 0)
            fprintf(stderr, "exerciser: error: not linked with the profiler\n");
        return 1;
    }
    ring_send(1, 1000);                 /* A: i -> i+1, 1000 B */
    int st = rw_profile_write(path);
    if (st != 0) {
        fprintf(stderr, "exerciser: error: rw_profile_write: %s\n", rw_last_error());
        return 1;
    }
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    rw_profile_reset();
    rw_profile_pause();
    ring_send(1, 2000);                 /* B: not recorded */
    CHECK(MPI_Allreduce(MPI_IN_PLACE, buf_a, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    rw_profile_resume();
    ring_send(0, 3000);                 /* C: i -> i-1, 3000 B */
    MPI_Pcontrol(0);
    CHECK(MPI_Alltoall(buf_a, 4, MPI_BYTE, buf_b, 4, MPI_BYTE, MPI_COMM_WORLD));
    MPI_Pcontrol(1);
    return 0;
}

/* Threads of one rank record at once: thread t sends 50 messages of t + 1
 * bytes to the right (tag t) and runs 50 alltoalls of 1 int on its own
 * duplicate of MPI_COMM_WORLD (duplicates share the profiler's entry). */
#define THREADS 4
#define THREAD_ITERS 50

typedef struct worker {
    int t;
    MPI_Comm comm;
} worker;

static void *work(void *arg)
{
    const worker *w = arg;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    char out[THREADS], in[THREADS];
    int *a = calloc((size_t)size, sizeof *a), *b = calloc((size_t)size, sizeof *b);
    for (int it = 0; it < THREAD_ITERS; it++) {
        MPI_Request req;
        CHECK(MPI_Irecv(in, w->t + 1, MPI_BYTE, left, w->t, MPI_COMM_WORLD, &req));
        CHECK(MPI_Send(out, w->t + 1, MPI_BYTE, right, w->t, MPI_COMM_WORLD));
        CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, w->comm));
    }
    free(a);
    free(b);
    return NULL;
}

static int threads(int provided)
{
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("exerciser: no MPI_THREAD_MULTIPLE\n");
        return 0;
    }
    pthread_t th[THREADS];
    worker w[THREADS];
    for (int t = 0; t < THREADS; t++) {
        w[t].t = t;
        CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &w[t].comm));
    }
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, work, &w[t]);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++)
        CHECK(MPI_Comm_free(&w[t].comm));
    return 0;
}

static void pingpong(long iters, int bytes)
{
    MPI_Comm pair;
    CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair));
    if (rank >= 2)
        return;
    MPI_Comm comms[2] = {MPI_COMM_WORLD, pair};
    const char *names[2] = {"world", "split"};
    for (int c = 0; c < 2; c++) {
        double best = 1e30;
        for (int rep = 0; rep < 5; rep++) {
            CHECK(MPI_Barrier(comms[c]));
            double t0 = MPI_Wtime();
            for (long it = 0; it < iters; it++) {
                if (rank == 0) {
                    MPI_Send(buf_a, bytes, MPI_BYTE, 1, 0, comms[c]);
                    MPI_Recv(buf_b, bytes, MPI_BYTE, 1, 0, comms[c], MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf_b, bytes, MPI_BYTE, 0, 0, comms[c], MPI_STATUS_IGNORE);
                    MPI_Send(buf_a, bytes, MPI_BYTE, 0, 0, comms[c]);
                }
            }
            double t = (MPI_Wtime() - t0) / (double)iters;
            if (t < best)
                best = t;
        }
        if (rank == 0)
            printf("pingpong %s %d %.1f\n", names[c], bytes, best * 1e9);
    }
    /* One call per iteration without a partner's noise: rank 0 sends to
     * itself while rank 1 waits. */
    for (int c = 0; c < 2; c++) {
        double best = 1e30;
        for (int rep = 0; rank == 0 && rep < 5; rep++) {
            double t0 = MPI_Wtime();
            for (long it = 0; it < iters; it++)
                MPI_Sendrecv(buf_a, bytes, MPI_BYTE, 0, 1, buf_b, bytes, MPI_BYTE, 0, 1, comms[c],
                             MPI_STATUS_IGNORE);
            double t = (MPI_Wtime() - t0) / (double)iters;
            if (t < best)
                best = t;
        }
        if (rank == 0)
            printf("self %s %d %.1f\n", names[c], bytes, best * 1e9);
        CHECK(MPI_Barrier(comms[c]));
    }
    CHECK(MPI_Comm_free(&pair));
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    int provided = MPI_THREAD_SINGLE;
    if (!strcmp(mode, "threads"))
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = 0;
    if (size < 2) {
        fprintf(stderr, "exerciser: error: needs at least 2 ranks\n");
        rc = 1;
    } else if (!strcmp(mode, "all")) {
        point_to_point();
        collectives();
    } else if (!strcmp(mode, "split")) {
        split();
    } else if (!strcmp(mode, "phases") && argc > 2) {
        rc = phases(argv[2]);
    } else if (!strcmp(mode, "crash")) {
        ring_send(1, 500);
        CHECK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 1) {
            fprintf(stderr, "exerciser: rank 1 aborts on purpose\n");
            fflush(stderr);
            abort();
        }
        CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* the others wait for rank 1 */
    } else if (!strcmp(mode, "threads")) {
        rc = threads(provided);
    } else if (!strcmp(mode, "pingpong") && argc > 3) {
        pingpong(atol(argv[2]), atoi(argv[3]));
    } else {
        if (rank == 0)
            fprintf(stderr, "exerciser: error: unknown mode '%s'\n", mode);
        rc = 1;
    }
    MPI_Finalize();
    return rc;
}
