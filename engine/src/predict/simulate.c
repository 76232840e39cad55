/* Event-driven simulation of a schedule: transfers wait for their
 * dependencies, then (eager messages) the sender's overhead o, then alpha,
 * then flow at max-min fair rates that are recomputed whenever a flow
 * starts or ends; an eager message then costs its receiver the receive
 * overhead before it counts as received. A rank's overheads take its CPU
 * one after the other, as SMPI's sleeps take the rank's actor. */
#include "sharing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Events closer than this (relative) are one event: flows of a synchronous
 * step start and end together, and one rate update serves them all. */
#define RW_SIM_TOL 1e-9

typedef struct heap_item {
    double t;
    int64_t k;
} heap_item;

typedef struct heap {
    heap_item *v;
    int64_t n, cap;
} heap;

/* Room for one more item; -1 when out of memory. */
static int heap_room(heap *h)
{
    if (h->n < h->cap)
        return 0;
    int64_t cap = h->cap ? 2 * h->cap : 256;
    heap_item *v = realloc(h->v, (size_t)cap * sizeof *v);
    if (!v)
        return -1;
    h->v = v;
    h->cap = cap;
    return 0;
}

static int heap_push(heap *h, double t, int64_t k)
{
    if (heap_room(h))
        return -1;
    int64_t i = h->n++;
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (h->v[p].t <= t)
            break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i].t = t;
    h->v[i].k = k;
    return 0;
}

/* Append, keeping no order (a heap used as a plain list). */
static int list_append(heap *l, double t, int64_t k)
{
    if (heap_room(l))
        return -1;
    l->v[l->n].t = t;
    l->v[l->n++].k = k;
    return 0;
}

static heap_item heap_pop(heap *h)
{
    heap_item top = h->v[0], last = h->v[--h->n];
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->v[c + 1].t < h->v[c].t)
            c++;
        if (h->v[c].t >= last.t)
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n > 0)
        h->v[i] = last;
    return top;
}

typedef struct sim {
    const rw_pnet *net;
    const rw_sched *s;
    rw_sim_mode mode;
    int64_t *out_start, *out; /* dependents */
    uint8_t *out_sender;      /* 1: this transfer is among that dependent's sender's */
    int32_t *left;            /* dependencies not yet ended */
    double *ready;            /* latest end among dependencies */
    double *ready_src;        /* latest end among the sender's dependencies */
    double *finish;
    heap pending;             /* (time, k): transfer k's flow begins; n <= k < 2 n: transfer
                                 k - n is received (its receive overhead is over); k >= 2 n:
                                 transfer k - 2 n's arrival waits for its rank's CPU */
    /* active flows */
    int64_t n_act, cap_act;
    int64_t *act;
    int32_t *sn, *dn;
    double *rem, *rate, *fcap;
    double *fw; /* per flow: its sharing weight, 1 / the pair's latency (CM02) */
    uint8_t *fixed;
    rw_sharing sh;
    double end;
    int64_t events, updates;
    const double *rank_start; /* or NULL */
    double *rank_end;
    double *cpu_free;  /* per rank: when its last overhead ends */
    double *port_free; /* per rank, contention-free mode: when its last send ends */
    heap rel;          /* a plain list: transfers released at the current event (time ready, k) */
    heap due;          /* a plain list: the event's arrivals awaiting their receive overhead */
    /* Arrivals whose receiver waits for another receive first (wait_after):
     * per transfer j the first k waiting for j's completion, per k the next. */
    int64_t *waiting, *waiting_next;
    double *arrival;   /* when k's bytes arrived, while it waits */
    uint8_t *done;     /* k is complete */
} sim;

static void sim_free(sim *m)
{
    free(m->out_start);
    free(m->out);
    free(m->out_sender);
    free(m->left);
    free(m->ready);
    free(m->ready_src);
    free(m->pending.v);
    free(m->act);
    free(m->sn);
    free(m->dn);
    free(m->rem);
    free(m->rate);
    free(m->fcap);
    free(m->fw);
    free(m->fixed);
    free(m->rank_end);
    free(m->cpu_free);
    free(m->port_free);
    free(m->rel.v);
    free(m->due.v);
    free(m->waiting);
    free(m->waiting_next);
    free(m->arrival);
    free(m->done);
    rw_sharing_free(&m->sh);
}

static rw_status oom(void) { return rw_fail(RW_ERR_NOMEM, "simulation: out of memory"); }

/* Transfer k is ready at time t (every dependency has ended): it waits in
 * a batch until the event's releases are all known (flush_released). */
static rw_status release(sim *m, int64_t k, double t)
{
    return list_append(&m->rel, t, k) ? oom() : RW_OK;
}

/* Schedule the flows of the transfers released at one event. First every
 * eager message takes its sender's overhead on the sender's CPU (from when
 * the sender reached the send, whether or not the receiver is there). Then
 * a flow begins alpha after both sides are ready, the receiver once its
 * CPU is free too: it posts the receive after its own overheads so far (a
 * sendrecv sleeps its send overhead before posting the receive), unless
 * the schedule says the receive was posted in advance. In the
 * contention-free mode a rank's sends also go one after another: each has
 * its pair's full bandwidth, but the sender sends one message at a time. */
static rw_status flush_released(sim *m)
{
    const rw_sched *s = m->s;
    const rw_pnet *net = m->net;
    for (int64_t i = 0; i < m->rel.n; i++) {
        int64_t k = m->rel.v[i].k;
        int32_t src = s->src[k];
        int32_t a = net->node_of[src];
        double t = m->rel.v[i].t;
        if (m->rank_start) {
            double rs = m->rank_start[src], rd = m->rank_start[s->dst[k]];
            t = rs > t ? rs : t;
            t = rd > t ? rd : t;
        }
        t += s->delay[k];
        if (s->detached[k] && net->o && net->o[a] > 0.0) {
            double o_start = m->ready_src[k] + s->delay[k];
            if (m->rank_start && m->rank_start[src] + s->delay[k] > o_start)
                o_start = m->rank_start[src] + s->delay[k];
            if (m->cpu_free[src] > o_start)
                o_start = m->cpu_free[src];
            double o_end = o_start + net->o[a] * s->n_lat[k];
            m->cpu_free[src] = o_end;
            if (o_end > m->rank_end[src])
                m->rank_end[src] = o_end;
            if (o_end > t)
                t = o_end;
        }
        m->rel.v[i].t = t;
    }
    for (int64_t i = 0; i < m->rel.n; i++) {
        int64_t k = m->rel.v[i].k;
        int32_t src = s->src[k], dst = s->dst[k];
        int32_t a = net->node_of[src], b = net->node_of[dst];
        double t = m->rel.v[i].t;
        if (!s->preposted[k] && src != dst && m->cpu_free[dst] > t)
            t = m->cpu_free[dst];
        double alpha, beta;
        rw_pnet_message_cost(net, a, b, s->bytes[k] / s->n_lat[k], &alpha, &beta);
        double lat = alpha * s->n_lat[k];
        if (m->mode == RW_SIM_CONTENTION_FREE) {
            if (m->port_free[src] > t)
                t = m->port_free[src];
            m->port_free[src] = t + lat + s->bytes[k] * beta;
        }
        if (heap_push(&m->pending, t + lat, k))
            return oom();
    }
    m->rel.n = 0;
    return RW_OK;
}

static rw_status complete(sim *m, int64_t k, double t)
{
    m->finish[k] = t;
    m->done[k] = 1;
    for (int64_t w = m->waiting[k]; w >= 0; w = m->waiting_next[w])
        if (list_append(&m->due, m->arrival[w] > t ? m->arrival[w] : t, w))
            return oom();
    m->waiting[k] = -1;
    if (t > m->end)
        m->end = t;
    if (!m->s->detached[k] && t > m->rank_end[m->s->src[k]])
        m->rank_end[m->s->src[k]] = t;
    if (t > m->rank_end[m->s->dst[k]])
        m->rank_end[m->s->dst[k]] = t;
    for (int64_t q = m->out_start[k]; q < m->out_start[k + 1]; q++) {
        int64_t g = m->out[q];
        if (t > m->ready[g])
            m->ready[g] = t;
        if (m->out_sender[q] && t > m->ready_src[g])
            m->ready_src[g] = t;
        if (--m->left[g] == 0) {
            rw_status st = release(m, g, m->ready[g]);
            if (st != RW_OK)
                return st;
        }
    }
    return RW_OK;
}

/* Transfer k's bytes have arrived at time t. An eager message costs the
 * receiver its receive overhead first: it counts as received once that is
 * over (a pending event numbered n + k). The overhead waits for the end of
 * the event (what the rank does on receiving a message, such as forwarding
 * it, is its CPU's next work: overheads_due) and for the rank's CPU. */
static rw_status arrived(sim *m, int64_t k, double t)
{
    const rw_sched *s = m->s;
    const rw_pnet *net = m->net;
    int32_t b = net->node_of[s->dst[k]];
    if (!s->detached[k] || !net->o_recv || net->o_recv[b] <= 0.0)
        return complete(m, k, t);
    int64_t first = s->wait_after[k];
    if (first >= 0 && !m->done[first]) { /* its rank is still waiting for `first` */
        m->arrival[k] = t;
        m->waiting_next[k] = m->waiting[first];
        m->waiting[first] = k;
        return RW_OK;
    }
    return list_append(&m->due, t, k) ? oom() : RW_OK;
}

/* The receive overheads of the event's arrivals, once its releases have
 * taken the CPU time they need: an overhead starts when the rank's CPU is
 * free; while it is busy, the arrival is looked at again then (a pending
 * event numbered 2 n + k). */
static rw_status overheads_due(sim *m)
{
    const rw_sched *s = m->s;
    for (int64_t i = 0; i < m->due.n; i++) {
        int64_t k = m->due.v[i].k;
        int32_t dst = s->dst[k];
        double t = m->due.v[i].t;
        if (m->cpu_free[dst] > t) {
            if (heap_push(&m->pending, m->cpu_free[dst], 2 * s->n + k))
                return oom();
            continue;
        }
        t += m->net->o_recv[m->net->node_of[dst]] * s->n_lat[k];
        m->cpu_free[dst] = t;
        if (heap_push(&m->pending, t, s->n + k))
            return oom();
    }
    m->due.n = 0;
    return RW_OK;
}

static rw_status activate(sim *m, int64_t k)
{
    if (m->n_act == m->cap_act) {
        int64_t cap = m->cap_act ? 2 * m->cap_act : 256;
#define RW_G(f)                                                    \
    do {                                                           \
        void *p = realloc(m->f, (size_t)cap * sizeof *m->f);       \
        if (!p)                                                    \
            return oom();                                          \
        m->f = p;                                                  \
    } while (0)
        RW_G(act);
        RW_G(sn);
        RW_G(dn);
        RW_G(rem);
        RW_G(rate);
        RW_G(fcap);
        RW_G(fw);
        RW_G(fixed);
#undef RW_G
        m->cap_act = cap;
    }
    int64_t i = m->n_act++;
    const rw_pnet *net = m->net;
    int32_t a = net->node_of[m->s->src[k]], b = net->node_of[m->s->dst[k]];
    double alpha, beta;
    rw_pnet_message_cost(net, a, b, m->s->bytes[k] / m->s->n_lat[k], &alpha, &beta);
    m->act[i] = k;
    m->sn[i] = a;
    m->dn[i] = b;
    m->rem[i] = m->s->bytes[k];
    m->fcap[i] = beta > 0.0 ? 1.0 / beta : INFINITY;
    double lat = net->alpha[(int64_t)a * net->n + b]; /* the route's latency, whatever the size */
    m->fw[i] = net->equal_sharing ? 0.0 : lat > 0.0 ? 1e-6 / lat : 0.0; /* 0: equal shares */
    m->rate[i] = 0.0;
    return RW_OK;
}

static rw_status update_rates(sim *m)
{
    m->updates++;
    if (m->mode == RW_SIM_CONTENTION_FREE) {
        for (int64_t i = 0; i < m->n_act; i++)
            m->rate[i] = m->fcap[i];
        return RW_OK;
    }
    if (rw_sharing_rates(&m->sh, m->n_act, m->sn, m->dn, m->fcap, m->fw, m->rate, m->fixed) < 0)
        return oom();
    return RW_OK;
}

static rw_status run(sim *m)
{
    const rw_sched *s = m->s;
    double now = 0.0;
    for (int64_t k = 0; k < s->n; k++)
        if (m->left[k] == 0) {
            rw_status st = release(m, k, 0.0);
            if (st != RW_OK)
                return st;
        }
    rw_status fst = flush_released(m);
    if (fst != RW_OK)
        return fst;
    while (m->n_act > 0 || m->pending.n > 0) {
        /* Next event: the earliest flow end or flow start. */
        double t = INFINITY;
        for (int64_t i = 0; i < m->n_act; i++) {
            double e = m->rate[i] == INFINITY ? now : now + m->rem[i] / m->rate[i];
            if (e < t)
                t = e;
        }
        if (m->pending.n > 0 && m->pending.v[0].t < t)
            t = m->pending.v[0].t;
        double horizon = t + RW_SIM_TOL * (t > 0 ? t : 0) + 1e-18;
        m->events++;
        int changed = 0;
        /* Advance flows; those ending by the horizon end at t. */
        int64_t w = 0;
        for (int64_t i = 0; i < m->n_act; i++) {
            double e = m->rate[i] == INFINITY ? now : now + m->rem[i] / m->rate[i];
            if (e <= horizon) {
                rw_status st = arrived(m, m->act[i], t);
                if (st != RW_OK)
                    return st;
                changed = 1;
                continue;
            }
            m->rem[i] -= m->rate[i] * (t - now);
            if (w != i) {
                m->act[w] = m->act[i];
                m->sn[w] = m->sn[i];
                m->dn[w] = m->dn[i];
                m->rem[w] = m->rem[i];
                m->rate[w] = m->rate[i];
                m->fcap[w] = m->fcap[i];
                m->fw[w] = m->fw[i];
            }
            w++;
        }
        m->n_act = w;
        now = t;
        /* Start the flows due by the horizon; empty ones end at once. */
        while (m->pending.n > 0 && m->pending.v[0].t <= horizon) {
            heap_item it = heap_pop(&m->pending);
            rw_status st;
            if (it.k >= 2 * s->n) {
                st = arrived(m, it.k - 2 * s->n, it.t > now ? it.t : now);
            } else if (it.k >= s->n) {
                st = complete(m, it.k - s->n, it.t > now ? it.t : now);
            } else if (s->bytes[it.k] <= 0.0) {
                st = arrived(m, it.k, it.t > now ? it.t : now);
            } else {
                st = activate(m, it.k);
                changed = 1;
            }
            if (st != RW_OK)
                return st;
        }
        if ((fst = flush_released(m)) != RW_OK || (fst = overheads_due(m)) != RW_OK)
            return fst;
        if (changed && m->n_act > 0) {
            rw_status st = update_rates(m);
            if (st != RW_OK)
                return st;
        }
    }
    return RW_OK;
}

rw_status rw_simulate(const rw_pnet *net, const rw_sched *s, rw_sim_mode mode, rw_sim_result *out, double *finish)
{
    return rw_simulate_from(net, s, mode, NULL, out, finish);
}

rw_status rw_simulate_from(const rw_pnet *net, const rw_sched *s, rw_sim_mode mode, const double *rank_start,
                           rw_sim_result *out, double *finish)
{
    if (!net || !s || !out)
        return rw_fail(RW_ERR_ARG, "rw_simulate: net, schedule and out are required");
    if (mode != RW_SIM_SHARED && mode != RW_SIM_CONTENTION_FREE)
        return rw_fail(RW_ERR_ARG, "rw_simulate: unknown mode %d", (int)mode);
    if (s->n_ranks > net->n_ranks)
        return rw_fail(RW_ERR_ARG, "simulation: the schedule has %d ranks, the placement %d", (int)s->n_ranks,
                       (int)net->n_ranks);
    if (rank_start)
        for (int32_t r = 0; r < s->n_ranks; r++)
            if (!(isfinite(rank_start[r]) && rank_start[r] >= 0.0))
                return rw_fail(RW_ERR_ARG, "simulation: rank %d starts at %g s (finite, >= 0 needed)", (int)r,
                               rank_start[r]);
    /* The link index is a cache of the network's own data, built once. */
    rw_status ist = rw_pnet_index_links((rw_pnet *)net);
    if (ist != RW_OK)
        return ist;
    memset(out, 0, sizeof *out);
    sim m;
    memset(&m, 0, sizeof m);
    m.rank_start = rank_start;
    m.rank_end = calloc((size_t)s->n_ranks, sizeof(double));
    m.cpu_free = calloc((size_t)s->n_ranks, sizeof(double));
    m.port_free = calloc((size_t)s->n_ranks, sizeof(double));
    m.net = net;
    m.s = s;
    m.mode = mode;
    int64_t n = s->n;
    m.out_start = calloc((size_t)n + 1, sizeof(int64_t));
    m.out = malloc((size_t)(s->n_deps > 0 ? s->n_deps : 1) * sizeof(int64_t));
    m.left = malloc((size_t)(n > 0 ? n : 1) * sizeof(int32_t));
    m.ready = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    m.ready_src = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    m.out_sender = malloc((size_t)(s->n_deps > 0 ? s->n_deps : 1));
    m.finish = finish ? finish : malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    m.waiting = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    m.waiting_next = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    m.arrival = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    m.done = calloc((size_t)(n > 0 ? n : 1), 1);
    rw_status st = RW_OK;
    if (!m.out_start || !m.out || !m.out_sender || !m.left || !m.ready || !m.ready_src || !m.finish || !m.rank_end ||
        !m.cpu_free || !m.port_free || !m.waiting || !m.waiting_next || !m.arrival || !m.done) {
        st = oom();
        goto done;
    }
    for (int64_t k = 0; k < n; k++)
        m.waiting[k] = -1;
    if ((st = rw_sharing_init(&m.sh, net)) != RW_OK)
        goto done;
    /* Reverse the dependency lists into dependents (counting sort). */
    for (int64_t k = 0; k < n; k++) {
        m.left[k] = (int32_t)(s->dep_start[k + 1] - s->dep_start[k]);
        for (int64_t q = s->dep_start[k]; q < s->dep_start[k + 1]; q++)
            m.out_start[s->deps[q] + 1]++;
    }
    for (int64_t k = 0; k < n; k++)
        m.out_start[k + 1] += m.out_start[k];
    {
        int64_t *fill = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
        if (!fill) {
            st = oom();
            goto done;
        }
        memcpy(fill, m.out_start, (size_t)n * sizeof(int64_t));
        for (int64_t k = 0; k < n; k++)
            for (int64_t q = s->dep_start[k]; q < s->dep_start[k + 1]; q++) {
                m.out_sender[fill[s->deps[q]]] = q - s->dep_start[k] < s->n_sdeps[k];
                m.out[fill[s->deps[q]]++] = k;
            }
        free(fill);
    }
    st = run(&m);
    if (st == RW_OK) {
        out->time = m.end;
        out->transfers = n;
        out->events = m.events;
        out->rate_updates = m.updates;
        for (int32_t r = 0; r < s->n_ranks; r++) {
            double span = m.rank_end[r] - (rank_start ? rank_start[r] : 0.0);
            if (span > out->rank_span)
                out->rank_span = span;
        }
    }
done:
    if (!finish)
        free(m.finish);
    sim_free(&m);
    return st;
}
