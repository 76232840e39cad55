/* The multi-ring allgather as the library runs it: the rings of one step
 * are posted together (nonblocking receives and sends, one wait for all),
 * so a rank's step s + 1 waits for every transfer of its step s, and a
 * transfer for its receiver's previous step too (its receive is posted
 * then). Eager parts detach from their sender, as SMPI's do. */
#include "multiring_sched.h"

#include "coll/multiring.h"

#include <stdlib.h>

rw_status rw_b_multiring_allgather(rw_builder *b, const int32_t *order, double bytes)
{
    int32_t n = b->p;
    if (n < 2 || bytes <= 0)
        return RW_OK;
    size_t len[RW_MULTIRING_PARTS];
    for (int k = 0; k < RW_MULTIRING_PARTS; k++)
        len[k] = rw_multiring_part((size_t)bytes, RW_MULTIRING_PARTS, k, NULL);
    for (int32_t s = 0; s < n - 1; s++) {
        for (int32_t p = 0; p < n; p++)
            for (int k = 0; k < RW_MULTIRING_PARTS; k++) {
                if (len[k] == 0)
                    continue;
                int32_t r = order[p], to = order[rw_multiring_next(n, k, p)];
                int64_t id = rw_b_xfer(b, r, to, (double)len[k], 0.0);
                rw_b_next(b, to, id);
                rw_b_send_done(b, r, id, (double)len[k]);
            }
        rw_b_commit(b);
    }
    return b->err;
}

rw_status rw_sched_multiring(const rw_pnet *net, double bytes, const rw_coll_options *opt, rw_sched **out)
{
    int32_t *order = malloc((size_t)net->n_ranks * sizeof *order);
    if (!order)
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory for %d ranks", (int)net->n_ranks);
    rw_builder b;
    rw_status st = rw_multiring_order(net, net->n_ranks, order);
    if (st == RW_OK && (st = rw_builder_init(&b, net->n_ranks, opt)) == RW_OK) {
        st = rw_b_multiring_allgather(&b, order, bytes);
        if (st != RW_OK && b.err == RW_OK)
            b.err = st;
        st = rw_builder_finish(&b, out);
    }
    free(order);
    return st;
}
