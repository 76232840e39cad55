/* The capacity stress test (docs/concepts/model.md, "Shared-link
 * capacity"). Ping-pong sees one flow at a time; a rack uplink or a NIC
 * shows its capacity only when many flows share it. Rank 0 plans phases of
 * simultaneous large transfers from the groups of the measured model, every
 * leader runs them, and rank 0 infers from their aggregate rates:
 *   nic    one node sends to (receives from) FAN group mates at once;
 *   duplex one node sends to and receives from its mates at once: whether
 *          its two directions share the NIC;
 *   up-A   every node of A sends out of A at once (receivers spread over the
 *          other groups, so that no down link sees as many flows);
 *   down-A every node of A receives from outside at once;
 *   path   A -> B node by node (3 groups or more: with 2 it is up-A; both of
 *          two nodes or more);
 *   core   every node sends to another group at once;
 *   pod-up-P / pod-down-P  every node of pod P (rw_model_pods) sends out
 *          of P (receives from outside) at once.
 * A link is kept only when its phase ran clearly (10 %) below what the
 * flows would carry without it: the node caps and the links found before,
 * shared max-min fairly (expected_rate). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "stress.h"
#include "payload.h"
#include "pingpong.h"

#define STRESS_BYTES (4 << 20) /* per flow: 4 MiB makes latency < 1 % of it */
#define STRESS_REPS 3           /* repetitions of a phase; the median counts */
#define PIECES 8                /* a flow is sent in pieces... */
#define PIECE (STRESS_BYTES / PIECES)
#define IN_FLIGHT 2             /* ...this many at a time (<= PIECES) */
#define T_AT(f, r, p) (((size_t)(f) * STRESS_REPS + (r)) * PIECES + (p))
#define FAN 4                   /* peers of a node in its nic phases */
#define LIMITED 0.9             /* below this share of the expected rate: a limit */
#define REVISITS 3              /* more readings of every up/down phase, spread over the test */
#define VARIES 1.5              /* readings at separate times this far apart (high / low)... */
#define VARY_NOISE 3.0          /* ...and beyond this many times the typical link's noise: its load varies */
#define RAISE 1.02              /* raise a pair only when its bound is this much faster */

enum { PH_INJECT, PH_EJECT, PH_UP, PH_DOWN, PH_PATH, PH_CORE, PH_POD_UP, PH_POD_DOWN, PH_DUPLEX };

/* The phases read again at separate times (add_revisits, add_spreads). */
static int revisited(int kind) { return kind == PH_UP || kind == PH_DOWN || kind == PH_POD_UP || kind == PH_POD_DOWN; }

typedef struct phase {
    int kind, a, b; /* a: group (up, down, path), pod (pod up, down) or rank in the group (duplex); b: group (path) */
    int first, count; /* its flows in the flow list */
    int time;         /* 0: the reading links come from; 1..REVISITS: a later one */
} phase;

typedef struct plan {
    int n_phases, n_flows;
    phase *phases;
    int *src, *dst; /* flows */
    int cap_phases, cap_flows;
} plan;

static void plan_free(plan *pl)
{
    free(pl->phases);
    free(pl->src);
    free(pl->dst);
    memset(pl, 0, sizeof *pl);
}

static int begin_phase(plan *pl, int kind, int a, int b)
{
    if (pl->n_phases == pl->cap_phases) {
        int cap = pl->cap_phases ? 2 * pl->cap_phases : 16;
        phase *p = realloc(pl->phases, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        pl->phases = p;
        pl->cap_phases = cap;
    }
    pl->phases[pl->n_phases++] = (phase){kind, a, b, pl->n_flows, 0, 0};
    return 0;
}

static int add_flow(plan *pl, int s, int d)
{
    if (pl->n_flows == pl->cap_flows) {
        int cap = pl->cap_flows ? 2 * pl->cap_flows : 64;
        int *a = realloc(pl->src, (size_t)cap * sizeof *a);
        if (a)
            pl->src = a;
        int *b = a ? realloc(pl->dst, (size_t)cap * sizeof *b) : NULL;
        if (!b)
            return -1;
        pl->dst = b;
        pl->cap_flows = cap;
    }
    pl->src[pl->n_flows] = s;
    pl->dst[pl->n_flows++] = d;
    pl->phases[pl->n_phases - 1].count++;
    return 0;
}

/* Single-flow bandwidth of i -> j from the ping-pong fit, 0 when unknown. */
static double pair_bw(const rw_model *m, int i, int j)
{
    size_t p = (size_t)i * m->n_nodes + j;
    if (i == j || m->pair_state[p] != RW_PAIR_MEASURED || !(m->beta[p] > 0))
        return 0;
    return 1.0 / m->beta[p];
}

typedef struct groups {
    int n, g;
    int *of, *size, *start, *members; /* members grouped, ascending node index */
    int pods, *pod_of;                /* pod of each group (rw_model_pods) */
} groups;

static void groups_free(groups *gr)
{
    free(gr->of);
    free(gr->size);
    free(gr->start);
    free(gr->members);
    free(gr->pod_of);
}

/* The pods of the groups (rw_model_pods); pods = 0 when there are none
 * (no pod link to tell from the racks'). */
static rw_status find_pods(const rw_model *m, groups *gr)
{
    int32_t *of32 = malloc((size_t)gr->n * sizeof *of32), *pod32 = malloc((size_t)gr->g * sizeof *pod32);
    gr->pod_of = malloc((size_t)gr->g * sizeof *gr->pod_of);
    int pods = of32 && pod32 && gr->pod_of ? 0 : -1;
    for (int i = 0; i < gr->n && pods == 0; i++)
        of32[i] = gr->of[i];
    if (pods == 0)
        pods = rw_model_pods(m, of32, gr->g, pod32);
    for (int g = 0; g < gr->g && pods > 0; g++)
        gr->pod_of[g] = pod32[g];
    gr->pods = pods > 0 && pods < gr->g ? pods : 0;
    free(of32);
    free(pod32);
    return pods < 0 ? rw_fail(RW_ERR_NOMEM, "out of memory") : RW_OK;
}

static rw_status find_groups(const rw_model *m, groups *gr)
{
    int n = m->n_nodes;
    memset(gr, 0, sizeof *gr);
    gr->n = n;
    gr->of = malloc((size_t)n * sizeof *gr->of);
    gr->members = malloc((size_t)n * sizeof *gr->members);
    if (!gr->of || !gr->members)
        return rw_fail(RW_ERR_NOMEM, "out of memory");
    int32_t *of32 = malloc((size_t)n * sizeof *of32);
    if (!of32)
        return rw_fail(RW_ERR_NOMEM, "out of memory");
    int g = rw_model_groups(m, of32);
    if (g < 1) { /* no usable figures: one group, nic phases only */
        g = 1;
        for (int i = 0; i < n; i++)
            of32[i] = 0;
    }
    for (int i = 0; i < n; i++)
        gr->of[i] = of32[i];
    free(of32);
    gr->g = g;
    gr->size = calloc((size_t)g, sizeof *gr->size);
    gr->start = calloc((size_t)g + 1, sizeof *gr->start);
    if (!gr->size || !gr->start)
        return rw_fail(RW_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++)
        gr->size[gr->of[i]]++;
    for (int k = 0; k < g; k++)
        gr->start[k + 1] = gr->start[k] + gr->size[k];
    int fill[g];
    memset(fill, 0, sizeof fill);
    for (int i = 0; i < n; i++)
        gr->members[gr->start[gr->of[i]] + fill[gr->of[i]]++] = i;
    return find_pods(m, gr);
}

/* Nodes outside group a, dealt from each other group in turn, so that the
 * first k of them spread evenly over the other groups. */
static int others_interleaved(const groups *gr, int a, int *out)
{
    int k = 0;
    for (int r = 0; r < gr->n; r++)
        for (int g = 0; g < gr->g; g++)
            if (g != a && r < gr->size[g])
                out[k++] = gr->members[gr->start[g] + r];
    return k;
}

/* How steady pair i -> j was: minus the jitter of its largest size (a
 * mate whose link varies over time would make the phase read its moment). */
static double steadiness(const rw_model *m, int i, int j)
{
    double jit = m->pair_stats[((size_t)i * m->n_nodes + j) * m->n_sizes + m->n_sizes - 1].jitter;
    return isnan(jit) ? -1e300 : -jit;
}

/* Up to FAN mates of node v (towards them when out, from them otherwise):
 * among those with at least half the best single-flow bandwidth (a slow
 * mate would set the pace), the steadiest. */
static int best_mates(const rw_model *m, const groups *gr, int v, int out, int *mates)
{
    int g = gr->of[v], k = 0;
    const int *mem = gr->members + gr->start[g];
    double best[FAN], top = 0;
    for (int q = 0; q < gr->size[g]; q++)
        if (mem[q] != v)
            top = fmax(top, out ? pair_bw(m, v, mem[q]) : pair_bw(m, mem[q], v));
    for (int q = 0; q < gr->size[g]; q++) {
        int u = mem[q];
        if (u == v)
            continue;
        double bw = out ? pair_bw(m, v, u) : pair_bw(m, u, v);
        if (bw < 0.5 * top)
            continue;
        double score = out ? steadiness(m, v, u) : steadiness(m, u, v);
        int pos = k < FAN ? k++ : FAN;
        while (pos > 0 && best[pos - 1] < score) {
            if (pos < FAN) {
                best[pos] = best[pos - 1];
                mates[pos] = mates[pos - 1];
            }
            pos--;
        }
        if (pos < FAN) {
            best[pos] = score;
            mates[pos] = u;
        }
    }
    return k;
}

/* A link whose load varies over time reads differently at different
 * moments; a slow one reads low every time. So every up/down phase is run
 * again REVISITS times, as blocks spread over the test: of the points 0,
 * 1/R, ..., 1 of the plan (R = REVISITS), all but the one nearest the
 * first reading. The blocks' phases are appended, then the phase list is
 * put in running order (flows stay where they are). */
static int add_revisits(plan *pl)
{
    int base = pl->n_phases, main_at = -1, per = 0;
    for (int q = 0; q < base; q++)
        if (revisited(pl->phases[q].kind)) {
            main_at = main_at < 0 ? q : main_at;
            per++;
        }
    if (per == 0)
        return 0;
    for (int r = 1; r <= REVISITS; r++)
        for (int q = 0; q < base; q++) {
            phase ph = pl->phases[q]; /* a copy: begin_phase may move the array */
            if (!revisited(ph.kind))
                continue;
            if (begin_phase(pl, ph.kind, ph.a, ph.b))
                return -1;
            pl->phases[pl->n_phases - 1].time = r;
            for (int f = ph.first; f < ph.first + ph.count; f++)
                if (add_flow(pl, pl->src[f], pl->dst[f]))
                    return -1;
        }
    int at[REVISITS + 1], drop = 0;
    for (int r = 0; r <= REVISITS; r++) {
        at[r] = (int)((long)r * base / REVISITS);
        if (abs(at[r] - main_at) < abs(at[drop] - main_at))
            drop = r;
    }
    phase *order = malloc((size_t)pl->n_phases * sizeof *order);
    if (!order)
        return -1;
    int k = 0, block = 0;
    for (int q = 0; q <= base; q++) {
        for (int r = 0; r <= REVISITS; r++)
            if (r != drop && at[r] == q) {
                memcpy(order + k, pl->phases + base + block * per, (size_t)per * sizeof *order);
                k += per;
                block++;
            }
        if (q < base)
            order[k++] = pl->phases[q];
    }
    memcpy(pl->phases, order, (size_t)k * sizeof *order);
    free(order);
    return 0;
}

/* Nodes of the groups in pod p (in: 1) or outside it (in: 0), dealt from
 * each group in turn, as others_interleaved. */
static int pod_interleaved(const groups *gr, int p, int in, int *out)
{
    int k = 0;
    for (int r = 0; r < gr->n; r++)
        for (int g = 0; g < gr->g; g++)
            if ((gr->pod_of[g] == p) == in && r < gr->size[g])
                out[k++] = gr->members[gr->start[g] + r];
    return k;
}

/* pod-up-P: every node of pod P sends out of it at once, the receivers
 * dealt over the other pods' groups (so that no rack's down link takes
 * more than its share); pod-down-P: the reverse. Pods of two groups or
 * more only: a pod of one group is its rack. others: room for n nodes. */
static int plan_pods(const groups *gr, plan *pl, int *others)
{
    int *mine = malloc((size_t)gr->n * sizeof *mine), bad = !mine;
    for (int p = 0; p < gr->pods && !bad; p++) {
        int k_in = pod_interleaved(gr, p, 1, mine), k_out = pod_interleaved(gr, p, 0, others), wide = 0;
        for (int g = 0; g < gr->g; g++)
            wide += gr->pod_of[g] == p;
        if (wide < 2 || k_out == 0)
            continue;
        bad |= begin_phase(pl, PH_POD_UP, p, -1);
        for (int q = 0; q < k_in && !bad; q++)
            bad |= add_flow(pl, mine[q], others[q % k_out]);
        bad |= bad || begin_phase(pl, PH_POD_DOWN, p, -1);
        for (int q = 0; q < k_in && !bad; q++)
            bad |= add_flow(pl, others[q % k_out], mine[q]);
    }
    free(mine);
    return bad ? -1 : 0;
}

/* A nic phase (inject, eject or duplex): the t-th node of every group of
 * two or more sends to its best mates (inject), receives from them (eject)
 * or both at once (duplex). */
static int plan_nic_phase(const rw_model *m, const groups *gr, plan *pl, int kind, int t)
{
    int mates[FAN];
    if (begin_phase(pl, kind, t, -1))
        return -1;
    for (int g = 0; g < gr->g; g++) {
        if (t >= gr->size[g] || gr->size[g] < 2)
            continue;
        int v = gr->members[gr->start[g] + t];
        for (int out = 1; out >= 0; out--) {
            if ((kind == PH_INJECT && !out) || (kind == PH_EJECT && out))
                continue;
            int k = best_mates(m, gr, v, out, mates);
            for (int q = 0; q < k; q++)
                if (out ? add_flow(pl, v, mates[q]) : add_flow(pl, mates[q], v))
                    return -1;
        }
    }
    return 0;
}

static rw_status make_plan(const rw_model *m, const groups *gr, plan *pl)
{
    int n = gr->n, G = gr->g, maxg = 0;
    int *others = malloc((size_t)n * sizeof *others);
    if (!others)
        return rw_fail(RW_ERR_NOMEM, "out of memory");
    int bad = 0;
    for (int g = 0; g < G; g++)
        maxg = gr->size[g] > maxg ? gr->size[g] : maxg;
    /* nic: in phase t the t-th node of every group, inside its group (no
     * shared link crossed, groups side by side): its mates' flows out, then
     * in; at the end of the test, both at once (after the revisits, so
     * that the other phases keep their moments). */
    for (int t = 0; t < maxg && !bad; t++)
        for (int kind = PH_INJECT; kind <= PH_EJECT && !bad; kind++)
            bad = plan_nic_phase(m, gr, pl, kind, t) != 0;
    for (int a = 0; a < G && G >= 2 && !bad; a++) {
        int k = others_interleaved(gr, a, others);
        const int *mem = gr->members + gr->start[a];
        bad |= begin_phase(pl, PH_UP, a, -1);
        for (int q = 0; q < gr->size[a] && !bad; q++)
            bad |= add_flow(pl, mem[q], others[q % k]);
        bad |= begin_phase(pl, PH_DOWN, a, -1);
        for (int q = 0; q < gr->size[a] && !bad; q++)
            bad |= add_flow(pl, others[q % k], mem[q]);
    }
    bad = bad || plan_pods(gr, pl, others) != 0;
    /* path: A -> B node by node, where both have two nodes or more: one flow
     * is a lone pair, which the ping-pong timed, and fills no link wider than
     * a NIC (a torus's groups are single nodes: G(G-1) phases of one flow). */
    for (int a = 0; a < G && G >= 3 && !bad; a++)
        for (int b = 0; b < G && !bad; b++) {
            int k = gr->size[a] < gr->size[b] ? gr->size[a] : gr->size[b];
            if (a == b || k < 2)
                continue;
            bad |= begin_phase(pl, PH_PATH, a, b);
            for (int q = 0; q < k && !bad; q++)
                bad |= add_flow(pl, gr->members[gr->start[a] + q], gr->members[gr->start[b] + q]);
        }
    if (G >= 3 && !bad) {
        bad |= begin_phase(pl, PH_CORE, -1, -1);
        for (int p = 0; p < n && !bad; p++) { /* members are in group order */
            int s = gr->members[p], d = gr->members[(p + maxg) % n];
            if (gr->of[s] != gr->of[d])
                bad |= add_flow(pl, s, d);
        }
    }
    free(others);
    if (!bad && G >= 2)
        bad = add_revisits(pl) != 0;
    for (int t = 0; t < maxg && !bad; t++)
        bad = plan_nic_phase(m, gr, pl, PH_DUPLEX, t) != 0;
    return bad ? rw_fail(RW_ERR_NOMEM, "out of memory") : RW_OK;
}

/* Waits of the test give up after the probe's timeout, so that a node that
 * stops answering mid-test cannot hang the probe (real MPI; under SMPI they
 * block). What a give-up leaves pending (requests, a collective) may still
 * write into its buffers: they are never freed, and the caller ends the job
 * without MPI_Finalize (rw_stress_last_cost().abandoned). */
enum { SHARED, LOST = -1 };

/* Agree on a flag (max over ranks) at the start of a step: LOST when a rank
 * did not arrive in time (never under SMPI, where waits block). */
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
 * answering (the plan's arrays may then still be written into). */
static rw_status share_plan(MPI_Comm c, int me, plan *pl, double timeout, int *lost)
{
    int *counts = malloc(2 * sizeof *counts); /* outlives an abandoned broadcast */
    int failed = !counts;
    if (step_sync(c, &failed, timeout) == LOST)
        return *lost = 1, RW_OK;
    if (failed) {
        free(counts);
        return rw_fail(RW_ERR_NOMEM, "out of memory for the stress test's plan");
    }
    counts[0] = pl->n_phases;
    counts[1] = pl->n_flows;
    if (rw_timed_bcast(counts, 2, MPI_INT, 0, c, timeout) != 0)
        return *lost = 1, RW_OK;
    if (me != 0) {
        pl->n_phases = counts[0];
        pl->n_flows = counts[1];
        pl->phases = malloc((size_t)(counts[0] + 1) * sizeof *pl->phases);
        pl->src = malloc((size_t)(counts[1] + 1) * sizeof *pl->src);
        pl->dst = malloc((size_t)(counts[1] + 1) * sizeof *pl->dst);
    }
    failed = !(pl->phases && pl->src && pl->dst);
    int n_phases = counts[0], n_flows = counts[1];
    free(counts);
    if (step_sync(c, &failed, timeout) == LOST)
        return *lost = 1, RW_OK;
    if (failed)
        return rw_fail(RW_ERR_NOMEM, "out of memory for the stress test's plan");
    if (rw_timed_bcast(pl->phases, (int)(n_phases * (sizeof *pl->phases / sizeof(int))), MPI_INT, 0, c,
                       timeout) != 0 ||
        rw_timed_bcast(pl->src, n_flows, MPI_INT, 0, c, timeout) != 0 ||
        rw_timed_bcast(pl->dst, n_flows, MPI_INT, 0, c, timeout) != 0)
        return *lost = 1, RW_OK;
    return RW_OK;
}

#define STRESS_TAG 7330

/* One repetition r of a phase. Each flow is sent in PIECES pieces, at most
 * IN_FLIGHT at a time (pieces sent all at once would share the flow's
 * bandwidth and end together); its receiver notes when each piece arrived,
 * in seconds from the common start, at t[T_AT(flow, r, piece)]: the flow's
 * progress over time, not only its end (phase_rate). *failed is set when
 * its flows did not end within the timeout; LOST when a leader did not
 * come to the start. req and slot hold max_req entries (stress_requests). */
static int run_phase(MPI_Comm c, int me, const plan *pl, const phase *ph, int r, char *sbuf, char *rbuf,
                     MPI_Request *req, int *slot, double *t, double timeout, int *failed)
{
#ifdef RW_SMPI
    /* Flows never fail under SMPI: the phase starts at a barrier, whose
     * simulated time the capacity figures were measured with. */
    (void)timeout;
    MPI_Barrier(c);
#else
    if (step_sync(c, failed, timeout) == LOST)
        return LOST;
    if (*failed)
        return SHARED;
#endif
    int nr = 0, ns = 0;
    double t0 = MPI_Wtime();
    /* Receives: every piece posted at once (they match in order); slot
     * holds flow * PIECES + piece. Sends: IN_FLIGHT slots per outgoing
     * flow k; slot holds k, which goes to rank to[k] and has sent[k]
     * pieces. */
    for (int f = ph->first; f < ph->first + ph->count; f++)
        if (pl->dst[f] == me) {
            for (int p = 0; p < PIECES; p++) {
                MPI_Irecv(rbuf + (size_t)nr * STRESS_BYTES + (size_t)p * PIECE, PIECE, MPI_BYTE, pl->src[f],
                          STRESS_TAG, c, &req[nr * PIECES + p]);
                slot[nr * PIECES + p] = f * PIECES + p;
            }
            nr++;
        }
    int base = nr * PIECES, out = ph->count > 0 ? ph->count : 1, sent[out], to[out];
    for (int f = ph->first; f < ph->first + ph->count; f++)
        if (pl->src[f] == me) {
            sent[ns] = 0;
            to[ns] = pl->dst[f];
            for (int k = 0; k < IN_FLIGHT; k++) {
                int at = base + ns * IN_FLIGHT + k;
                slot[at] = ns;
                MPI_Isend(sbuf + (size_t)sent[ns]++ * PIECE, PIECE, MPI_BYTE, to[ns], STRESS_TAG, c, &req[at]);
            }
            ns++;
        }
    int total = base + ns * IN_FLIGHT, pending = nr * PIECES + ns * PIECES;
#ifndef RW_SMPI
    double deadline = t0 + timeout;
#endif
    while (pending > 0) {
        int which = MPI_UNDEFINED;
#ifdef RW_SMPI
        MPI_Waitany(total, req, &which, MPI_STATUS_IGNORE);
#else
        for (int flag = 0; !flag && MPI_Wtime() <= deadline;)
            MPI_Testany(total, req, &which, &flag, MPI_STATUS_IGNORE);
#endif
        if (which == MPI_UNDEFINED) {
            for (int q = 0; q < base; q++)
                if (req[q] != MPI_REQUEST_NULL)
                    MPI_Cancel(&req[q]);
            rw_abandon(req, total);
            *failed = 1;
            return SHARED;
        }
        pending--;
        if (which < base) {
            int f = slot[which] / PIECES, p = slot[which] % PIECES;
            t[T_AT(f, r, p)] = MPI_Wtime() - t0;
        } else {
            int k = slot[which];
            if (sent[k] < PIECES)
                MPI_Isend(sbuf + (size_t)sent[k]++ * PIECE, PIECE, MPI_BYTE, to[k], STRESS_TAG, c, &req[which]);
        }
    }
    return SHARED;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* What a phase's flows carried while all of them ran: from the common
 * start to the first flow's end, every flow's bytes by then over that
 * time. times holds nf flows' PIECES arrival times each; a piece is under
 * way from the arrival of the one IN_FLIGHT before it (its sender then sent
 * it) to its own arrival. While every flow runs, a bottleneck they share is
 * full: this is its rate, however unequally they share it (by latency, as
 * TCP and SimGrid share) and wherever else a flow is held back (a slow NIC
 * carries what it carried). A sum of the flows' own average rates reads
 * high where the first to end leave the link to the rest (10-14 % on
 * three-level trees, up to 45 % on nic caps); bytes by each end read low
 * once the link is no longer full. The start's latency counts against the
 * window (-2 % at 4 MiB per flow); from each flow's first piece on instead,
 * the pieces' interpolation reads unequal shares high (+6-9 %). */
static double window_rate(int nf, const double *times)
{
    double cut = INFINITY;
    for (int f = 0; f < nf; f++) {
        double end = 0;
        for (int p = 0; p < PIECES; p++) {
            if (!(times[f * PIECES + p] > 0))
                return NAN;
            end = fmax(end, times[f * PIECES + p]);
        }
        cut = fmin(cut, end);
    }
    double bytes = 0;
    for (int f = 0; f < nf; f++) {
        double at[PIECES];
        memcpy(at, times + f * PIECES, PIECES * sizeof *at);
        qsort(at, PIECES, sizeof *at, cmp_double);
        /* A piece is under way from the arrival of the one IN_FLIGHT
         * before it (its sender then sent it) to its own arrival. */
        for (int p = 0; p < PIECES; p++) {
            double from = p >= IN_FLIGHT ? at[p - IN_FLIGHT] : 0;
            bytes += PIECE * (at[p] <= cut ? 1 : at[p] > from ? fmax(cut - from, 0) / (at[p] - from) : 0);
        }
    }
    return cut > 0 ? bytes / cut : NAN;
}

/* What phase q carried (window_rate) in each repetition, sorted into
 * rate[STRESS_REPS]; the median over repetitions is returned. t holds the
 * arrival times of every piece of every flow of the plan (T_AT). src/dst
 * >= 0: only the flows from/to that node; src == dst >= 0: the flows from
 * or to that node. */
static double phase_reps(const plan *pl, int q, const double *t, int src, int dst, double *rate)
{
    const phase *ph = &pl->phases[q];
    int cap = ph->count > 0 ? ph->count : 1;
    double *times = malloc((size_t)cap * PIECES * sizeof *times);
    int flows = 0;
    for (int r = 0; r < STRESS_REPS; r++)
        rate[r] = NAN;
    if (!times)
        return NAN;
    for (int r = 0; r < STRESS_REPS; r++) {
        flows = 0;
        for (int f = ph->first; f < ph->first + ph->count; f++) {
            int touch = src >= 0 && src == dst && (pl->src[f] == src || pl->dst[f] == src);
            if (!touch && ((src >= 0 && pl->src[f] != src) || (dst >= 0 && pl->dst[f] != dst)))
                continue;
            memcpy(times + (size_t)flows++ * PIECES, t + T_AT(f, r, 0), PIECES * sizeof *times);
        }
        rate[r] = flows > 0 ? window_rate(flows, times) : NAN;
    }
    free(times);
    qsort(rate, STRESS_REPS, sizeof *rate, cmp_double);
    return flows > 0 ? rate[STRESS_REPS / 2] : NAN;
}

static double phase_rate_of(const plan *pl, int q, const double *t, int src, int dst)
{
    double rate[STRESS_REPS];
    return phase_reps(pl, q, t, src, dst, rate);
}

static double phase_rate(const plan *pl, int q, const double *t) { return phase_rate_of(pl, q, t, -1, -1); }

/* What one flow of a phase carries alone: IN_FLIGHT pieces under way at a
 * time, each paying the pair's latency before its bytes, so at most
 * IN_FLIGHT * PIECE bytes per alpha + IN_FLIGHT * PIECE * beta of the
 * pair's fit (the large-message one from the knee). Far below the pair's
 * bandwidth where the latency is long (a degraded NIC, a slow uplink's
 * route: 20 us against 84 us of bytes reads 80 %), which a phase through
 * such pairs would otherwise put on a link. INFINITY when unknown. */
static double lone_pace(const rw_model *m, int s, int d)
{
    size_t p = (size_t)s * m->n_nodes + d;
    double a = m->alpha[p], b = m->beta[p], w = (double)IN_FLIGHT * PIECE;
    if (m->knee > 0 && PIECE >= m->knee && isfinite(m->alpha_large[p]) && isfinite(m->beta_large[p]))
        a = m->alpha_large[p], b = m->beta_large[p];
    if (m->pair_state[p] != RW_PAIR_MEASURED || !(a >= 0) || !(b > 0))
        return INFINITY;
    return w / (a + w * b);
}

/* What phase_rate would read for the flows of a phase if the only limits
 * were each node's nic (as its nic phases found, else its best pair) and
 * the up/down links in cap_up/cap_down (per group, NAN none), the paths
 * in cap_path (per ordered pair of groups, a * G + b) and the pods' links
 * in cap_pod_up/cap_pod_down (per pod; NULL: none), each node's
 * duplex cap where its duplex phase found one, and each flow's own pace
 * (lone_pace): the flows share
 * them max-min fairly (progressive filling), and what they carry while all
 * run is the sum of their rates. Comparing with this, not with a plain sum
 * of caps, keeps flows of unequal bottlenecks from looking like a link of
 * their own. */
static double node_cap(const rw_model *m, int v, int out)
{
    double cap = out ? m->inject[v] : m->eject[v], best = 0;
    if (!isnan(cap))
        return cap;
    for (int j = 0; j < m->n_nodes; j++)
        best = fmax(best, out ? pair_bw(m, v, j) : pair_bw(m, j, v));
    return best;
}

static double expected_with_pods(const rw_model *m, const groups *gr, const plan *pl, const phase *ph,
                                 const double *cap_up, const double *cap_down, const double *cap_path,
                                 const double *cap_pod_up, const double *cap_pod_down)
{
    enum { PER_FLOW = 10 }; /* resources a flow may cross, its own pace last */
    int n = gr->n, G = gr->g, P = gr->pods, nf = ph->count;
    if (nf == 0)
        return NAN;
    /* Resources: every node's out, in and duplex cap (only the phase's
     * are crossed), the groups' up and down links, the pods', one per
     * path the flows cross (of G * G: a torus has a group per node) and
     * each flow's own pace. */
    int dup0 = 2 * n, up0 = 3 * n, down0 = up0 + G, pod0 = down0 + G, path0 = pod0 + 2 * P, own0 = path0 + nf;
    int nres = own0 + nf;
    double *cap = malloc((size_t)nres * sizeof *cap), *used = malloc((size_t)nres * sizeof *used);
    double *rate = malloc((size_t)nf * sizeof *rate);
    int *unfrozen = malloc((size_t)nres * sizeof *unfrozen), *res = malloc((size_t)nf * PER_FLOW * sizeof *res);
    int *key = malloc((size_t)nf * sizeof *key);
    double sum = NAN;
    if (!cap || !used || !rate || !unfrozen || !res || !key)
        goto done;
    for (int r = 0; r < nres; r++)
        cap[r] = INFINITY;
    for (int g = 0; g < G; g++) {
        cap[up0 + g] = cap_up && !isnan(cap_up[g]) ? cap_up[g] : INFINITY;
        cap[down0 + g] = cap_down && !isnan(cap_down[g]) ? cap_down[g] : INFINITY;
    }
    for (int p = 0; p < P; p++) {
        cap[pod0 + p] = cap_pod_up && !isnan(cap_pod_up[p]) ? cap_pod_up[p] : INFINITY;
        cap[pod0 + P + p] = cap_pod_down && !isnan(cap_pod_down[p]) ? cap_pod_down[p] : INFINITY;
    }
    int paths = 0;
    for (int k = 0; k < nf; k++) {
        int s = pl->src[ph->first + k], d = pl->dst[ph->first + k], *r = res + (size_t)k * PER_FLOW;
        int cross = gr->of[s] != gr->of[d];
        cap[s] = node_cap(m, s, 1);
        cap[n + d] = node_cap(m, d, 0);
        cap[dup0 + s] = isnan(m->duplex[s]) ? INFINITY : m->duplex[s];
        cap[dup0 + d] = isnan(m->duplex[d]) ? INFINITY : m->duplex[d];
        r[0] = s;
        r[1] = n + d;
        r[2] = cross ? up0 + gr->of[s] : -1;
        r[3] = cross ? down0 + gr->of[d] : -1;
        r[4] = -1;
        key[k] = gr->of[s] * G + gr->of[d];
        if (cross) {
            int slot = paths;
            for (int j = 0; j < k && slot == paths; j++)
                if (key[j] == key[k] && res[(size_t)j * PER_FLOW + 4] >= 0)
                    slot = res[(size_t)j * PER_FLOW + 4] - path0;
            if (slot == paths)
                cap[path0 + paths++] = cap_path && !isnan(cap_path[key[k]]) ? cap_path[key[k]] : INFINITY;
            r[4] = path0 + slot;
        }
        int ps = P ? gr->pod_of[gr->of[s]] : 0, pd = P ? gr->pod_of[gr->of[d]] : 0;
        r[5] = ps != pd ? pod0 + ps : -1;
        r[6] = ps != pd ? pod0 + P + pd : -1;
        r[7] = dup0 + s;
        r[8] = dup0 + d;
        r[9] = own0 + k;
        cap[own0 + k] = lone_pace(m, s, d);
        rate[k] = -1;
    }
    /* Progressive filling: the resource with the smallest fair share fixes
     * its flows' rate, until every flow has one. */
    for (;;) {
        memset(used, 0, (size_t)nres * sizeof *used);
        memset(unfrozen, 0, (size_t)nres * sizeof *unfrozen);
        for (int k = 0; k < nf; k++)
            for (int x = 0; x < PER_FLOW; x++) {
                int r = res[(size_t)k * PER_FLOW + x];
                if (r >= 0) {
                    if (rate[k] < 0)
                        unfrozen[r]++;
                    else
                        used[r] += rate[k];
                }
            }
        int best = -1;
        double share = INFINITY;
        for (int r = 0; r < nres; r++)
            if (unfrozen[r] && (cap[r] - used[r]) / unfrozen[r] < share)
                share = (cap[r] - used[r]) / unfrozen[r], best = r;
        if (best < 0)
            break;
        if (!(share > 0) || !isfinite(share))
            goto done; /* a cap of 0: no figure to compare with */
        for (int k = 0; k < nf; k++)
            for (int x = 0; x < PER_FLOW; x++)
                if (rate[k] < 0 && res[(size_t)k * PER_FLOW + x] == best)
                    rate[k] = share;
    }
    sum = 0;
    for (int k = 0; k < nf; k++)
        sum += rate[k];
done:
    free(cap);
    free(used);
    free(rate);
    free(unfrozen);
    free(res);
    free(key);
    return sum;
}

static double expected_rate(const rw_model *m, const groups *gr, const plan *pl, const phase *ph,
                            const double *cap_up, const double *cap_down, const double *cap_path)
{
    return expected_with_pods(m, gr, pl, ph, cap_up, cap_down, cap_path, NULL, NULL);
}

static rw_status add_link(rw_model *m, const char *name, double cap, int from, int to)
{
    int32_t f = from, t = to;
    return rw_model_add_link(m, name, cap, from >= 0, &f, to >= 0, &t);
}

/* A phase read at separate times (REVISITS): the lowest, median and highest
 * reading and the median noise (the repetitions' (max - min) / reading at
 * one time). Returns how many times it was read. */
typedef struct readings {
    double low, mid, high, noise;
    int times;
} readings;

static int read_times(const plan *pl, const double *t, int kind, int a, readings *out)
{
    double read[REVISITS + 1], noise[REVISITS + 1], reps[STRESS_REPS];
    int k = 0, kn = 0;
    for (int q = 0; q < pl->n_phases && k <= REVISITS; q++) {
        const phase *ph = &pl->phases[q];
        if (ph->kind != kind || ph->a != a)
            continue;
        double r = phase_reps(pl, q, t, -1, -1, reps);
        if (!(r > 0 && r <= RW_MODEL_MAX_BANDWIDTH))
            continue;
        read[k++] = r;
        if (isfinite(reps[0]) && isfinite(reps[STRESS_REPS - 1]))
            noise[kn++] = (reps[STRESS_REPS - 1] - reps[0]) / r;
    }
    out->times = k;
    if (k == 0)
        return 0;
    qsort(read, (size_t)k, sizeof *read, cmp_double);
    qsort(noise, (size_t)kn, sizeof *noise, cmp_double);
    out->low = read[0];
    out->high = read[k - 1];
    out->mid = k % 2 ? read[k / 2] : (read[k / 2 - 1] + read[k / 2]) / 2;
    out->noise = kn == 0 ? 0 : kn % 2 ? noise[kn / 2] : (noise[kn / 2 - 1] + noise[kn / 2]) / 2;
    return k;
}

/* Whether a link's load varies: its readings at separate times apart by
 * VARIES and by VARY_NOISE times `noise`, the typical link's noise (the
 * median over the up and down links': a loaded real stack's repetitions
 * spread everywhere; a link whose load changes within its own phase spreads
 * alone). The analysis names such links with its own reference
 * (rankwise.model.anomalies, the typical link's spread); here it only keeps
 * a link's moments out of the paths and the pairs. */
static int varies(const readings *r, double noise)
{
    return r->times >= 2 && r->high > VARIES * r->low && r->high - r->low > VARY_NOISE * noise * r->mid;
}

/* Every group's up and down phase (and every pod's) read at separate
 * times (REVISITS): the spread of the readings against their noise (the
 * repetitions' spread at one time) tells a link whose load varies from a
 * slow one (docs/concepts/model.md, "A group's uplink"). The groups' come
 * read already (ru, rd: infer's). */
static rw_status add_spread(rw_model *m, const char *name, const readings *r)
{
    return r->times ? rw_model_add_spread(m, name, r->low, r->mid, r->high, r->noise, r->times) : RW_OK;
}

static rw_status add_spreads(rw_model *m, const groups *gr, const plan *pl, const double *t, const readings *ru,
                             const readings *rd)
{
    char name[64];
    rw_status st = RW_OK;
    for (int g = 0; g < gr->g && gr->g >= 2 && !st; g++)
        for (int up = 1; up >= 0 && !st; up--) {
            snprintf(name, sizeof name, "%s-%d", up ? "up" : "down", g);
            st = add_spread(m, name, up ? &ru[g] : &rd[g]);
        }
    for (int p = 0; p < gr->pods && !st; p++)
        for (int up = 1; up >= 0 && !st; up--) {
            readings r;
            read_times(pl, t, up ? PH_POD_UP : PH_POD_DOWN, p, &r);
            snprintf(name, sizeof name, "pod-%s-%d", up ? "up" : "down", p);
            st = add_spread(m, name, &r);
        }
    return st;
}

/* A pod link: FROM the pod's groups TO the others (up), or the reverse. */
static rw_status add_pod_link(rw_model *m, const groups *gr, int p, int up, double cap)
{
    int32_t in[gr->g], out[gr->g];
    int n_in = 0, n_out = 0;
    for (int g = 0; g < gr->g; g++) {
        if (gr->pod_of[g] == p)
            in[n_in++] = g;
        else
            out[n_out++] = g;
    }
    char name[64];
    snprintf(name, sizeof name, "pod-%s-%d", up ? "up" : "down", p);
    return up ? rw_model_add_link(m, name, cap, n_in, in, n_out, out) : rw_model_add_link(m, name, cap, n_out, out, n_in, in);
}

/* Pod links, after the racks' links and paths: a pod phase's flows cross
 * those, so a pod link is kept only where they (and the node caps) do
 * not explain its phase, by the rule of the rack links. With three pods
 * or more each direction is judged with the other direction's candidates
 * (those below the racks' figure), as up links are with the path
 * candidates: a narrow pod-down of B slows the flows of pod-up-A that go
 * to B. With two, pod-up-A and pod-down-B carry the same flows and no
 * reading tells them apart: both are kept, as a rack's up and down links
 * are between two groups. */
static rw_status infer_pods(rw_model *m, const groups *gr, const plan *pl, const double *t, const double *up,
                            const double *down, const double *path)
{
    int P = gr->pods;
    if (P == 0)
        return RW_OK;
    double cand[2][P], rate[2][P];
    for (int p = 0; p < P; p++)
        cand[0][p] = cand[1][p] = rate[0][p] = rate[1][p] = NAN;
    for (int q = 0; q < pl->n_phases; q++) {
        const phase *ph = &pl->phases[q];
        if ((ph->kind != PH_POD_UP && ph->kind != PH_POD_DOWN) || ph->time != 0)
            continue;
        int d = ph->kind == PH_POD_UP ? 0 : 1;
        rate[d][ph->a] = phase_rate(pl, q, t);
        if (rate[d][ph->a] < LIMITED * expected_rate(m, gr, pl, ph, up, down, path))
            cand[d][ph->a] = rate[d][ph->a];
    }
    rw_status st = RW_OK;
    for (int q = 0; q < pl->n_phases && !st; q++) {
        const phase *ph = &pl->phases[q];
        if ((ph->kind != PH_POD_UP && ph->kind != PH_POD_DOWN) || ph->time != 0)
            continue;
        int d = ph->kind == PH_POD_UP ? 0 : 1;
        double r = rate[d][ph->a];
        if (isnan(cand[d][ph->a]) || !(r > 0 && r <= RW_MODEL_MAX_BANDWIDTH))
            continue;
        int cross = P >= 3;
        double e = expected_with_pods(m, gr, pl, ph, up, down, path, d && cross ? cand[0] : NULL,
                                      !d && cross ? cand[1] : NULL);
        if (r < LIMITED * e)
            st = add_pod_link(m, gr, ph->a, d == 0, r);
    }
    return st;
}

/* Pairs across groups whose route crosses a link whose load varies were
 * measured at one of its moments (and the reference pass took no lone
 * bandwidth for them where its samples, at other moments, disagreed). One
 * measured slower than what a lone flow gets at the link's typical reading
 * (the lowest of that, the links kept on its route and the best pair out
 * of its source and into its destination) is raised to it; never lowered:
 * a group's up and down phases on a torus or a dragonfly mix routes, and
 * their typical reading is no single pair's. Returns how many pairs were
 * raised. */
static int raise_varying(rw_model *m, const groups *gr, const double *up, const double *down, const double *path,
                         const double *up_typical, const double *down_typical)
{
    int n = gr->n, G = gr->g, count = 0;
    double best_out[n], best_in[n];
    for (int i = 0; i < n; i++)
        best_out[i] = best_in[i] = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            best_out[i] = fmax(best_out[i], pair_bw(m, i, j));
            best_in[j] = fmax(best_in[j], pair_bw(m, i, j));
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int a = gr->of[i], b = gr->of[j];
            size_t p = (size_t)i * n + j;
            if (i == j || a == b || m->pair_state[p] != RW_PAIR_MEASURED)
                continue;
            double typical = fmin(isnan(up_typical[a]) ? INFINITY : up_typical[a],
                                  isnan(down_typical[b]) ? INFINITY : down_typical[b]);
            if (!isfinite(typical))
                continue;
            double bound = typical;
            bound = isnan(up[a]) ? bound : fmin(bound, up[a]);
            bound = isnan(down[b]) ? bound : fmin(bound, down[b]);
            bound = isnan(path[a * G + b]) ? bound : fmin(bound, path[a * G + b]);
            bound = fmin(bound, fmin(best_out[i] > 0 ? best_out[i] : INFINITY, best_in[j] > 0 ? best_in[j] : INFINITY));
            double slope = m->knee > 0 && m->beta_large[p] > 0 ? m->beta_large[p] : m->beta[p];
            if (!(slope > 0) || !(bound > RAISE / slope) || bound > RW_MODEL_MAX_BANDWIDTH)
                continue;
            rw_model_rewrite_pair(m, p, bound);
            count++;
        }
    return count;
}

/* Rank 0: nic caps, then links, from the phases' rates. */
static rw_status infer(rw_model *m, const groups *gr, const plan *pl, const double *t, int *raised)
{
    int n = gr->n, G = gr->g;
    double up[G], down[G];
    for (int g = 0; g < G; g++)
        up[g] = down[g] = NAN;
    for (int i = 0; i < n; i++)
        m->group_of[i] = gr->of[i];
    for (int q = 0; q < pl->n_phases; q++) {
        const phase *ph = &pl->phases[q];
        if (ph->kind != PH_INJECT && ph->kind != PH_EJECT)
            continue;
        /* One node per group, each with its own mates: its flows alone. */
        for (int f = ph->first; f < ph->first + ph->count; f++) {
            int v = ph->kind == PH_INJECT ? pl->src[f] : pl->dst[f];
            if (f > ph->first && v == (ph->kind == PH_INJECT ? pl->src[f - 1] : pl->dst[f - 1]))
                continue; /* its flows are consecutive: done */
            double r = ph->kind == PH_INJECT ? phase_rate_of(pl, q, t, v, -1) : phase_rate_of(pl, q, t, -1, v);
            if (r > 0 && r <= RW_MODEL_MAX_BANDWIDTH)
                (ph->kind == PH_INJECT ? m->inject : m->eject)[v] = r;
        }
    }
    /* duplex: the same mates' flows out and in at once; a NIC whose two
     * directions share it carries clearly less than the two apart. */
    for (int q = 0; q < pl->n_phases; q++) {
        const phase *ph = &pl->phases[q];
        for (int g = 0; ph->kind == PH_DUPLEX && g < G; g++) {
            if (ph->a >= gr->size[g] || gr->size[g] < 2)
                continue;
            int v = gr->members[gr->start[g] + ph->a];
            double r = phase_rate_of(pl, q, t, v, v), apart = m->inject[v] + m->eject[v];
            if (r > 0 && r < LIMITED * apart)
                m->duplex[v] = r;
        }
    }
    /* An up phase spreads over every other group, so a slow path from A
     * to one of them slows it too; a path phase crosses A's up link. So:
     * path candidates against the nic caps alone; an up (down) link where
     * the candidates do not explain its phase; a path where the up and down
     * links found do not explain its phase; the core given all of those. */
    double *path = malloc((size_t)G * G * sizeof *path), *cand = malloc((size_t)G * G * sizeof *cand);
    double out_best[G], in_best[G];
    if (!path || !cand) {
        free(path);
        free(cand);
        return rw_fail(RW_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; k < (size_t)G * G; k++)
        path[k] = cand[k] = NAN;
    for (int g = 0; g < G; g++)
        out_best[g] = in_best[g] = 0;
    for (int q = 0; q < pl->n_phases; q++) {
        const phase *ph = &pl->phases[q];
        if (ph->kind != PH_PATH)
            continue;
        double r = phase_rate(pl, q, t);
        if (r < LIMITED * expected_rate(m, gr, pl, ph, NULL, NULL, NULL))
            cand[ph->a * G + ph->b] = r;
        if (r > 0 && r <= RW_MODEL_MAX_BANDWIDTH) {
            out_best[ph->a] = fmax(out_best[ph->a], r);
            in_best[ph->b] = fmax(in_best[ph->b], r);
        }
    }
    /* A group's uplink whose load varies (either direction's readings at
     * separate times: where both directions share one link, as SimGrid's
     * do, a direction read only at good moments still varies; a group of
     * one node, a torus's, has no uplink: its phases are its routes') is
     * judged and kept at each direction's typical (median) reading, which
     * also bounds the pairs through it (raise_varying); it carried anything
     * from its lowest reading up when a path or the core phase crossed it:
     * those are kept only where that lowest does not explain their phase (a
     * moment is not a link). */
    double low[G], up_typical[G], down_typical[G], noises[2 * G + 1];
    readings ru[G], rd[G];
    int k = 0;
    for (int g = 0; g < G; g++) {
        if (read_times(pl, t, PH_UP, g, &ru[g]) > 0)
            noises[k++] = ru[g].noise;
        if (read_times(pl, t, PH_DOWN, g, &rd[g]) > 0)
            noises[k++] = rd[g].noise;
    }
    double noise = k ? rw_median(noises, (size_t)k) : 0;
    for (int g = 0; g < G; g++) {
        int vary = gr->size[g] >= 2 && (varies(&ru[g], noise) || varies(&rd[g], noise));
        low[g] = vary ? fmin(ru[g].times ? ru[g].low : INFINITY, rd[g].times ? rd[g].low : INFINITY) : NAN;
        up_typical[g] = vary && ru[g].times ? ru[g].mid : NAN;
        down_typical[g] = vary && rd[g].times ? rd[g].mid : NAN;
    }
    rw_status st = RW_OK;
    char name[64];
    for (int q = 0; q < pl->n_phases && !st; q++) {
        const phase *ph = &pl->phases[q];
        if ((ph->kind != PH_UP && ph->kind != PH_DOWN) || ph->time != 0)
            continue;
        /* A path phase out of A (into A) crossed A's up (down) link: it
         * carried at least what that phase did. An up or down phase reading
         * clearly less was held back elsewhere, on other groups' routes or
         * by a link that varies, at its moment (a dragonfly's global link).
         * A varying uplink of A's own: its typical reading. */
        double r = phase_rate(pl, q, t), best = (ph->kind == PH_UP ? out_best : in_best)[ph->a];
        double typical = (ph->kind == PH_UP ? up_typical : down_typical)[ph->a];
        if (!isnan(typical))
            r = typical;
        else if (LIMITED * best > r)
            r = best;
        if (!(r < LIMITED * expected_rate(m, gr, pl, ph, NULL, NULL, cand)))
            continue;
        (ph->kind == PH_UP ? up : down)[ph->a] = r;
        snprintf(name, sizeof name, "%s-%d", ph->kind == PH_UP ? "up" : "down", ph->a);
        st = add_link(m, name, r, ph->kind == PH_UP ? ph->a : -1, ph->kind == PH_UP ? -1 : ph->a);
    }
    double up_low[G], down_low[G];
    for (int g = 0; g < G; g++) {
        up_low[g] = fmin(up[g], low[g]); /* fmin: the one known, NAN when neither */
        down_low[g] = fmin(down[g], low[g]);
    }
    for (int q = 0; q < pl->n_phases && !st; q++) {
        const phase *ph = &pl->phases[q];
        if (ph->kind != PH_PATH)
            continue;
        double r = phase_rate(pl, q, t);
        if (!(r < LIMITED * expected_rate(m, gr, pl, ph, up_low, down_low, NULL)))
            continue;
        path[ph->a * G + ph->b] = r;
        snprintf(name, sizeof name, "path-%d-%d", ph->a, ph->b);
        st = add_link(m, name, r, ph->a, ph->b);
    }
    for (int q = 0; q < pl->n_phases && !st; q++) {
        const phase *ph = &pl->phases[q];
        double r = ph->kind == PH_CORE ? phase_rate(pl, q, t) : NAN;
        if (ph->kind == PH_CORE && r < LIMITED * expected_rate(m, gr, pl, ph, up_low, down_low, path))
            st = add_link(m, "core", r, -1, -1);
    }
    st = st ? st : infer_pods(m, gr, pl, t, up, down, path);
    if (!st)
        *raised = raise_varying(m, gr, up, down, path, up_typical, down_typical);
    free(path);
    free(cand);
    return st ? st : add_spreads(m, gr, pl, t, ru, rd);
}

static rw_stress_cost last_cost = {-1, 0, 0, 0};

rw_stress_cost rw_stress_last_cost(void) { return last_cost; }

static rw_status copy_pairs(rw_model *m, const rw_model *base)
{
    int n = m->n_nodes, ns = m->n_sizes;
    if (base->n_sizes != ns || memcmp(base->sizes, m->sizes, (size_t)ns * sizeof *m->sizes) != 0)
        return rw_fail(RW_ERR_ARG, "the model's message sizes differ from the probe's");
    int map[n];
    for (int i = 0; i < n; i++)
        if ((map[i] = rw_model_find_node(base, m->node_names[i])) < 0)
            return rw_fail(RW_ERR_ARG, "node '%s' of this job is not in the model", m->node_names[i]);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            size_t p = (size_t)i * n + j, q = (size_t)map[i] * base->n_nodes + map[j];
            m->pair_state[p] = base->pair_state[q];
            m->alpha[p] = base->alpha[q];
            m->beta[p] = base->beta[q];
            m->alpha_large[p] = base->alpha_large[q];
            m->beta_large[p] = base->beta_large[q];
            m->measured_at[p] = base->measured_at[q];
            memcpy(m->pair_stats + p * ns, base->pair_stats + q * ns, (size_t)ns * sizeof(rw_stat));
        }
    return RW_OK;
}

rw_status rw_stress_run(MPI_Comm c, rw_model *m, const rw_model *base, double timeout)
{
    last_cost = (rw_stress_cost){-1, 0, 0, 0};
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    plan pl = {0};
    groups gr = {0};
    rw_status st = RW_OK;
    if (me == 0) {
        st = base ? copy_pairs(m, base) : RW_OK;
        if (!st)
            st = find_groups(m, &gr);
        if (!st)
            st = make_plan(m, &gr, &pl);
        if (st)
            plan_free(&pl); /* an empty plan tells the others to stop */
    }
    int any = st != RW_OK, lost = step_sync(c, &any, timeout) == LOST;
    if (!lost && any) {
        groups_free(&gr);
        return st ? st : rw_fail(RW_ERR_NOMEM, "rank 0 could not plan the stress test");
    }
    if (!lost && (st = share_plan(c, me, &pl, timeout, &lost)) != RW_OK) {
        plan_free(&pl);
        groups_free(&gr);
        return st;
    }
    if (lost) {
        last_cost.abandoned = 1; /* the plan's arrays stay: a broadcast may write into them */
        groups_free(&gr);
        return RW_OK;
    }
    int max_in = 1, max_req = 1;
    for (int q = 0; q < pl.n_phases; q++) {
        int in = 0, all = 0;
        const phase *ph = &pl.phases[q];
        for (int f = ph->first; f < ph->first + ph->count; f++) {
            in += pl.dst[f] == me;
            all += (pl.dst[f] == me) * PIECES + (pl.src[f] == me) * IN_FLIGHT;
        }
        max_in = in > max_in ? in : max_in;
        max_req = all > max_req ? all : max_req;
    }
    char *sbuf = rw_payload_alloc(STRESS_BYTES), *rbuf = rw_payload_alloc((size_t)max_in * STRESS_BYTES);
    MPI_Request *req = malloc((size_t)max_req * sizeof *req);
    int *slot = malloc((size_t)max_req * sizeof *slot);
    size_t nt = T_AT(pl.n_flows + 1, 0, 0);
    double *mine = calloc(nt, sizeof *mine), *all = me == 0 ? malloc(nt * sizeof *all) : NULL;
    int failed = !(sbuf && rbuf && req && slot && mine && (me != 0 || all));
    lost = step_sync(c, &failed, timeout) == LOST;
    if (!lost && failed)
        st = rw_fail(RW_ERR_NOMEM, "out of memory for the stress test's buffers");
    double t0 = MPI_Wtime();
    /* Every leader goes through the same steps (a failure agreed at a step's
     * start makes the remaining steps empty), so their collectives match. */
    for (int q = 0; q < pl.n_phases && !st && !lost; q++)
        for (int r = 0; r < STRESS_REPS && !lost; r++)
            lost = run_phase(c, me, &pl, &pl.phases[q], r, sbuf, rbuf, req, slot, mine, timeout, &failed) ==
                   LOST;
    /* The last phase's end, and whether every node's flows ended. */
#ifdef RW_SMPI
    if (!st)
        MPI_Barrier(c);
#else
    if (!st && !lost)
        lost = step_sync(c, &failed, timeout) == LOST || failed;
#endif
    if (!st && !lost) {
        double elapsed = MPI_Wtime() - t0;
        /* Each flow's times come from its receiver only: the others' are 0. */
        lost = rw_timed_reduce_max(mine, all, (int)nt, c, timeout) != 0;
        if (me == 0 && !lost) {
            int raised = 0;
            st = infer(m, &gr, &pl, all, &raised);
            last_cost = (rw_stress_cost){pl.n_phases, elapsed, 0, raised};
        }
    }
    groups_free(&gr);
    if (lost) {
        /* Given up on a node: what is pending may still write into the
         * buffers and the plan, which therefore stay allocated. */
        last_cost = (rw_stress_cost){-1, 0, 1, 0};
        return st;
    }
    free(slot);
    rw_payload_free(sbuf);
    rw_payload_free(rbuf);
    free(req);
    free(mine);
    free(all);
    plan_free(&pl);
    return st;
}
