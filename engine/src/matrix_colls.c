/* The collective calls a communication matrix records (rw_coll_call),
 * kept canonical so that one set of calls has one representation in
 * memory and in files: communicators deduplicated and ordered by their
 * member lists, calls sorted and merged. A profile holds few of them (the
 * profiler caps its groups), so plain sorting is enough here. */
#include "internal.h"
#include "coll/registry.h"

#include <stdlib.h>
#include <string.h>

/* The matrix format numbers the operations as the registry does (rw_coll_op). */
const char *rw_coll_op_name(int op) { return rw_op_name(op); }

int rw_coll_op_from_name(const char *name) { return rw_op_parse(name); }

int rw_coll_op_rooted(int op) { return rw_op_rooted(op); }

/* ------------------------------------------------------------ checking */

rw_status rw_coll_check_members(int32_t n_ranks, int32_t c, const int32_t *ranks, int64_t size,
                                uint8_t *seen)
{
    if (size < 1)
        return rw_fail(RW_ERR_ARG, "communicator %d has no member", c);
    rw_status st = RW_OK;
    int64_t k = 0;
    for (; k < size; k++) {
        int32_t r = ranks[k];
        if (r < 0 || r >= n_ranks) {
            st = rw_fail(RW_ERR_ARG, "communicator %d: member %d is not in [0, %d)", c, r, n_ranks);
            break;
        }
        if (seen[r >> 3] & (1u << (r & 7))) {
            st = rw_fail(RW_ERR_ARG, "communicator %d: rank %d is a member twice", c, r);
            break;
        }
        seen[r >> 3] |= (uint8_t)(1u << (r & 7));
    }
    for (int64_t j = 0; j < k; j++) /* leave the map clear for the next one */
        seen[ranks[j] >> 3] = 0;
    return st;
}

rw_status rw_coll_check_call(int64_t k, const rw_coll_call *x, int32_t n_comms,
                             const int64_t *comm_start, int32_t n_ranks)
{
    const char *name = rw_coll_op_name(x->op);
    if (!name)
        return rw_fail(RW_ERR_ARG, "collective call %lld: unknown operation %d", (long long)k, x->op);
    if (x->comm < -1 || x->comm >= n_comms)
        return rw_fail(RW_ERR_ARG, "collective call %lld (%s): communicator %d is not in [-1, %d)",
                       (long long)k, name, x->comm, n_comms);
    int64_t size = x->comm < 0 ? n_ranks : comm_start[x->comm + 1] - comm_start[x->comm];
    if (!rw_coll_op_rooted(x->op) && x->root != 0)
        return rw_fail(RW_ERR_ARG, "collective call %lld: %s has no root (got %d)", (long long)k,
                       name, x->root);
    if (x->root < 0 || x->root >= size)
        return rw_fail(RW_ERR_ARG, "collective call %lld (%s): root %d is not a rank of its "
                       "communicator of %lld", (long long)k, name, x->root, (long long)size);
    if (x->bytes < 0 || x->calls < 1)
        return rw_fail(RW_ERR_ARG, "collective call %lld (%s): bytes must be >= 0 and calls >= 1 "
                       "(got %lld and %lld)", (long long)k, name, (long long)x->bytes,
                       (long long)x->calls);
    return RW_OK;
}

/* ---------------------------------------------------------- canonical */

/* A communicator being ordered: its index and members. */
typedef struct comm_ref {
    int32_t c;
    int64_t size;
    const int32_t *ranks;
} comm_ref;

static int cmp_comm(const void *a, const void *b)
{
    const comm_ref *x = a, *y = b;
    for (int64_t k = 0; k < x->size && k < y->size; k++)
        if (x->ranks[k] != y->ranks[k])
            return x->ranks[k] < y->ranks[k] ? -1 : 1;
    return (x->size > y->size) - (x->size < y->size);
}

static int cmp_call(const void *a, const void *b)
{
    const rw_coll_call *x = a, *y = b;
    if (x->comm != y->comm)
        return x->comm < y->comm ? -1 : 1;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    if (x->root != y->root)
        return x->root < y->root ? -1 : 1;
    return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

static int is_world(int32_t n_ranks, const int32_t *ranks, int64_t size)
{
    if (size != n_ranks)
        return 0;
    for (int64_t k = 0; k < size; k++)
        if (ranks[k] != k)
            return 0;
    return 1;
}

typedef struct colls {
    int32_t n_comms;
    int64_t *start;
    int32_t *ranks;
    int64_t n_colls;
    rw_coll_call *calls;
} colls;

static void colls_free(colls *c)
{
    free(c->start);
    free(c->ranks);
    free(c->calls);
}

/* The canonical form of checked input (see rankwise.h). */
static rw_status canonical(int32_t n_ranks, int32_t n_comms, const int64_t *comm_start,
                           const int32_t *comm_ranks, int64_t n_colls, const rw_coll_call *in,
                           colls *out)
{
    rw_status st = rw_fail(RW_ERR_NOMEM, "out of memory for %lld collective calls",
                           (long long)n_colls);
    comm_ref *order = malloc(((size_t)n_comms + 1) * sizeof *order);
    int32_t *new_of = malloc(((size_t)n_comms + 1) * sizeof *new_of); /* old -> new index, -1 world */
    char *used = calloc((size_t)n_comms + 1, 1);
    out->calls = malloc(((size_t)n_colls + 1) * sizeof *out->calls);
    out->start = malloc(((size_t)n_comms + 1) * sizeof *out->start);
    if (!order || !new_of || !used || !out->calls || !out->start)
        goto done;
    for (int64_t k = 0; k < n_colls; k++)
        if (in[k].comm >= 0)
            used[in[k].comm] = 1;

    /* Communicators named by some call, ordered by members; equal ones
     * share the first's index, the identity becomes the world. */
    int32_t n_used = 0;
    int64_t n_members = 0;
    for (int32_t c = 0; c < n_comms; c++)
        if (used[c])
            order[n_used++] = (comm_ref){c, comm_start[c + 1] - comm_start[c], comm_ranks + comm_start[c]};
    qsort(order, (size_t)n_used, sizeof *order, cmp_comm);
    int32_t kept = 0;
    out->start[0] = 0;
    for (int32_t t = 0; t < n_used; t++) {
        const comm_ref *r = &order[t];
        if (is_world(n_ranks, r->ranks, r->size))
            new_of[r->c] = -1;
        else if (t > 0 && cmp_comm(&order[t - 1], r) == 0)
            new_of[r->c] = new_of[order[t - 1].c]; /* the same members as the previous one */
        else {
            new_of[r->c] = kept++;
            n_members += r->size;
            out->start[kept] = n_members;
        }
    }
    out->n_comms = kept;
    out->ranks = malloc((size_t)(n_members ? n_members : 1) * sizeof *out->ranks);
    if (!out->ranks)
        goto done;
    for (int32_t t = 0, next = 0; t < n_used; t++)
        if (new_of[order[t].c] == next) {
            memcpy(out->ranks + out->start[next], order[t].ranks, (size_t)order[t].size * sizeof *out->ranks);
            next++;
        }

    /* Calls renumbered, sorted, equal groups merged. */
    for (int64_t k = 0; k < n_colls; k++) {
        out->calls[k] = in[k];
        out->calls[k].comm = in[k].comm < 0 ? -1 : new_of[in[k].comm];
    }
    qsort(out->calls, (size_t)n_colls, sizeof *out->calls, cmp_call);
    int64_t n = 0;
    for (int64_t k = 0; k < n_colls; k++) {
        if (n > 0 && cmp_call(&out->calls[n - 1], &out->calls[k]) == 0) {
            if (out->calls[k].calls > INT64_MAX - out->calls[n - 1].calls) {
                st = rw_fail(RW_ERR_ARG, "collective calls: the calls of one %s group exceed 64 bits",
                             rw_coll_op_name(out->calls[k].op));
                goto done;
            }
            out->calls[n - 1].calls += out->calls[k].calls;
        } else {
            out->calls[n++] = out->calls[k];
        }
    }
    out->n_colls = n;
    st = RW_OK;
done:
    free(order);
    free(new_of);
    free(used);
    return st;
}

rw_status rw_matrix_set_collectives(rw_matrix *m, int32_t n_comms, const int64_t *comm_start,
                                    const int32_t *comm_ranks, int64_t n_colls,
                                    const rw_coll_call *calls, int64_t dropped)
{
    if (n_comms < 0 || n_colls < 0 || dropped < 0)
        return rw_fail(RW_ERR_ARG, "negative number of communicators, calls or dropped calls");
    if ((n_comms > 0 && (!comm_start || !comm_ranks)) || (n_colls > 0 && !calls))
        return rw_fail(RW_ERR_ARG, "missing communicator or call array");
    if (n_comms > 0 && comm_start[0] != 0)
        return rw_fail(RW_ERR_ARG, "communicator offsets must start at 0");
    rw_status st = RW_OK;
    if (n_comms > 0) {
        uint8_t *seen = calloc((size_t)m->n_ranks / 8 + 1, 1);
        if (!seen)
            return rw_fail(RW_ERR_NOMEM, "out of memory to check %d communicators", n_comms);
        for (int32_t c = 0; c < n_comms && !st; c++)
            st = rw_coll_check_members(m->n_ranks, c, comm_ranks + comm_start[c],
                                       comm_start[c + 1] - comm_start[c], seen);
        free(seen);
        if (st)
            return st;
    }
    for (int64_t k = 0; k < n_colls; k++)
        if ((st = rw_coll_check_call(k, &calls[k], n_comms, comm_start, m->n_ranks)))
            return st;
    colls c = {0};
    if ((st = canonical(m->n_ranks, n_comms, comm_start, comm_ranks, n_colls, calls, &c))) {
        colls_free(&c);
        return st;
    }
    free(m->comm_start);
    free(m->comm_ranks);
    free(m->colls);
    m->n_comms = c.n_comms;
    m->comm_start = c.start;
    m->comm_ranks = c.ranks;
    m->n_colls = c.n_colls;
    m->colls = c.calls;
    m->colls_dropped = dropped;
    return RW_OK;
}
