/* The network probe: ping-pong between every ordered pair of nodes, all
 * pairs of a tournament round at once (or one pair at a time in isolated
 * mode), for several message sizes, repeated over rounds. Node leaders
 * measure; rank 0 assembles the model. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "nodes.h"
#include "overhead.h"
#include "pingpong.h"
#include "payload.h"
#include "probe_end.h"
#include "reference.h"
#include "stress.h"
#include "rankwise_probe.h"

/* The start's wall time to the microsecond: two probes started in one
 * second must not share their timestamps (rankwise diff tells re-measured
 * pairs by them). SMPI defines clock_gettime as its simulated clock; the
 * host's real one is wanted here. */
#ifdef clock_gettime
#undef clock_gettime
#endif
static double wall_clock(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return (double)time(NULL);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 8 B to 4 MiB in steps of 4 (the last step is 2). */
static const int64_t default_sizes[] = {8,      32,      128,      512,     2048,   8192,
                                        32768, 131072, 524288, 2097152, 4194304};

void rw_probe_options_default(rw_probe_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->settings = rw_probe_settings_default();
    opt->n_sizes = (int)(sizeof default_sizes / sizeof *default_sizes);
    opt->sizes = default_sizes;
    opt->group_by = RW_GROUP_BY_HOST;
    opt->measure_intra = 1;
}

/* Samples kept per pair and size (repetitions x rounds): bounds memory. */
#define RW_MAX_SERIES 100000

/* Values sent per peer from a leader to rank 0: state, measured_at, then
 * STAT_FIELDS per size. A row ends with ROW_TRAILER values: the node's
 * send and receive overheads, whether the leader gave up on a peer. */
#define STAT_FIELDS 5
#define PEER_HEADER 2
#define ROW_TRAILER 3

/* Set by rw_probe_run: MPI operations of this rank (on rank 0: of any
 * node) were given up and may never complete. */
static int left_pending;

int rw_probe_left_pending(void) { return left_pending; }

typedef struct probe {
    const rw_probe_options *opt;
    rw_nodes nodes;
    int n, ns, reps, rounds, warmup;
    double timeout;
    int64_t max_size;
    char *buf;
    int me;            /* node index (leaders only) */
    uint8_t *want;     /* n*n ordered pairs to measure */
    double *samples;   /* leader: [peer][size][round*reps + k] */
    int *filled;       /* leader: [peer][size] rounds with samples (a time
                        * budget may stop the schedule early) */
    uint8_t *state;    /* leader: per peer, rw_pair_state of me -> peer */
    uint8_t *dead;     /* leader: peer stopped answering */
    int *notice_ids;   /* leader: notice_ids[j] == j, the buffers of notices
                        * about j (sent and freed: never released) */
    double *when;      /* leader: measured_at per peer */
    double wall0, wtime0;
    double overhead;   /* leader: this node's send overhead o, s */
    double recv_overhead; /* leader: its receive overhead, s */
    int synced;        /* collectives on `leaders` still usable */
    int intra_failed;  /* a local rank did not answer in time */
} probe;

static double *sample_slot(probe *p, int peer, int s, int round)
{
    return p->samples + (((size_t)peer * p->ns + s) * p->rounds + round) * p->reps;
}

static double now_unix(const probe *p) { return p->wall0 + (MPI_Wtime() - p->wtime0); }

/* A peer stopped answering. Pairs with complete rounds from before keep
 * them (the link was measured; its timestamp says when); a pair never
 * measured in full is missing. */
static void mark_lost(probe *p, int peer)
{
    p->dead[peer] = 1;
    for (int s = 0; s < p->ns; s++)
        if (p->filled[(size_t)peer * p->ns + s] == 0) {
            p->state[peer] = RW_PAIR_MISSING;
            return;
        }
}

/* A leader that gives up on a peer tells the others, so that each of them
 * does not wait a timeout of its own on it: without this a stopped node
 * costs a timeout per leader, one tournament round after the other. */
#define NOTICE_TAG 7323

static void peer_lost(probe *p, int peer)
{
    mark_lost(p, peer);
    /* The collective cannot complete without that peer: stop waiting on it. */
    p->synced = 0;
#ifndef RW_SMPI
    for (int j = 0; j < p->n; j++) {
        if (j == p->me || j == peer || p->dead[j])
            continue;
        MPI_Request req;
        MPI_Isend(&p->notice_ids[peer], 1, MPI_INT, j, NOTICE_TAG, p->nodes.leaders, &req);
        MPI_Request_free(&req);
    }
#endif
}

/* Peers other leaders gave up on. A leader that gave up on this one will
 * not answer it either: it is lost too, without waiting a timeout. */
static void read_notices(probe *p)
{
#ifndef RW_SMPI
    for (;;) {
        int flag = 0, id;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, NOTICE_TAG, p->nodes.leaders, &flag, &st);
        if (!flag)
            return;
        MPI_Recv(&id, 1, MPI_INT, st.MPI_SOURCE, NOTICE_TAG, p->nodes.leaders, MPI_STATUS_IGNORE);
        int lost = id == p->me ? st.MPI_SOURCE : id;
        if (lost >= 0 && lost < p->n && lost != p->me && !p->dead[lost]) {
            mark_lost(p, lost);
            p->synced = 0;
        }
    }
#else
    (void)p;
#endif
}

/* One timed series me -> peer: warm-up, then reps ping-pongs. A peer that
 * does not answer one ping-pong within the timeout is not asked again. */
static void initiate(probe *p, MPI_Comm comm, int peer_rank, int peer, int s, int round)
{
    if (p->dead[peer])
        return;
    double *out = sample_slot(p, peer, s, round);
    for (int k = -p->warmup; k < p->reps; k++) {
        double t = rw_ping(comm, peer_rank, p->buf, p->opt->sizes[s], p->timeout);
        if (t < 0) {
            peer_lost(p, peer);
            return;
        }
        if (t > p->timeout) /* only under SMPI, where waits block */
            p->state[peer] = RW_PAIR_MISSING;
        if (k >= 0)
            out[k] = t;
    }
    if (p->state[peer] == RW_PAIR_UNPROBED)
        p->state[peer] = RW_PAIR_MEASURED;
    p->filled[(size_t)peer * p->ns + s] = round + 1;
    p->when[peer] = now_unix(p);
}

static void respond(probe *p, MPI_Comm comm, int peer_rank, int peer, int s)
{
    if (p->dead[peer])
        return;
    for (int k = -p->warmup; k < p->reps; k++)
        if (rw_pong(comm, peer_rank, p->buf, p->opt->sizes[s], p->timeout) != 0) {
            peer_lost(p, peer);
            return;
        }
}

/* Both directions of pair (me, peer), the lower node initiating first. */
static void measure_pair(probe *p, int peer, int round)
{
    int out = p->want[(size_t)p->me * p->n + peer], in = p->want[(size_t)peer * p->n + p->me];
    for (int s = 0; s < p->ns; s++) {
        if (p->me < peer) {
            if (out)
                initiate(p, p->nodes.leaders, peer, peer, s, round);
            if (in)
                respond(p, p->nodes.leaders, peer, peer, s);
        } else {
            if (in)
                respond(p, p->nodes.leaders, peer, peer, s);
            if (out)
                initiate(p, p->nodes.leaders, peer, peer, s, round);
        }
    }
}

static int pair_active(const probe *p, int a, int b)
{
    return b >= 0 && (p->want[(size_t)a * p->n + b] || p->want[(size_t)b * p->n + a]);
}

/* Returns 1 when the probe must stop (time budget spent). */
static int sync_round(probe *p)
{
    double budget = p->opt->settings.time_budget;
    int stop = budget > 0 && MPI_Wtime() - p->wtime0 > budget;
    if (p->synced && rw_sync_flag(p->nodes.leaders, &stop, p->timeout) != 0)
        p->synced = 0; /* someone is not answering: go on with timeouts only */
    return stop;
}

static int tournament_round_active(const probe *p, int t)
{
    for (int a = 0; a < p->n; a++)
        if (pair_active(p, a, rw_tournament_partner(p->n, t, a)))
            return 1;
    return 0;
}

static void measure_schedule(probe *p);

static void measure_inter(probe *p)
{
    measure_schedule(p);
    read_notices(p); /* those that arrived after the last round */
}

static void measure_schedule(probe *p)
{
    int T = rw_tournament_rounds(p->n), done = 0, total = 0;
    for (int t = 0; t < T; t++)
        total += tournament_round_active(p, t);
    total *= p->rounds;
    int isolated = p->opt->settings.mode == RW_MODE_ISOLATED;
    for (int round = 0; round < p->rounds; round++) {
        for (int t = 0; t < T; t++) {
            if (!tournament_round_active(p, t))
                continue;
            int peer = rw_tournament_partner(p->n, t, p->me);
            read_notices(p);
            if (!isolated) {
                if (pair_active(p, p->me, peer))
                    measure_pair(p, peer, round);
            } else {
                /* Pairs of this round one after the other, in order of
                 * their lower node. */
                for (int a = 0; a < p->n; a++) {
                    int b = rw_tournament_partner(p->n, t, a);
                    if (b < a || !pair_active(p, a, b))
                        continue;
                    if (a == p->me || b == p->me)
                        measure_pair(p, peer, round);
                    if (sync_round(p))
                        return;
                }
            }
            if (sync_round(p))
                return;
            done++;
            if (p->me == 0 && p->opt->progress)
                p->opt->progress(done, total, p->opt->progress_arg);
        }
    }
}

/* Rank-to-rank inside each node: the leader pings every other local rank. */
static rw_status measure_intra(probe *p, rw_stat *stats /* ns, leader only */, uint8_t *state)
{
    MPI_Comm c = p->nodes.node_comm;
    int local, k;
    MPI_Comm_rank(c, &local);
    MPI_Comm_size(c, &k);
    *state = RW_PAIR_UNPROBED;
    if (k < 2 || !p->opt->measure_intra)
        return RW_OK;
    int per_round = p->reps * (k - 1);
    double *v = local == 0 ? malloc((size_t)p->rounds * per_round * sizeof *v) : NULL;
    if (local == 0 && !v)
        return rw_fail(RW_ERR_NOMEM, "out of memory");
    int failed = 0;
    *state = RW_PAIR_MEASURED;
    for (int s = 0; s < p->ns; s++) {
        int64_t size = p->opt->sizes[s];
        for (int round = 0; round < p->rounds && !failed; round++)
            for (int peer = 1; peer < k && !failed; peer++)
                for (int r = -p->warmup; r < p->reps; r++) {
                    if (local == 0) {
                        double t = rw_ping(c, peer, p->buf, size, p->timeout);
                        if (t < 0 || t > p->timeout) {
                            failed = 1;
                            break;
                        }
                        if (r >= 0)
                            v[((size_t)round * (k - 1) + (peer - 1)) * p->reps + r] = t;
                    } else if (local == peer && rw_pong(c, 0, p->buf, size, p->timeout) != 0) {
                        failed = 1;
                        break;
                    }
                }
        if (local == 0 && !failed)
            rw_stat_from_rounds(v, p->rounds, per_round, &stats[s]);
    }
    if (failed) {
        *state = RW_PAIR_MISSING;
        p->intra_failed = 1;
    }
    free(v);
    return RW_OK;
}

static void pack_stat(double *d, const rw_stat *s)
{
    d[0] = s->min;
    d[1] = s->median;
    d[2] = s->max;
    d[3] = s->jitter;
    d[4] = s->count;
}

static void unpack_stat(const double *d, rw_stat *s)
{
    s->min = d[0];
    s->median = d[1];
    s->max = d[2];
    s->jitter = d[3];
    s->count = (int32_t)d[4];
}

/* A leader's row: per peer (state, when, stats...), then its intra block
 * (state, stats...). */
static size_t row_len(const probe *p)
{
    return (size_t)(p->n + 1) * (PEER_HEADER + (size_t)STAT_FIELDS * p->ns) + ROW_TRAILER;
}

/* This rank abandoned requests or a collective: a peer stopped answering. */
static int gave_up(const probe *p)
{
#ifdef RW_SMPI
    (void)p;
    return 0; /* waits block: nothing is ever given up */
#else
    if (!p->synced || p->intra_failed)
        return 1;
    for (int j = 0; p->dead && j < p->n; j++)
        if (p->dead[j])
            return 1;
    return 0;
#endif
}

static void pack_row(probe *p, double *row, const rw_stat *intra, uint8_t intra_state)
{
    size_t stride = PEER_HEADER + (size_t)STAT_FIELDS * p->ns;
    for (int j = 0; j <= p->n; j++) {
        double *d = row + (size_t)j * stride;
        int is_intra = j == p->n;
        d[0] = is_intra ? intra_state : p->state[j];
        d[1] = is_intra ? now_unix(p) : p->when[j];
        for (int s = 0; s < p->ns; s++) {
            rw_stat st = {NAN, NAN, NAN, NAN, 0};
            if (is_intra && intra_state == RW_PAIR_MEASURED)
                st = intra[s];
            else if (!is_intra && p->state[j] == RW_PAIR_MEASURED)
                rw_stat_from_rounds(sample_slot(p, j, s, 0), p->filled[(size_t)j * p->ns + s],
                                    p->reps, &st);
            pack_stat(d + PEER_HEADER + (size_t)STAT_FIELDS * s, &st);
        }
    }
    row[row_len(p) - ROW_TRAILER] = p->overhead;
    row[row_len(p) - ROW_TRAILER + 1] = p->recv_overhead;
    row[row_len(p) - 1] = gave_up(p);
}

static void unpack_row(probe *p, rw_model *m, int i, const double *row)
{
    size_t stride = PEER_HEADER + (size_t)STAT_FIELDS * p->ns;
    for (int j = 0; j <= p->n; j++) {
        const double *d = row + (size_t)j * stride;
        if (j == i)
            continue;
        uint8_t state = (uint8_t)d[0];
        rw_stat *dst = j == p->n ? m->intra_stats + (size_t)i * p->ns
                                 : m->pair_stats + ((size_t)i * p->n + j) * p->ns;
        for (int s = 0; s < p->ns; s++)
            unpack_stat(d + PEER_HEADER + (size_t)STAT_FIELDS * s, &dst[s]);
        if (j == p->n) {
            m->intra_state[i] = state;
            if (state == RW_PAIR_MEASURED)
                rw_model_fit_intra(m, i);
            continue;
        }
        size_t pr = (size_t)i * p->n + j;
        m->pair_state[pr] = state;
        m->measured_at[pr] = d[1];
        if (state == RW_PAIR_MEASURED)
            rw_model_fit_pair(m, (int)pr);
    }
    m->overhead[i] = row[row_len(p) - ROW_TRAILER];
    m->recv_overhead[i] = row[row_len(p) - ROW_TRAILER + 1];
    if (row[row_len(p) - 1] != 0)
        left_pending = 1;
}

/* Leaders send their rows to rank 0, which waits at most a timeout for
 * each; a node that never reports has all its pairs missing. */
static rw_status collect(probe *p, const rw_stat *intra, uint8_t intra_state, rw_model **out)
{
    size_t len = row_len(p);
    double *mine = malloc(len * sizeof *mine);
    if (!mine)
        return rw_fail(RW_ERR_NOMEM, "out of memory");
    pack_row(p, mine, intra, intra_state);
    MPI_Comm c = p->nodes.leaders;
    const int tag = 7322;
    if (p->me != 0) {
        MPI_Request req;
        MPI_Isend(mine, (int)len, MPI_DOUBLE, 0, tag, c, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        free(mine);
        return RW_OK;
    }
    const char *names[p->n];
    for (int i = 0; i < p->n; i++)
        names[i] = p->nodes.names[i];
    rw_model *m;
    rw_status st = rw_model_create(p->n, names, p->nodes.ranks_per_node, p->ns, p->opt->sizes, &m);
    if (st) {
        free(mine);
        return st;
    }
    m->settings = p->opt->settings;
    m->created = p->wall0;
    m->duration = MPI_Wtime() - p->wtime0;
    unpack_row(p, m, 0, mine);
    double *row = mine;
#ifndef RW_SMPI
    double lost_deadline = 0; /* one timeout for all the nodes known lost */
#endif
    for (int i = 1; i < p->n; i++) {
        MPI_Request req;
        MPI_Irecv(row, (int)len, MPI_DOUBLE, i, tag, c, &req);
        int done = 0;
#ifdef RW_SMPI
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        done = 1;
#else
        /* A node may still be in the overhead rings, waiting up to two
         * timeouts in each on a neighbour lost in the rounds that it was
         * never told of: five timeouts before it counts as lost. */
        double deadline = MPI_Wtime() + 5 * p->timeout;
        if (p->dead[i]) {
            if (lost_deadline == 0)
                lost_deadline = deadline;
            deadline = lost_deadline;
        }
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        while (!done && MPI_Wtime() < deadline)
            MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (!done) {
            MPI_Cancel(&req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
#endif
        if (done) {
            unpack_row(p, m, i, row);
            continue;
        }
        for (int j = 0; j < p->n; j++) /* node i never reported */
            if (j != i && p->want[(size_t)i * p->n + j])
                m->pair_state[(size_t)i * p->n + j] = RW_PAIR_MISSING;
        left_pending = 1;
    }
    free(mine);
    rw_model_fit_knee(m); /* a pair that cannot be fitted keeps NaN, as in unpack_row */
    *out = m;
    return RW_OK;
}

/* Ordered pairs to measure, from the options' node names. */
static rw_status select_pairs(probe *p)
{
    size_t nn = (size_t)p->n * p->n;
    p->want = calloc(nn, 1);
    if (!p->want)
        return rw_fail(RW_ERR_NOMEM, "out of memory");
    if (p->opt->n_pairs == 0) {
        for (size_t k = 0; k < nn; k++)
            p->want[k] = k / p->n != k % p->n;
        return RW_OK;
    }
    for (int q = 0; q < p->opt->n_pairs; q++) {
        int a = -1, b = -1;
        for (int i = 0; i < p->n; i++) {
            if (strcmp(p->nodes.names[i], p->opt->pair_src[q]) == 0)
                a = i;
            if (strcmp(p->nodes.names[i], p->opt->pair_dst[q]) == 0)
                b = i;
        }
        if (a < 0 || b < 0)
            return rw_fail(RW_ERR_ARG, "pair %s:%s: node '%s' is not part of this job",
                           p->opt->pair_src[q], p->opt->pair_dst[q],
                           a < 0 ? p->opt->pair_src[q] : p->opt->pair_dst[q]);
        if (a == b)
            return rw_fail(RW_ERR_ARG, "pair %s:%s: a node with itself", p->opt->pair_src[q],
                           p->opt->pair_dst[q]);
        p->want[(size_t)a * p->n + b] = 1;
    }
    return RW_OK;
}

static rw_status check_options(const rw_probe_options *o)
{
    const rw_probe_settings *s = &o->settings;
    if (o->n_sizes < 1 || !o->sizes)
        return rw_fail(RW_ERR_ARG, "no message sizes given");
    for (int k = 0; k < o->n_sizes; k++)
        if (o->sizes[k] < 0 || o->sizes[k] > (1LL << 30) || (k && o->sizes[k] <= o->sizes[k - 1]))
            return rw_fail(RW_ERR_ARG, "message sizes must be increasing, between 0 and 1 GiB");
    if (s->repetitions < 1 || s->rounds < 1 || s->warmup < 0)
        return rw_fail(RW_ERR_ARG, "repetitions and rounds must be >= 1, warm-up >= 0");
    if ((double)s->repetitions * s->rounds > RW_MAX_SERIES)
        return rw_fail(RW_ERR_ARG, "repetitions x rounds is %.0f, at most %d samples per pair and size",
                       (double)s->repetitions * s->rounds, RW_MAX_SERIES);
    if (!(s->timeout > 0))
        return rw_fail(RW_ERR_ARG, "the per-pair timeout must be positive");
    if (s->time_budget < 0)
        return rw_fail(RW_ERR_ARG, "the time budget must be >= 0 (0 means none)");
    return RW_OK;
}

static void probe_free(probe *p)
{
    rw_payload_free(p->buf);
    free(p->want);
    free(p->samples);
    free(p->filled);
    free(p->state);
    free(p->dead);
    free(p->when);
    /* A collective given up on may still be pending on `leaders`, and
     * notices sent on it may not have left: freeing the communicator or
     * their buffers under them crashes Open MPI's libnbc later. */
    if (p->synced)
        free(p->notice_ids);
    else
        p->nodes.leaders = MPI_COMM_NULL;
    rw_nodes_free(&p->nodes);
}

/* Every rank of comm must return the same status: combine them. */
static rw_status agree(MPI_Comm comm, rw_status st)
{
    int mine = st, worst;
    MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (worst != RW_OK && st == RW_OK)
        return rw_fail((rw_status)worst, "another rank failed (see its message)");
    return (rw_status)worst;
}

/* The stress test needs every node: it runs only when all answered. */
static rw_status measure_capacities(probe *p, rw_model *m)
{
    int skip = gave_up(p);
    if (!p->synced || rw_sync_flag(p->nodes.leaders, &skip, p->timeout) != 0 || skip)
        return RW_OK;
    rw_status st = rw_stress_run(p->nodes.leaders, m,
                                 p->opt->capacities == RW_CAPACITIES_ONLY ? p->opt->base : NULL, p->timeout);
    if (rw_stress_last_cost().abandoned) {
        p->synced = 0;
        left_pending = 1;
    }
    return st;
}

/* The reference pass (reference.c) after a concurrent probe of every pair:
 * it needs every node, and skips when the time budget is spent. Its rounds
 * are at most half the tournament's rounds (repeated `rounds` times), each
 * timing the large sizes once, as one tournament round does: at most half
 * the tournament's time (3 samples x 3 rounds at 64 nodes in 4 groups:
 * +4 % simulated). */
static rw_status measure_references(probe *p, rw_model *m)
{
    const rw_probe_settings *s = &p->opt->settings;
    if (p->opt->no_references || s->mode == RW_MODE_ISOLATED || p->opt->n_pairs > 0)
        return RW_OK;
    int skip = gave_up(p) || (s->time_budget > 0 && MPI_Wtime() - p->wtime0 > s->time_budget);
    if (!p->synced || rw_sync_flag(p->nodes.leaders, &skip, p->timeout) != 0 || skip)
        return RW_OK;
    int max_rounds = p->rounds * (p->n - 1) / 2;
    rw_status st = rw_reference_run(p->nodes.leaders, m, p->opt->sizes, p->reps, p->warmup, max_rounds,
                                    p->timeout);
    if (rw_reference_last_cost().abandoned) {
        p->synced = 0;
        left_pending = 1;
    }
    if (!st && m)
        m->duration = MPI_Wtime() - p->wtime0;
    return st;
}

rw_status rw_probe_run(MPI_Comm comm, const rw_probe_options *opt, rw_model **out)
{
    *out = NULL;
    left_pending = 0;
    rw_status st = check_options(opt);
    if (st)
        return st; /* same options everywhere: every rank fails alike */
    probe p = {.opt = opt, .ns = opt->n_sizes, .reps = opt->settings.repetitions,
               .rounds = opt->settings.rounds, .warmup = opt->settings.warmup,
               .timeout = opt->settings.timeout, .synced = 1,
               .overhead = NAN, .recv_overhead = NAN};
    if ((st = rw_nodes_discover(comm, opt->group_by, &p.nodes)))
        return agree(comm, st);
    p.n = p.nodes.n_nodes;
    if (p.n < 2) {
        /* The hint never suggests what was given: with ranks as nodes, one rank is too few. */
        st = rw_fail(RW_ERR_STATE,
                     "only one node (%s) in this job: nothing to measure between nodes (%s)",
                     p.nodes.names[0],
                     opt->group_by == RW_GROUP_BY_RANK
                         ? "run at least 2 ranks"
                         : "on one host, group ranks as nodes with --group-by rank");
        probe_free(&p);
        return st;
    }
    p.max_size = opt->sizes[opt->n_sizes - 1];
    p.buf = rw_payload_alloc((size_t)p.max_size + 1);
    if (!p.buf)
        st = rw_fail(RW_ERR_NOMEM, "out of memory for a %lld-byte buffer", (long long)p.max_size);
    if (!st)
        st = select_pairs(&p);
    if (!st && p.nodes.is_leader) {
        MPI_Comm_rank(p.nodes.leaders, &p.me);
        p.samples = calloc((size_t)p.n * p.ns * p.rounds * p.reps, sizeof *p.samples);
        p.filled = calloc((size_t)p.n * p.ns, sizeof *p.filled);
        p.state = calloc((size_t)p.n, 1);
        p.dead = calloc((size_t)p.n, 1);
        p.when = calloc((size_t)p.n, sizeof *p.when);
        p.notice_ids = malloc((size_t)p.n * sizeof *p.notice_ids);
        for (int j = 0; p.notice_ids && j < p.n; j++)
            p.notice_ids[j] = j;
        if (!p.samples || !p.filled || !p.state || !p.dead || !p.when || !p.notice_ids)
            st = rw_fail(RW_ERR_NOMEM, "out of memory for the probe's samples");
    }
    if ((st = agree(comm, st))) {
        probe_free(&p);
        return st;
    }

    /* Common start: clocks of the same run, wall time from rank 0. */
    double wall = wall_clock();
    MPI_Bcast(&wall, 1, MPI_DOUBLE, 0, comm);
    MPI_Barrier(comm);
    p.wall0 = wall;
    p.wtime0 = MPI_Wtime();

    rw_stat intra[p.ns];
    uint8_t intra_state = RW_PAIR_UNPROBED;
    int pingpong = opt->capacities != RW_CAPACITIES_ONLY;
    st = pingpong ? measure_intra(&p, intra, &intra_state) : RW_OK;
    if (!st && p.nodes.is_leader) {
        if (pingpong) {
            measure_inter(&p);
            rw_measure_overheads(p.nodes.leaders, p.dead, p.timeout, &p.overhead, &p.recv_overhead);
        }
        st = collect(&p, intra, intra_state, out);
        /* A rank 0 that failed here leaves the others to time out in the
         * pass's first sync, as in the stress test. */
        if (!st && pingpong)
            st = measure_references(&p, *out);
        if (!st && opt->capacities)
            st = measure_capacities(&p, *out);
    }
    if (gave_up(&p))
        left_pending = 1;
    probe_free(&p);
    return st;
}
