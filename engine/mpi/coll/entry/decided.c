/* A decided call, for the MPI entries (entry.c) and the C API's
 * RW_COLL_AUTO (api.c): the decision (decision/) chooses an algorithm and
 * its parameters, the algorithm (base/) runs it, or the MPI's own does. A
 * case an algorithm does not take (intercommunicators, arguments MPI
 * should reject, ...) is refused before anything is sent and goes to the
 * MPI's own collective, which also reports MPI's errors. */
#include "base/base.h"
#include "decision/decision.h"
#include "decision/verify.h"
#include "entry.h"
#include "internal.h"

#include <stdio.h>

#include <limits.h>

/* RW_ERR_ARG and RW_ERR_STATE: nothing sent, the MPI's own runs. */
#define PASSED(st) ((st) == RW_ERR_ARG || (st) == RW_ERR_STATE)

/* A decided broadcast shape with a segment runs as that shape's tree,
 * pipelined (the shapes' own runs take RANKWISE_COLL_SEGMENT). */
static rw_status shape_as_tree(rwc_choice *ch, MPI_Comm comm, int root, size_t bytes)
{
    rwc_comm *c;
    rw_status st = rwc_comm_get(comm, &c);
    return st ? st : rwc_tree_get(c, ch->alg, root, bytes, rwc_knomial_k(), &ch->tree);
}

/* Blocks of one rank x the communicator's size must fit an MPI count. */
static rw_status blocks_fit(int count, MPI_Datatype type, MPI_Comm comm)
{
    size_t blk;
    int n = 0;
    rw_status st = count < 0 ? rw_fail(RW_ERR_ARG, "count %d is negative", count) : rwc_type_bytes(count, type, &blk);
    if (!st && PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
        st = rw_fail(RW_ERR_ARG, "not a communicator");
    if (!st && blk * (size_t)n > INT_MAX)
        st = rw_fail(RW_ERR_STATE, "%d blocks of %zu bytes exceed an MPI count", n, blk);
    return st;
}

/* Runs what the decision chose: the algorithm (run) or the tree (tree);
 * *pass = 1 when the MPI's own must run instead. key: the call's outcome
 * key (rwc_key), looked up first: a call whose key has a final outcome on
 * comm runs it directly, before any MPI call (the bytes, and for gather
 * and scatter the rank, cost one or two). bytes_of: the bytes the decision
 * goes by, evaluated only after that lookup. verifiable: whether the
 * decision's first calls may alternate with the MPI's own (verify.h),
 * evaluated only when the call is decided. */
#define DECIDED(op, root, key, bytes_of, verifiable, run, on_tree)                                     \
    do {                                                                                                \
        rwc_choice ch;                                                                                  \
        rw_status st = RW_ERR_STATE;                                                                    \
        int kept_ = rwc_decide_cached(op, comm, root, &(key), &ch);                                     \
        if (kept_ > 0) {                                                                                \
            *pass = 1;                                                                                  \
            return st;                                                                                  \
        }                                                                                               \
        size_t bytes = bytes_of;                                                                        \
        if (kept_ < 0) {                                                                                \
            ch = rwc_decide_call(op, comm, root, bytes);                                                \
            if (ch.alg == RW_COLL_PASSTHROUGH && !ch.tree) {                                            \
                rwc_decide_remember(op, comm, root, bytes, &(key), &ch, 1);                             \
                *pass = 1;                                                                              \
                return st;                                                                              \
            }                                                                                           \
            if (op == RW_COLL_BCAST && !ch.tree && ch.segment && ch.alg != RW_COLL_PASSTHROUGH &&           \
                shape_as_tree(&ch, comm, root, bytes))                                                  \
                ch.alg = RW_COLL_PASSTHROUGH;                                                           \
            int settled_ = 1, mpi_ = (verifiable) && rwc_verify_begin(op, comm, root, bytes, &ch, &settled_); \
            if (settled_)                                                                               \
                rwc_decide_remember(op, comm, root, bytes, &(key), &ch, mpi_);                          \
            if (mpi_) { /* a trial or the verdict */                                                    \
                *pass = 1;                                                                              \
                return st;                                                                              \
            }                                                                                           \
        }                                                                                               \
        rwc_trace_source(ch.source);                                                                    \
        if (ch.tree) {                                                                                  \
            st = on_tree;                                                                               \
            if (!st)                                                                                    \
                rwc_trace_choice(op, &ch, comm, bytes);                                                 \
        } else if (ch.alg != RW_COLL_PASSTHROUGH) {                                                     \
            rwc_params prm = rwc_decision_params();                                                     \
            st = run;                                                                                   \
        }                                                                                               \
        rwc_trace_source(NULL);                                                                         \
        *pass = PASSED(st);                                                                             \
        return st;                                                                                      \
    } while (0)

/* the outcome's key of the calls without a reduction operation */
#define NO_TYPE MPI_DATATYPE_NULL
#define NO_OP MPI_OP_NULL
/* one (count, type) on every rank; gather's and scatter's root's and others' */
#define KEY(count, type, ktype, kop) {{(count), (count)}, {(type), (type)}, (ktype), (kop)}
#define KEY2(rc, rt, oc, ot) {{(rc), (oc)}, {(rt), (ot)}, NO_TYPE, NO_OP}

rw_status rwc_decided_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, int *pass)
{
    const rwc_key key = KEY(count, type, NO_TYPE, NO_OP);
    DECIDED(RW_COLL_BCAST, root, key, rwc_bytes_of(count, type), 1,
            rwc_run_bcast(buf, count, type, root, comm, ch.alg, &prm),
            rwc_run_bcast_tree(buf, count, type, ch.tree, comm, ch.segment));
}

rw_status rwc_decided_reduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root,
                             MPI_Comm comm, int *pass)
{
    const rwc_key key = KEY(count, type, type, op);
    DECIDED(RW_COLL_REDUCE, root, key, rwc_bytes_of(count, type), rwc_verify_order_free(op, type),
            rwc_run_reduce(s, r, count, type, op, root, comm, ch.alg, &prm),
            rwc_run_reduce_tree(s, r, count, type, op, ch.tree, comm));
}

/* gather: the root counts what it receives, every other rank what it sends */
static rw_status tree_gather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root,
                             MPI_Comm comm, const rw_tree *t)
{
    int me = rwc_is_root(comm, root);
    rw_status e = me ? blocks_fit(rc, rt, comm) : blocks_fit(sc, st, comm);
    return e ? e : rwc_run_gather_tree(s, sc, st, r, rc, rt, t, comm);
}

static rw_status tree_scatter(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root,
                              MPI_Comm comm, const rw_tree *t)
{
    int me = rwc_is_root(comm, root);
    rw_status e = me ? blocks_fit(sc, st, comm) : blocks_fit(rc, rt, comm);
    return e ? e : rwc_run_scatter_tree(s, sc, st, r, rc, rt, t, comm);
}

rw_status rwc_decided_gather(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype,
                             int root, MPI_Comm comm, int *pass)
{
    const rwc_key key = KEY2(rc, rtype, sc, stype);
    DECIDED(RW_COLL_GATHER, root, key, rwc_is_root(comm, root) ? rwc_bytes_of(rc, rtype) : rwc_bytes_of(sc, stype), 1,
            rwc_run_gather(s, sc, stype, r, rc, rtype, root, comm, ch.alg, &prm),
            tree_gather(s, sc, stype, r, rc, rtype, root, comm, ch.tree));
}

rw_status rwc_decided_scatter(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype,
                              int root, MPI_Comm comm, int *pass)
{
    const rwc_key key = KEY2(sc, stype, rc, rtype);
    DECIDED(RW_COLL_SCATTER, root, key, rwc_is_root(comm, root) ? rwc_bytes_of(sc, stype) : rwc_bytes_of(rc, rtype), 1,
            rwc_run_scatter(s, sc, stype, r, rc, rtype, root, comm, ch.alg, &prm),
            tree_scatter(s, sc, stype, r, rc, rtype, root, comm, ch.tree));
}

/* Allreduce over a tree: reduce to its root, broadcast from it. A rank's
 * data is in r when it passes MPI_IN_PLACE (the root's too: the tree
 * reduce takes MPI_IN_PLACE at the root). */
static rw_status tree_allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                const rw_tree *t, size_t segment)
{
    const void *mine = s == MPI_IN_PLACE && !rwc_is_root(comm, t->root) ? r : s;
    rw_status st = rwc_run_reduce_tree(mine, r, count, type, op, t, comm);
    return st ? st : rwc_run_bcast_tree(r, count, type, t, comm, segment);
}

/* Allgather over a tree: gather to its root, broadcast the whole buffer. */
static rw_status tree_allgather(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype,
                                MPI_Comm comm, const rw_tree *t, size_t segment)
{
    int me = 0;
    MPI_Aint lb, ext;
    rw_status st = blocks_fit(rc, rtype, comm);
    if (!st)
        st = rwc_mpi(PMPI_Comm_rank(comm, &me), "MPI_Comm_rank");
    if (!st)
        st = rwc_mpi(PMPI_Type_get_extent(rtype, &lb, &ext), "MPI_Type_get_extent");
    if (st)
        return st;
    if (s == MPI_IN_PLACE && me != t->root)
        st = rwc_run_gather_tree((char *)r + (MPI_Aint)me * rc * ext, rc, rtype, NULL, 0, rtype, t, comm);
    else
        st = rwc_run_gather_tree(s, sc, stype, r, rc, rtype, t, comm);
    int n = 0;
    PMPI_Comm_size(comm, &n);
    return st ? st : rwc_run_bcast_tree(r, rc * n, rtype, t, comm, segment);
}

rw_status rwc_decided_allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                int *pass)
{
    const rwc_key key = KEY(count, type, type, op);
    DECIDED(RW_COLL_ALLREDUCE, -1, key, rwc_bytes_of(count, type), rwc_verify_order_free(op, type),
            rwc_run_allreduce(s, r, count, type, op, comm, ch.alg, &prm),
            tree_allreduce(s, r, count, type, op, comm, ch.tree, ch.segment));
}

rw_status rwc_decided_allgather(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype,
                                MPI_Comm comm, int *pass)
{
    const rwc_key key = KEY(rc, rtype, NO_TYPE, NO_OP);
    DECIDED(RW_COLL_ALLGATHER, -1, key, rwc_bytes_of(rc, rtype), 1,
            rwc_run_allgather(s, sc, stype, r, rc, rtype, comm, ch.alg, &prm),
            tree_allgather(s, sc, stype, r, rc, rtype, comm, ch.tree, ch.segment));
}

/* alltoall: the library's own algorithms only (no tree). */
rw_status rwc_decided_alltoall(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype,
                               MPI_Comm comm, int *pass)
{
    const rwc_key key = KEY(rc, rtype, NO_TYPE, NO_OP);
    DECIDED(RW_COLL_ALLTOALL, -1, key, rwc_bytes_of(rc, rtype), 1,
            rwc_run_alltoall(s, sc, stype, r, rc, rtype, comm, ch.alg, &prm),
            RW_ERR_STATE);
}

