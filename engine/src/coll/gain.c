/* Which candidate runs: the fastest that gains min_gain over the MPI's own,
 * on the network and on it without its unconfirmed links
 * (rw_pnet_link_confirmed). Shared by rw_coll_decide and rw_coll_ompi_choose. */
#include "../predict/predict_internal.h"
#include "tune_internal.h"

#include <math.h>
#include <string.h>

/* Whether candidate i keeps its gain on the view without the unconfirmed
 * links; the view and the MPI's time there are made on first use. */
static rw_status holds_without(const rw_coll_gain_rule *r, int32_t i, rw_pnet *view, int *have, double *pass,
                               int *holds)
{
    *holds = 1;
    if (!*have) {
        rw_status st = rw_pnet_confirmed_view(r->net, view);
        if (st)
            return st;
        *have = 1;
        *pass = r->cost(0, view, r->ctx);
    }
    if (isfinite(*pass) && *pass > 0) /* else nothing to compare with: the network decides */
        *holds = r->cost(i, view, r->ctx) <= (1.0 - r->min_gain) * *pass;
    return RW_OK;
}

rw_status rw_coll_pick(const rw_coll_gain_rule *r, int32_t *chosen)
{
    *chosen = 0;
    double pass = r->times[0];
    /* A passthrough the predictor cannot cost, or that costs nothing (one
     * rank), is kept: nothing says rankwise is faster. */
    if (!(isfinite(pass) && pass > 0))
        return RW_OK;
    int unsure = rw_pnet_has_unsure(r->net), have = 0;
    double pass_view = NAN;
    rw_pnet view;
    uint8_t aside[RW_COLL_PICK_MAX] = {0};
    rw_status st = RW_OK;
    for (;;) {
        int32_t next = 0;
        for (int32_t i = 1; i < r->n && i < RW_COLL_PICK_MAX; i++)
            if (!aside[i] && (!r->eligible || r->eligible[i]) && (next == 0 || r->times[i] < r->times[next]))
                next = i;
        if (!(next > 0 && r->times[next] <= (1.0 - r->min_gain) * pass))
            break;
        int holds = 1;
        if (unsure && (st = holds_without(r, next, &view, &have, &pass_view, &holds)))
            break;
        if (holds) {
            *chosen = next;
            break;
        }
        aside[next] = 1;
    }
    if (have)
        rw_pnet_view_release(&view);
    return st;
}
