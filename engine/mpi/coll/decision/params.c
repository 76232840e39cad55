/* The parameters the decision gives the algorithms (rwc_params, coll.h):
 * the environment's segment and k-nomial radix, and, made only when an
 * algorithm asks for them, the order of the ranks along the network
 * (trinary trees, multiring) and the symmetric all-to-all's cap
 * (environment > network > default). */
#include "decision.h"
#include "internal.h"

#include "alltoall_symmetric.h"
#include "coll/multiring.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The ring order of c's ranks, the same on every rank (collective): the
 * rules file's ring-order when its rules apply (the order the tuner costed
 * the multi-ring in), else along the network, else rank order. */
static rw_status ring_order(rwc_comm *c, const int32_t **out)
{
    if ((*out = rwc_rules_ring_order(c)))
        return RW_OK;
    if (!rwc_net_ready(c))
        return RW_OK; /* rank order */
    if (c->ring_order) {
        *out = c->ring_order;
        return RW_OK;
    }
    int32_t *order = malloc((size_t)c->size * sizeof *order);
    int ok = order != NULL;
    if (ok && c->rank == 0)
        ok = rw_multiring_order(c->net, c->size, order) == RW_OK;
    int all = 0;
    rw_status st = rwc_mpi(rwc_real_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c->dup), "MPI_Allreduce (ring order)");
    if (!st && all)
        st = rwc_mpi(rwc_real_bcast(order, c->size, MPI_INT32_T, 0, c->dup), "MPI_Bcast (ring order)");
    if (st || !all) {
        free(order);
        return st; /* !all: rank order on every rank */
    }
    c->ring_order = order;
    *out = order;
    if (rwc_tracing() && c->rank == 0) { /* once per communicator and network */
        fprintf(stderr, "rankwise-coll: multiring order from the %s:", c->net_source);
        for (int32_t p = 0; p < c->size && p < 64; p++)
            fprintf(stderr, " %d", (int)order[p]);
        fprintf(stderr, "%s\n", c->size > 64 ? " ..." : "");
    }
    return RW_OK;
}

/* The cap on concurrent sends (collective on c): RANKWISE_COLL_ALLTOALL_CAP
 * when set, else from the network of RANKWISE_MODEL or the in-job probe
 * (rank 0 computes it once per power-of-two size class, at the class's
 * smallest size, and every rank takes it), else RW_A2A_DEFAULT_CAP. */
static int alltoall_cap(rwc_comm *c, size_t bytes)
{
    const char *v = getenv("RANKWISE_COLL_ALLTOALL_CAP");
    if (v && *v) {
        char *end;
        long k = strtol(v, &end, 10);
        if (!*end && k >= 1 && k <= INT_MAX)
            return (int)k;
        static int warned;
        if (!warned++ && c->rank == 0)
            fprintf(stderr, "rankwise-coll: warning: RANKWISE_COLL_ALLTOALL_CAP=%s is not a positive integer; "
                            "the cap comes from the network\n", v);
    }
    if (!rwc_net_configured())
        return RW_A2A_DEFAULT_CAP;
    rwc_choice ignored;
    rwc_net_choice(c, RW_COLL_ALLTOALL, -1, bytes, &ignored); /* sets the network up (collective) */
    int cls = rw_size_class_pow2(bytes);
    if (cls >= 0 && cls < (int)(sizeof c->a2a_cap / sizeof *c->a2a_cap) && c->a2a_cap[cls] > 0)
        return c->a2a_cap[cls];
    int cap = RW_A2A_DEFAULT_CAP;
    if (c->rank == 0 && c->net_state > 0 && c->net)
        cap = rw_a2a_cap(c->net, ldexp(1.0, cls));
    if (rwc_real_bcast(&cap, 1, MPI_INT, 0, c->dup) != MPI_SUCCESS)
        return RW_A2A_DEFAULT_CAP; /* every rank sees the same failure of the duplicate */
    /* kept with the network (rwc_comm_forget_network drops it), the same on every rank */
    if (cls >= 0 && cls < (int)(sizeof c->a2a_cap / sizeof *c->a2a_cap))
        c->a2a_cap[cls] = cap;
    return cap;
}

/* The order makers of the algorithms laid along the network
 * (RW_ALGO_ORDER in the registry), by id. */
static const struct {
    rw_coll_alg alg;
    rw_status (*make)(rwc_comm *c, const int32_t **out);
} ORDERS[] = {{RW_COLL_TRINARY, rwc_trinary_order}, {RW_COLL_MULTIRING, ring_order}};

static rw_status network_order(rwc_comm *c, rw_coll_alg alg, const int32_t **out)
{
    *out = NULL;
    for (size_t i = 0; i < sizeof ORDERS / sizeof *ORDERS; i++)
        if (ORDERS[i].alg == alg)
            return ORDERS[i].make(c, out);
    return RW_OK; /* rank order */
}

rwc_params rwc_decision_params(void)
{
    return (rwc_params){rwc_segment_bytes(), rwc_knomial_k(), network_order, alltoall_cap};
}
