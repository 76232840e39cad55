/* Building a collective's schedule rank by rank: each rank's "front" is what
 * it waits for before its next operation (predict_internal.h). */
#include "predict_internal.h"

#include <stdlib.h>

rw_coll_options rw_coll_options_default(void)
{
    rw_coll_options o = {.root = 0, .segment = 8192, .radix = 4, .gamma = 0.0, .eager_threshold = 65536};
    return o;
}

static void list_push(rw_builder *b, rw_idlist *l, int64_t id)
{
    if (b->err != RW_OK)
        return;
    if (l->n == l->cap) {
        int32_t cap = l->cap ? 2 * l->cap : 4;
        int64_t *v = realloc(l->v, (size_t)cap * sizeof(int64_t));
        if (!v) {
            b->err = rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = id;
}

rw_status rw_builder_init(rw_builder *b, int32_t p, const rw_coll_options *opt)
{
    b->s = NULL;
    b->p = p;
    b->opt = opt ? *opt : rw_coll_options_default();
    b->err = RW_OK;
    b->front = calloc((size_t)p, sizeof(rw_idlist));
    b->next = calloc((size_t)p, sizeof(rw_idlist));
    if (!b->front || !b->next) {
        free(b->front);
        free(b->next);
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory for %d ranks", (int)p);
    }
    rw_status st = rw_sched_create(p, &b->s);
    if (st != RW_OK) {
        free(b->front);
        free(b->next);
    }
    return st;
}

rw_status rw_builder_finish(rw_builder *b, rw_sched **out)
{
    for (int32_t r = 0; r < b->p; r++) {
        free(b->front[r].v);
        free(b->next[r].v);
    }
    free(b->front);
    free(b->next);
    if (b->err != RW_OK) {
        rw_sched_free(b->s);
        return b->err;
    }
    *out = b->s;
    return RW_OK;
}

int64_t rw_b_xfer(rw_builder *b, int32_t src, int32_t dst, double bytes, double delay)
{
    if (b->err != RW_OK)
        return -1;
    rw_idlist *fs = &b->front[src], *fd = &b->front[dst];
    int32_t nd = fs->n + (src == dst ? 0 : fd->n);
    int64_t local[16];
    int64_t *deps = nd <= 16 ? local : malloc((size_t)nd * sizeof(int64_t));
    if (!deps) {
        b->err = rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
        return -1;
    }
    int32_t k = 0;
    for (int32_t i = 0; i < fs->n; i++)
        deps[k++] = fs->v[i];
    if (src != dst)
        for (int32_t i = 0; i < fd->n; i++)
            deps[k++] = fd->v[i];
    int64_t id = -1;
    b->err = rw_sched_add(b->s, src, dst, bytes, delay, k, deps, &id);
    if (deps != local)
        free(deps);
    if (b->err != RW_OK)
        return -1;
    b->s->detached[id] = src != dst && bytes < (double)b->opt.eager_threshold;
    b->s->n_sdeps[id] = fs->n;
    return id;
}

void rw_b_next(rw_builder *b, int32_t r, int64_t id)
{
    if (id >= 0)
        list_push(b, &b->next[r], id);
}

void rw_b_send_done(rw_builder *b, int32_t r, int64_t id, double bytes)
{
    if (bytes >= (double)b->opt.eager_threshold)
        rw_b_next(b, r, id);
}

void rw_b_commit(rw_builder *b)
{
    for (int32_t r = 0; r < b->p; r++) {
        if (b->next[r].n == 0)
            continue;
        rw_idlist t = b->front[r];
        b->front[r] = b->next[r];
        b->next[r] = t;
        b->next[r].n = 0;
    }
}

void rw_b_set(rw_builder *b, int32_t r, int64_t id)
{
    if (id < 0)
        return;
    b->front[r].n = 0;
    list_push(b, &b->front[r], id);
}

void rw_b_sendrecv_step(rw_builder *b, const int32_t *to, double sbytes)
{
    /* Every rank's send of the step depends on the fronts before the step;
     * the receive that completes rank r's step is the one from the rank that
     * sends to r. A rank's step ends with its receive and, unless detached,
     * its send (MPI_Sendrecv waits for both). */
    for (int32_t r = 0; r < b->p; r++) {
        if (to[r] == r)
            continue; /* a local copy: free */
        int64_t id = rw_b_xfer(b, r, to[r], sbytes, 0.0);
        rw_b_next(b, to[r], id);
        rw_b_send_done(b, r, id, sbytes);
    }
    rw_b_commit(b);
}

void rw_b_local_copy(rw_builder *b, int32_t r, double bytes)
{
    (void)b;
    (void)r;
    (void)bytes;
}
