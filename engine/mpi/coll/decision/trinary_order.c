/* The order the trinary trees lay a communicator's ranks in: the rules
 * file's trinary-order when its rules apply to the communicator (the order
 * `rankwise coll tune` costed them in), else along the
 * measured network when the library has one (rw_trinary_best_order of the
 * communicator's predictor network: rank order where it follows the
 * network, else a walk along it; made on rank 0, which alone holds it, and
 * broadcast), rank order otherwise. Kept with the network: a new live
 * model drops both (rwc_comm_forget_network). */
#include "decision.h"
#include "base/coll_trinary.h"
#include "coll/trinary.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

rw_status rwc_trinary_order(rwc_comm *c, const int32_t **order)
{
    *order = NULL;
    if ((*order = rwc_rules_trinary_order(c)))
        return RW_OK;
    if (!rwc_net_ready(c))
        return RW_OK;
    if (c->trinary_order) {
        *order = c->trinary_order;
        return RW_OK;
    }
    /* [0]: 1 when rank 0 made the order, then the order */
    int32_t *o = malloc(((size_t)c->size + 1) * sizeof *o);
    int have = o != NULL, all_have = 0;
    rw_status st = rwc_mpi(rwc_real_allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, c->dup),
                           "MPI_Allreduce (trinary order)");
    if (!st && all_have) { /* else nobody waits for a rank that could not allocate: rank order */
        if (c->rank == 0)
            o[0] = rw_pnet_n_ranks(c->net) == c->size && rw_trinary_best_order(c->net, o + 1) == RW_OK;
        st = rwc_mpi(rwc_real_bcast(o, c->size + 1, MPI_INT, 0, c->dup), "MPI_Bcast (trinary order)");
        if (!st && o[0] == 1) { /* the same on every rank */
            memmove(o, o + 1, (size_t)c->size * sizeof *o);
            c->trinary_order = o;
            o = NULL;
            *order = c->trinary_order;
        }
    }
    free(o);
    return st;
}
