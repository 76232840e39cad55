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

int64_t rw_b_send(rw_builder *b, int32_t src, int32_t dst, double bytes)
{
    int64_t id = rw_b_xfer(b, src, dst, bytes, 0.0);
    rw_b_set(b, dst, id);
    if (bytes >= (double)b->opt.eager_threshold)
        rw_b_set(b, src, id);
    return id;
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

void rw_b_front_add(rw_builder *b, int32_t r, int64_t id)
{
    if (id >= 0)
        list_push(b, &b->front[r], id);
}

void rw_b_set(rw_builder *b, int32_t r, int64_t id)
{
    if (id < 0)
        return;
    b->front[r].n = 0;
    list_push(b, &b->front[r], id);
}

void rw_b_peer_step(rw_builder *b, rw_peer peer, int32_t offset, double bytes, double delay)
{
    int32_t p = b->p;
    for (int32_t r = 0; r < p; r++) {
        int32_t to = peer == RW_PEER_XOR ? r ^ offset : (int32_t)(((int64_t)r + offset) % p);
        if (to == r)
            continue; /* a local copy: free */
        int64_t id = rw_b_xfer(b, r, to, bytes, delay);
        rw_b_next(b, to, id);
        rw_b_send_done(b, r, id, bytes);
    }
    rw_b_commit(b);
}

/* Relative rank v's children are v + 1, v + 2, v + 4, ... below its lowest
 * set bit; child v + m's subtree holds min(m, P - v - m) blocks. Toward the
 * root (gather) children are built before their parent (v from the last)
 * and the parent receives them in turn; away from it (scatter) the parent
 * sends to them in turn with blocking sends. */
void rw_b_binomial_blocks(rw_builder *b, double bytes, int toward_root)
{
    int32_t p = b->p, root = b->opt.root;
    for (int32_t i = 0; i < p; i++) {
        int32_t v = toward_root ? p - 1 - i : i;
        int32_t r = (v + root) % p;
        for (int32_t mask = 1; mask < p && !(v & mask) && v + mask < p; mask <<= 1) {
            int32_t cv = v + mask, c = (cv + root) % p;
            double send = (double)(p - cv < mask ? p - cv : mask) * bytes;
            if (toward_root)
                rw_b_set(b, r, rw_b_xfer(b, c, r, send, 0.0));
            else
                rw_b_send(b, r, c, send);
        }
    }
}

void rw_b_linear_rooted(rw_builder *b, double bytes, int toward_root)
{
    int32_t root = b->opt.root;
    for (int32_t i = 0; i < b->p; i++) {
        if (i == root)
            continue;
        if (toward_root)
            rw_b_set(b, root, rw_b_xfer(b, i, root, bytes, 0.0));
        else
            rw_b_send(b, root, i, bytes);
    }
}
