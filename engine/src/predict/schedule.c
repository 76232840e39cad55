/* A schedule: transfers between ranks and what each waits for (a DAG whose
 * edges point to earlier transfers only). */
#include "predict_internal.h"

#include <math.h>
#include <stdlib.h>

#define RW_SCHED_MAX_RANKS (1 << 24)

rw_status rw_sched_create(int32_t n_ranks, rw_sched **out)
{
    if (!out)
        return rw_fail(RW_ERR_ARG, "rw_sched_create: out is NULL");
    *out = NULL;
    if (n_ranks < 1 || n_ranks > RW_SCHED_MAX_RANKS)
        return rw_fail(RW_ERR_ARG, "schedule: %d ranks (1 to %d)", (int)n_ranks, RW_SCHED_MAX_RANKS);
    rw_sched *s = calloc(1, sizeof *s);
    if (!s || !(s->dep_start = calloc(1, sizeof(int64_t)))) {
        free(s);
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
    }
    s->n_ranks = n_ranks;
    *out = s;
    return RW_OK;
}

void rw_sched_free(rw_sched *s)
{
    if (!s)
        return;
    free(s->src);
    free(s->dst);
    free(s->bytes);
    free(s->delay);
    free(s->n_lat);
    free(s->detached);
    free(s->n_sdeps);
    free(s->preposted);
    free(s->wait_after);
    free(s->dep_start);
    free(s->deps);
    free(s);
}

int64_t rw_sched_n_transfers(const rw_sched *s) { return s ? s->n : 0; }
int32_t rw_sched_n_ranks(const rw_sched *s) { return s ? s->n_ranks : 0; }

rw_status rw_sched_transfer(const rw_sched *s, int64_t k, int32_t *src, int32_t *dst, double *bytes)
{
    if (!s || k < 0 || k >= s->n)
        return rw_fail(RW_ERR_ARG, "schedule: no transfer %lld", (long long)k);
    if (src)
        *src = s->src[k];
    if (dst)
        *dst = s->dst[k];
    if (bytes)
        *bytes = s->bytes[k];
    return RW_OK;
}

static rw_status grow(rw_sched *s)
{
    int64_t cap = s->cap ? 2 * s->cap : 64;
#define RW_GROW(field)                                                          \
    do {                                                                        \
        void *p = realloc(s->field, (size_t)cap * sizeof *s->field);            \
        if (!p)                                                                 \
            return rw_fail(RW_ERR_NOMEM, "schedule: out of memory at %lld transfers", (long long)s->n); \
        s->field = p;                                                           \
    } while (0)
    RW_GROW(src);
    RW_GROW(dst);
    RW_GROW(bytes);
    RW_GROW(delay);
    RW_GROW(n_lat);
    RW_GROW(detached);
    RW_GROW(n_sdeps);
    RW_GROW(preposted);
    RW_GROW(wait_after);
#undef RW_GROW
    int64_t *ds = realloc(s->dep_start, (size_t)(cap + 1) * sizeof(int64_t));
    if (!ds)
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory at %lld transfers", (long long)s->n);
    s->dep_start = ds;
    s->cap = cap;
    return RW_OK;
}

rw_status rw_sched_add_msgs(rw_sched *s, int32_t src, int32_t dst, double bytes, double delay,
                            int32_t n_lat, int32_t n_deps, const int64_t *deps, int64_t *id)
{
    if (!s)
        return rw_fail(RW_ERR_ARG, "rw_sched_add: schedule is NULL");
    if (src < 0 || src >= s->n_ranks || dst < 0 || dst >= s->n_ranks)
        return rw_fail(RW_ERR_ARG, "schedule: transfer %d -> %d outside ranks 0..%d", (int)src, (int)dst,
                       (int)s->n_ranks - 1);
    if (!(isfinite(bytes) && bytes >= 0.0) || !(isfinite(delay) && delay >= 0.0))
        return rw_fail(RW_ERR_ARG, "schedule: transfer %d -> %d of %g bytes after %g s (finite, >= 0 needed)",
                       (int)src, (int)dst, bytes, delay);
    if (n_lat < 1)
        return rw_fail(RW_ERR_ARG, "schedule: transfer %d -> %d stands for %d messages (>= 1 needed)",
                       (int)src, (int)dst, (int)n_lat);
    if (n_deps < 0 || (n_deps > 0 && !deps))
        return rw_fail(RW_ERR_ARG, "schedule: %d dependencies and no array", (int)n_deps);
    for (int32_t k = 0; k < n_deps; k++)
        if (deps[k] < 0 || deps[k] >= s->n)
            return rw_fail(RW_ERR_ARG, "schedule: transfer %lld depends on %lld, not an earlier transfer",
                           (long long)s->n, (long long)deps[k]);
    if (s->n == s->cap) {
        rw_status st = grow(s);
        if (st != RW_OK)
            return st;
    }
    if (s->n_deps + n_deps > s->deps_cap) {
        int64_t cap = s->deps_cap ? 2 * s->deps_cap : 256;
        while (cap < s->n_deps + n_deps)
            cap *= 2;
        int64_t *p = realloc(s->deps, (size_t)cap * sizeof(int64_t));
        if (!p)
            return rw_fail(RW_ERR_NOMEM, "schedule: out of memory at %lld dependencies", (long long)s->n_deps);
        s->deps = p;
        s->deps_cap = cap;
    }
    int64_t k = s->n;
    s->src[k] = src;
    s->dst[k] = dst;
    s->bytes[k] = bytes;
    s->delay[k] = delay;
    s->n_lat[k] = n_lat;
    s->detached[k] = 0;
    s->n_sdeps[k] = n_deps;
    s->preposted[k] = 0;
    s->wait_after[k] = -1;
    for (int32_t d = 0; d < n_deps; d++)
        s->deps[s->n_deps++] = deps[d];
    s->dep_start[k + 1] = s->n_deps;
    s->n = k + 1;
    if (id)
        *id = k;
    return RW_OK;
}

rw_status rw_sched_add(rw_sched *s, int32_t src, int32_t dst, double bytes, double delay, int32_t n_deps,
                       const int64_t *deps, int64_t *id)
{
    int64_t k = -1;
    rw_status st = rw_sched_add_msgs(s, src, dst, bytes, delay, 1, n_deps, deps, &k);
    if (st == RW_OK) {
        s->detached[k] = src != dst && bytes < (double)rw_coll_options_default().eager_threshold;
        if (id)
            *id = k;
    }
    return st;
}
