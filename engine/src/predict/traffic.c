/* An application's traffic matrix as one concurrent phase (docs/concepts/prediction.md). */
#include "predict_internal.h"

#include <math.h>

rw_status rw_sched_traffic(const rw_matrix *m, double iterations, rw_sched **out)
{
    if (!out)
        return rw_fail(RW_ERR_ARG, "rw_sched_traffic: out is NULL");
    *out = NULL;
    if (!m)
        return rw_fail(RW_ERR_ARG, "rw_sched_traffic: matrix is NULL");
    if (!(isfinite(iterations) && iterations >= 1.0))
        return rw_fail(RW_ERR_ARG, "traffic: %g iterations (>= 1 needed)", iterations);
    rw_sched *s = NULL;
    rw_status st = rw_sched_create(m->n_ranks, &s);
    for (int32_t r = 0; st == RW_OK && r < m->n_ranks; r++) {
        for (int64_t k = m->row_start[r]; st == RW_OK && k < m->row_start[r + 1]; k++) {
            if (m->dst[k] == r)
                continue; /* a rank's traffic to itself stays in its memory (as in the mapper) */
            /* messages per iteration, at least one latency per pair */
            double msgs = ceil((double)m->msgs[k] / iterations);
            int32_t n_lat = msgs < 1 ? 1 : (msgs > 2e9 ? 2000000000 : (int32_t)msgs);
            double bytes = (double)m->bytes[k] / iterations;
            int64_t id = -1;
            st = rw_sched_add_msgs(s, r, m->dst[k], bytes, 0.0, n_lat, 0, NULL, &id);
            /* messages of eager size pay the send and receive overheads */
            if (st == RW_OK)
                s->detached[id] = bytes / n_lat < (double)rw_coll_options_default().eager_threshold;
        }
    }
    if (st != RW_OK) {
        rw_sched_free(s);
        return st;
    }
    *out = s;
    return RW_OK;
}
