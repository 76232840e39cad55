/* The reference pass (docs/concepts/model.md, "Lone-pair bandwidth"). In
 * the tournament a pair shares its groups' uplinks with its round-mates,
 * and what it measured is contention, not the pair. After the tournament
 * rank 0 knows the groups; it plans rounds as a tournament over the groups,
 * so that in each round every group has at most one pair leaving it (its
 * uplink carries one flow), with K sample pairs per pair of groups chosen
 * among nodes whose own interface looks healthy. Only the large sizes are
 * timed. Then, per cross-group pair (i, j):
 *   lone = min(nic_out(i), nic_in(j), reference(g_i, g_j))
 * (nic from the node's pairs inside its group, which cross no uplink, and
 * its reference pairs; the reference the best sample of the two groups),
 * and a pair measured slower than that is rewritten at it
 * (rw_model_rewrite_pair). Never slower than it measured. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "payload.h"
#include "pingpong.h"
#include "reference.h"

#define REF_MIN_SIZE 131072 /* only sizes from here (and from the knee) */
#define REF_MAX_K 3         /* sample pairs per pair of groups */
#define HEALTHY 0.8         /* a node's nic >= this x its group's median */
#define RAISE 1.02          /* rewrite a pair only when lone is this much faster */
#define MIN_SAMPLES 2       /* a block's reference needs this many samples */
#define AGREE 1.10          /* ... all within this ratio of each other */
#define REF_TAG 7340

static rw_reference_cost last_cost = {-1, 0, 0, 0, 0, 0};

/* The host's clock: under SMPI MPI_Wtime and clock_gettime are simulated. */
#ifdef clock_gettime
#undef clock_gettime
#endif
static double host_seconds(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

rw_reference_cost rw_reference_last_cost(void) { return last_cost; }

/* The pair's large-message slope: its large fit when the model has a knee
 * (the references time sizes from the knee on), else its one fit. */
static double *slope(rw_model *m, size_t p)
{
    return m->knee > 0 && m->beta_large[p] > 0 ? &m->beta_large[p] : &m->beta[p];
}

static double pair_bw(const rw_model *m, int i, int j)
{
    size_t p = (size_t)i * m->n_nodes + j;
    if (i == j || m->pair_state[p] != RW_PAIR_MEASURED)
        return 0;
    double b = *slope((rw_model *)m, p);
    return b > 0 ? 1.0 / b : 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The plan, on every leader: rounds of node pairs (a < b), sizes by index. */
typedef struct plan {
    int n_rounds, n_pairs, n_sizes;
    int *start; /* n_rounds + 1 */
    int *a, *b; /* n_pairs */
    int *size;  /* n_sizes: indices into the model's sizes */
} plan;

static void plan_free(plan *pl)
{
    free(pl->start);
    free(pl->a);
    free(pl->b);
    free(pl->size);
    memset(pl, 0, sizeof *pl);
}

/* Rank 0: per node the best bandwidth out of (into) it towards its own
 * group (0 when it has no measured mate). */
static void nic_from_groups(const rw_model *m, const int32_t *of, double *out, double *in)
{
    int n = m->n_nodes;
    for (int i = 0; i < n; i++) {
        out[i] = in[i] = 0;
        for (int j = 0; j < n; j++)
            if (j != i && of[j] == of[i]) {
                out[i] = fmax(out[i], pair_bw(m, i, j));
                in[i] = fmax(in[i], pair_bw(m, j, i));
            }
    }
}

/* Rank 0: the plan, or an empty one (no rounds) when there is nothing to
 * do: one group, no large size, or more rounds than max_rounds. */
static rw_status make_plan(const rw_model *m, const int32_t *of, int G, int max_rounds, plan *pl)
{
    int n = m->n_nodes;
    memset(pl, 0, sizeof *pl);
    int64_t from = m->knee > REF_MIN_SIZE ? m->knee : REF_MIN_SIZE;
    int ns = 0;
    for (int s = 0; s < m->n_sizes; s++)
        ns += m->sizes[s] >= from;
    int T = G >= 2 ? rw_tournament_rounds(G) : 0;
    int k = T > 0 ? max_rounds / T : 0;
    k = k > REF_MAX_K ? REF_MAX_K : k;
    if (ns == 0 || k < MIN_SAMPLES)
        return RW_OK;
    double *out = malloc((size_t)n * sizeof *out), *in = malloc((size_t)n * sizeof *in);
    double *tmp = malloc((size_t)n * sizeof *tmp);
    int *healthy = malloc((size_t)n * sizeof *healthy), *hstart = calloc((size_t)G + 1, sizeof *hstart);
    pl->start = malloc((size_t)(k * T + 1) * sizeof *pl->start);
    pl->a = malloc((size_t)(k * T * (G / 2) + 1) * sizeof *pl->a);
    pl->b = malloc((size_t)(k * T * (G / 2) + 1) * sizeof *pl->b);
    pl->size = malloc((size_t)ns * sizeof *pl->size);
    rw_status st = RW_OK;
    if (!out || !in || !tmp || !healthy || !hstart || !pl->start || !pl->a || !pl->b || !pl->size) {
        st = rw_fail(RW_ERR_NOMEM, "out of memory for the reference pass");
        goto done;
    }
    for (int s = 0; s < m->n_sizes; s++)
        if (m->sizes[s] >= from)
            pl->size[pl->n_sizes++] = s;
    nic_from_groups(m, of, out, in);
    /* Healthy nodes of each group, in node order: nic out and in at least
     * HEALTHY x the group's median (a group of one node: that node). */
    int h = 0;
    for (int g = 0; g < G; g++) {
        hstart[g] = h;
        int c = 0;
        for (int i = 0; i < n; i++)
            if (of[i] == g)
                tmp[c++] = fmin(out[i], in[i]);
        qsort(tmp, (size_t)c, sizeof *tmp, cmp_double);
        double med = c ? tmp[c / 2] : 0;
        for (int i = 0; i < n; i++)
            if (of[i] == g && (fmin(out[i], in[i]) >= HEALTHY * med || c == 1))
                healthy[h++] = i;
        if (h == hstart[g]) /* none passed (no measured mates): all of them */
            for (int i = 0; i < n; i++)
                if (of[i] == g)
                    healthy[h++] = i;
    }
    hstart[G] = h;
    for (int r = 0; r < k; r++)
        for (int t = 0; t < T; t++) {
            pl->start[pl->n_rounds++] = pl->n_pairs;
            for (int g = 0; g < G; g++) {
                int o = rw_tournament_partner(G, t, g);
                if (o <= g)
                    continue;
                /* Sample r of this pair of groups: a different node of each
                 * group for each sample, shifted by the round so that a node
                 * does not meet the same partner in every block. */
                int cg = hstart[g + 1] - hstart[g], co = hstart[o + 1] - hstart[o];
                if (cg < 1 || co < 1)
                    continue;
                int x = healthy[hstart[g] + (r + t) % cg], y = healthy[hstart[o] + (r + 2 * t + g) % co];
                pl->a[pl->n_pairs] = x < y ? x : y;
                pl->b[pl->n_pairs++] = x < y ? y : x;
            }
        }
    pl->start[pl->n_rounds] = pl->n_pairs;
done:
    free(out);
    free(in);
    free(tmp);
    free(healthy);
    free(hstart);
    if (st)
        plan_free(pl);
    return st;
}

enum { SHARED, LOST = -1 };

static int step_sync(MPI_Comm c, int *flag, double timeout)
{
#ifdef RW_SMPI
    (void)timeout;
    int in = *flag;
    MPI_Allreduce(&in, flag, 1, MPI_INT, MPI_MAX, c);
    return SHARED;
#else
    return rw_sync_flag(c, flag, timeout) == 0 ? SHARED : LOST;
#endif
}

/* Send the plan from rank 0 to every leader. *lost when a leader stopped
 * answering (the arrays may then still be written into: never freed). */
static rw_status share_plan(MPI_Comm c, int me, plan *pl, double timeout, int *lost)
{
    int *counts = malloc(3 * sizeof *counts); /* outlives an abandoned broadcast */
    int failed = !counts;
    if (step_sync(c, &failed, timeout) == LOST)
        return *lost = 1, RW_OK;
    if (failed) {
        free(counts);
        return rw_fail(RW_ERR_NOMEM, "out of memory for the reference pass's plan");
    }
    counts[0] = pl->n_rounds;
    counts[1] = pl->n_pairs;
    counts[2] = pl->n_sizes;
    if (rw_timed_bcast(counts, 3, MPI_INT, 0, c, timeout) != 0)
        return *lost = 1, RW_OK;
    int nr = counts[0], np = counts[1], ns = counts[2];
    free(counts);
    if (nr == 0)
        return RW_OK;
    if (me != 0) {
        pl->n_rounds = nr;
        pl->n_pairs = np;
        pl->n_sizes = ns;
        pl->start = malloc((size_t)(nr + 1) * sizeof *pl->start);
        pl->a = malloc((size_t)(np + 1) * sizeof *pl->a);
        pl->b = malloc((size_t)(np + 1) * sizeof *pl->b);
        pl->size = malloc((size_t)(ns + 1) * sizeof *pl->size);
    }
    failed = !(pl->start && pl->a && pl->b && pl->size);
    if (step_sync(c, &failed, timeout) == LOST)
        return *lost = 1, RW_OK;
    if (failed)
        return rw_fail(RW_ERR_NOMEM, "out of memory for the reference pass's plan");
    if (rw_timed_bcast(pl->start, nr + 1, MPI_INT, 0, c, timeout) != 0 ||
        rw_timed_bcast(pl->a, np, MPI_INT, 0, c, timeout) != 0 ||
        rw_timed_bcast(pl->b, np, MPI_INT, 0, c, timeout) != 0 ||
        rw_timed_bcast(pl->size, ns, MPI_INT, 0, c, timeout) != 0)
        return *lost = 1, RW_OK;
    return RW_OK;
}

/* One direction of a pair, size by size: the initiator keeps the median
 * round trip per size in res[s]. Returns -1 when the peer did not answer. */
static int one_way(MPI_Comm c, int me, int from, int to, const plan *pl, const int64_t *sizes, int reps,
                   int warmup, char *buf, double *samples, double *res, double timeout)
{
    for (int q = 0; q < pl->n_sizes; q++) {
        int64_t size = sizes[pl->size[q]];
        for (int k = -warmup; k < reps; k++) {
            if (me == from) {
                double t = rw_ping(c, to, buf, size, timeout);
                if (t < 0)
                    return -1;
                if (k >= 0)
                    samples[k] = t;
            } else if (rw_pong(c, from, buf, size, timeout) != 0)
                return -1;
        }
        if (me == from) {
            rw_stat st;
            rw_stat_from_rounds(samples, 1, reps, &st);
            res[q] = st.count > 0 ? st.median : 0;
        }
    }
    return 0;
}

/* Rank 0: 1 / slope of the round trips over the sizes timed, 0 unknown. */
static double ref_bw(const rw_model *m, const plan *pl, const double *rtt)
{
    double x[pl->n_sizes], y[pl->n_sizes], alpha, beta;
    int k = 0;
    for (int q = 0; q < pl->n_sizes; q++)
        if (rtt[q] > 0) {
            x[k] = (double)m->sizes[pl->size[q]];
            y[k++] = rtt[q];
        }
    if (k < 1)
        return 0;
    if (k == 1) /* one size: the small sizes' latency off it */
        return y[0] > 0 ? x[0] / y[0] : 0;
    if (rw_fit_hockney(x, y, k, &alpha, &beta) != RW_OK || !(beta > 0))
        return 0;
    return 1.0 / beta;
}

/* Rank 0: how far a block's samples may differ and still be one route:
 * AGREE, or on a stack whose small round trips are noise (a loaded real
 * one, rw_model_latency_noisy) the median spread of the pairs' round trips
 * at the largest size timed (lone cross-rack pairs of an emulated cluster:
 * 89-100 Mbit/s through a 100 Mbit/s uplink, 12 % apart). Under SMPI round
 * trips of the smallest size do not spread and AGREE stays. */
static double agreement(const rw_model *m, const plan *pl, double *tmp)
{
    if (rw_model_latency_noisy(m) != 1 || pl->n_sizes < 1)
        return AGREE;
    int n = m->n_nodes, s = pl->size[pl->n_sizes - 1];
    size_t k = 0;
    for (int p = 0; p < n * n; p++) {
        const rw_stat *st = &m->pair_stats[(size_t)p * m->n_sizes + s];
        if (p / n != p % n && m->pair_state[p] == RW_PAIR_MEASURED && st->count > 0 && isfinite(st->jitter))
            tmp[k++] = st->jitter;
    }
    return k ? fmax(AGREE, 1 + rw_median(tmp, k)) : AGREE;
}

/* Rank 0: the lone-pair bandwidths from the references; rewrites pairs. */
static rw_status apply(rw_model *m, const int32_t *of, int G, const plan *pl, const double *res, int *raised,
                       double *gain)
{
    int n = m->n_nodes, ns = pl->n_sizes;
    double *out = malloc((size_t)n * sizeof *out), *in = malloc((size_t)n * sizeof *in);
    double *ref = malloc((size_t)G * G * sizeof *ref), *low = malloc((size_t)G * G * sizeof *low);
    double *gains = malloc((size_t)n * n * sizeof *gains);
    int *samples = calloc((size_t)G * G, sizeof *samples);
    if (!out || !in || !ref || !low || !gains || !samples) {
        free(out);
        free(in);
        free(ref);
        free(low);
        free(gains);
        free(samples);
        return rw_fail(RW_ERR_NOMEM, "out of memory for the reference pass");
    }
    nic_from_groups(m, of, out, in);
    for (int i = 0; i < n; i++)
        m->group_of[i] = of[i]; /* what the references were taken over */
    for (int k = 0; k < G * G; k++)
        ref[k] = 0, low[k] = INFINITY;
    for (int p = 0; p < pl->n_pairs; p++)
        for (int d = 0; d < 2; d++) {
            int i = d ? pl->b[p] : pl->a[p], j = d ? pl->a[p] : pl->b[p];
            double bw = ref_bw(m, pl, res + ((size_t)p * 2 + d) * ns);
            if (!(bw > 0) || bw > RW_MODEL_MAX_BANDWIDTH)
                continue;
            int k = of[i] * G + of[j];
            ref[k] = fmax(ref[k], bw);
            low[k] = fmin(low[k], bw);
            samples[k]++;
            out[i] = fmax(out[i], bw);
            in[j] = fmax(in[j], bw);
        }
    double agree = agreement(m, pl, gains);
    int count = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            size_t p = (size_t)i * n + j;
            if (i == j || of[i] == of[j] || of[i] < 0 || of[j] < 0 || m->pair_state[p] != RW_PAIR_MEASURED)
                continue;
            /* A block is one route only when its samples (different node
             * pairs) agree: on a torus or a dragonfly pairs of two groups
             * may take routes of different rates, and one sample's rate is
             * not the others'. */
            int k = of[i] * G + of[j];
            double r = ref[k], bw = pair_bw(m, i, j);
            if (samples[k] < MIN_SAMPLES || r > agree * low[k] || !(r > 0) || !(bw > 0))
                continue;
            double lone = fmin(r, fmin(out[i] > 0 ? out[i] : INFINITY, in[j] > 0 ? in[j] : INFINITY));
            if (!(lone > RAISE * bw))
                continue;
            gains[count++] = rw_model_rewrite_pair(m, p, lone);
        }
    if (count) {
        qsort(gains, (size_t)count, sizeof *gains, cmp_double);
        *gain = gains[count / 2];
    }
    *raised = count;
    free(out);
    free(in);
    free(ref);
    free(low);
    free(gains);
    free(samples);
    return RW_OK;
}

rw_status rw_reference_run(MPI_Comm c, rw_model *m, const int64_t *sizes, int reps, int warmup, int max_rounds,
                           double timeout)
{
    last_cost = (rw_reference_cost){-1, 0, 0, 0, 0, 0};
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    plan pl = {0};
    int32_t *of = NULL;
    int G = 0;
    rw_status st = RW_OK;
    if (me == 0) {
        of = malloc((size_t)n * sizeof *of);
        if (!of)
            st = rw_fail(RW_ERR_NOMEM, "out of memory for the reference pass");
        else
            G = rw_model_groups(m, of);
        if (!st && G >= 2)
            st = make_plan(m, of, G, max_rounds, &pl);
    }
    int any = st != RW_OK, lost = step_sync(c, &any, timeout) == LOST;
    if (!lost && any) {
        free(of);
        plan_free(&pl);
        return st ? st : rw_fail(RW_ERR_NOMEM, "rank 0 could not plan the reference pass");
    }
    if (!lost && (st = share_plan(c, me, &pl, timeout, &lost)) != RW_OK) {
        free(of);
        plan_free(&pl);
        return st;
    }
    if (lost) {
        last_cost.abandoned = 1; /* the plan stays: a broadcast may write into it */
        free(of);
        return RW_OK;
    }
    if (pl.n_rounds == 0) {
        free(of);
        plan_free(&pl);
        return RW_OK;
    }
    int64_t big = 0;
    for (int q = 0; q < pl.n_sizes; q++)
        big = sizes[pl.size[q]] > big ? sizes[pl.size[q]] : big;
    size_t nres = (size_t)pl.n_pairs * 2 * pl.n_sizes + 1;
    char *buf = rw_payload_alloc((size_t)big + 1);
    double *samples = malloc((size_t)(reps + 1) * sizeof *samples);
    double *res = calloc(nres, sizeof *res), *all = me == 0 ? calloc(nres, sizeof *all) : NULL;
    int failed = !(buf && samples && res && (me != 0 || all));
    lost = step_sync(c, &failed, timeout) == LOST;
    if (!lost && failed)
        st = rw_fail(RW_ERR_NOMEM, "out of memory for the reference pass's buffers");
    double t0 = MPI_Wtime(), w0 = host_seconds();
    for (int r = 0; r < pl.n_rounds && !st && !lost && !failed; r++) {
        for (int p = pl.start[r]; p < pl.start[r + 1] && !failed; p++) {
            if (pl.a[p] != me && pl.b[p] != me)
                continue;
            for (int d = 0; d < 2 && !failed; d++) {
                int from = d ? pl.b[p] : pl.a[p], to = d ? pl.a[p] : pl.b[p];
                failed = one_way(c, me, from, to, &pl, sizes, reps, warmup, buf, samples,
                                 res + ((size_t)p * 2 + d) * pl.n_sizes, timeout) != 0;
            }
        }
        /* Every leader goes through the same rounds: a failure agreed at a
         * round's end stops them all; its figures are not used. */
        lost = step_sync(c, &failed, timeout) == LOST;
    }
    if (!st && !lost && !failed) {
        double elapsed = MPI_Wtime() - t0, wall = host_seconds() - w0;
        lost = rw_timed_reduce_max(res, all, (int)nres, c, timeout) != 0;
        if (me == 0 && !lost) {
            int raised = 0;
            double gain = 0;
            st = apply(m, of, G, &pl, all, &raised, &gain);
            last_cost = (rw_reference_cost){pl.n_rounds, elapsed, wall, raised, gain, 0};
        }
    }
    free(of);
    if (lost) {
        /* Given up on a node: what is pending may still write into the
         * buffers and the plan, which therefore stay allocated. */
        last_cost = (rw_reference_cost){-1, 0, 0, 0, 0, 1};
        return st;
    }
    rw_payload_free(buf);
    free(samples);
    free(res);
    free(all);
    plan_free(&pl);
    return st;
}
