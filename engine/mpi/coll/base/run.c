/* The algorithms behind one entry per collective: rwc_run_<op> checks the
 * case (refusing before anything is sent), then runs the algorithm the
 * registry's id names on the communicator's private duplicate, with the
 * parameters it is given (rwc_params: segment, radix, the network's order,
 * the all-to-all cap); rwc_run_<op>_tree the same over a given tree. */
#include "base.h"
#include "coll_trinary.h"
#include "internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int is_tree_alg(rw_coll_alg alg)
{
    const rw_algo_info *a = rw_algo_by_id((int)alg);
    return a && (a->flags & RW_ALGO_TREE);
}

/* After precheck (a communicator, an algorithm of op): the communicator's
 * cache and a root of it for a rooted op. */
static rw_status setup(MPI_Comm comm, rw_coll_op op, int root, rwc_comm **c)
{
    *c = NULL;
    rw_status st = rwc_comm_get(comm, c);
    if (st)
        return st;
    if (rw_op_rooted(op) && (root < 0 || root >= (*c)->size))
        return rw_fail(RW_ERR_ARG, "root %d is not a rank of a communicator of %d", root, (*c)->size);
    return RW_OK;
}

static rw_status count_ok(int count)
{
    return count < 0 ? rw_fail(RW_ERR_ARG, "count %d is negative", count) : RW_OK;
}

/* Checks made before the communicator's cache exists: intercomm and bad
 * values must not create one (its MPI_Comm_dup is collective). */
static rw_status comm_null(MPI_Comm comm)
{
    return comm == MPI_COMM_NULL ? rw_fail(RW_ERR_ARG, "MPI_COMM_NULL") : RW_OK;
}

/* A communicator not MPI_COMM_NULL: an intracommunicator. */
static rw_status intra_check(MPI_Comm comm)
{
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return rw_fail(RW_ERR_ARG, "not a communicator");
    return inter ? rw_fail(RW_ERR_STATE, "an intercommunicator (passed to the MPI)") : RW_OK;
}

static rw_status comm_check(MPI_Comm comm)
{
    rw_status st = comm_null(comm);
    return st ? st : intra_check(comm);
}

/* An algorithm runs only the operations the registry gives it: refused
 * here, before anything is sent, rather than run as another one. */
static rw_status precheck(MPI_Comm comm, rw_coll_op kind, rw_coll_alg alg)
{
    char known[256];
    rw_status st = comm_null(comm); /* before the algorithm's errors */
    if (st)
        return st;
    if (!rw_coll_alg_name(alg) || alg == RW_COLL_AUTO || alg == RW_COLL_PASSTHROUGH)
        return rw_fail(RW_ERR_ARG, "no algorithm to run");
    if (!rw_algo_valid(kind, (int)alg))
        return rw_fail(RW_ERR_ARG, "%s is not an algorithm of %s (%s)", rw_coll_alg_name(alg), rw_op_name(kind),
                       rw_algo_names(known, sizeof known, RW_ALGO_BINOMIAL, kind, 1));
    return intra_check(comm);
}

static rw_status commutative(MPI_Op op, int *out)
{
    return rwc_mpi(PMPI_Op_commutative(op, out), "MPI_Op_commutative");
}

/* The checks of a call that moves `count` elements of `type`, in the
 * order that creates the communicator's cache (a collective duplicate)
 * only for a call that will run: the bytes it moves; with an operation
 * (op not NULL: reduce, allreduce), that it is defined on the type
 * (rwc_op_fits) and whether it commutes, which the trinary trees need (an
 * invalid operation is refused here, before any message). */
static rw_status begin(rw_coll_op kind, MPI_Comm comm, rw_coll_alg alg, int count, MPI_Datatype type, const MPI_Op *op,
                       int root, rwc_comm **c, size_t *bytes, int *commute)
{
    const rw_algo_info *a = rw_algo_by_id((int)alg);
    rw_status st = precheck(comm, kind, alg);
    if (!st)
        st = count_ok(count);
    if (!st)
        st = rwc_type_bytes(count, type, bytes);
    if (!st && op)
        st = rwc_op_fits(*op, type);
    if (!st && op)
        st = commutative(*op, commute);
    if (!st && op && a && (a->flags & RW_ALGO_COMMUTES) && !*commute)
        st = rw_fail(RW_ERR_STATE, "%s %s: a non-commutative operation (the trees are out of rank order)", a->name,
                     rw_op_name(kind));
    return st ? st : setup(comm, kind, root, c);
}

/* ---- the run table: what each operation runs for an algorithm that is
 * not a tree shape, keyed by the registry's ids (src/coll/registry.c); a
 * tree shape runs its tree (allreduce: reduce to 0 and bcast from it,
 * allgather: gather to 0 and bcast). order: the network's order of the
 * ranks for the algorithms laid along it (RW_ALGO_ORDER), else NULL. ---- */

static rw_status bcast_trinary(void *buf, int count, MPI_Datatype type, int root, rwc_comm *c, const int32_t *order,
                               const rwc_params *prm)
{
    return rwc_bcast_trinary(buf, count, type, root, c->dup, order, prm->segment);
}

static rw_status reduce_trinary(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root,
                                rwc_comm *c, const int32_t *order, const rwc_params *prm)
{
    return rwc_reduce_trinary(s, r, count, type, op, root, c->dup, order, prm->segment);
}

/* reduce to 0 and broadcast from 0, both over the trinary trees */
static rw_status allreduce_trinary(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, rwc_comm *c,
                                   const int32_t *order, const rwc_params *prm)
{
    rw_status st = rwc_reduce_trinary(c->rank == 0 ? s : (s == MPI_IN_PLACE ? r : s), r, count, type, op, 0, c->dup,
                                      order, prm->segment);
    return st ? st : rwc_bcast_trinary(r, count, type, 0, c->dup, order, prm->segment);
}

static rw_status allreduce_ring(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, rwc_comm *c,
                                const int32_t *order, const rwc_params *prm)
{
    return rwc_allreduce_ring(s, r, count, type, op, c->dup);
}

static rw_status allreduce_rd(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, rwc_comm *c,
                              const int32_t *order, const rwc_params *prm)
{
    return rwc_allreduce_rd(s, r, count, type, op, c->dup);
}

static rw_status allreduce_hier(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, rwc_comm *c,
                                const int32_t *order, const rwc_params *prm)
{
    return rwc_allreduce_hier(s, r, count, type, op, c);
}

static rw_status allgather_ring(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                                rwc_comm *c, const int32_t *order)
{
    return rwc_allgather_ring(s, sc, st, r, rc, rt, c->dup);
}

static rw_status allgather_rd(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, rwc_comm *c,
                              const int32_t *order)
{
    return rwc_allgather_rd(s, sc, st, r, rc, rt, c->dup);
}

typedef struct run_entry {
    rw_coll_alg alg;
    rw_status (*bcast)(void *, int, MPI_Datatype, int, rwc_comm *, const int32_t *, const rwc_params *);
    rw_status (*reduce)(const void *, void *, int, MPI_Datatype, MPI_Op, int, rwc_comm *, const int32_t *,
                        const rwc_params *);
    rw_status (*allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, rwc_comm *, const int32_t *,
                           const rwc_params *);
    int allreduce_commutes; /* commutative operations only: the others run the binomial tree */
    rw_status (*allgather)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, rwc_comm *, const int32_t *);
} run_entry;

/* alltoall's pairwise and symmetric: alltoall.c (its own blocks, the cap). */
static const run_entry RUN[] = {
    {RW_COLL_RING, NULL, NULL, allreduce_ring, 1, allgather_ring},
    {RW_COLL_RECURSIVE_DOUBLING, NULL, NULL, allreduce_rd, 1, allgather_rd},
    {RW_COLL_HIER, NULL, NULL, allreduce_hier, 1, NULL},
    {RW_COLL_TRINARY, bcast_trinary, reduce_trinary, allreduce_trinary, 0, NULL},
    {RW_COLL_MULTIRING, NULL, NULL, NULL, 0, rwc_allgather_multiring},
};

static const run_entry *run_of(rw_coll_alg alg)
{
    for (size_t i = 0; i < sizeof RUN / sizeof *RUN; i++)
        if (RUN[i].alg == alg)
            return &RUN[i];
    return NULL;
}

/* The network's order for an algorithm the registry lays along it. */
static rw_status order_of(rwc_comm *c, rw_coll_alg alg, const rwc_params *prm, const int32_t **order)
{
    const rw_algo_info *a = rw_algo_by_id((int)alg);
    *order = NULL;
    return a && (a->flags & RW_ALGO_ORDER) ? prm->order(c, alg, order) : RW_OK;
}

rw_status rwc_run_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, rw_coll_alg alg,
                        const rwc_params *prm)
{
    rwc_comm *c;
    size_t bytes;
    const rw_tree *t;
    int commute = 1;
    rw_status st = begin(RW_COLL_BCAST, comm, alg, count, type, NULL, root, &c, &bytes, &commute);
    if (st)
        return st;
    if (bytes == 0 || c->size == 1)
        return RW_OK;
    const run_entry *run = run_of(alg);
    if (run && run->bcast) {
        const int32_t *order = NULL;
        if ((st = order_of(c, alg, prm, &order)))
            return st;
        rwc_trace(RW_COLL_BCAST, alg, comm, bytes);
        return run->bcast(buf, count, type, root, c, order, prm);
    }
    if ((st = rwc_tree_get(c, alg, root, bytes, prm->radix, &t)))
        return st;
    rwc_trace(RW_COLL_BCAST, alg, comm, bytes);
    return rwc_bcast_tree(buf, count, type, t, c->dup, prm->segment, alg == RW_COLL_FLAT);
}

/* A non-commutative reduce over a tree out of rank order goes over the
 * binomial tree rooted at 0 (in order), then from 0 to the root. */
static rw_status reduce_in_order(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root,
                                 rwc_comm *c)
{
    const rw_tree *t0;
    rw_status st = rwc_tree_get(c, RW_COLL_BINOMIAL, 0, 0, 2, &t0);
    if (st || root == 0)
        return st ? st : rwc_reduce_tree(s, r, count, type, op, t0, c->dup);
    if (c->rank != 0) { /* the root takes part as any rank (in place: its data is in r), then receives */
        st = rwc_reduce_tree(s == MPI_IN_PLACE ? r : s, NULL, count, type, op, t0, c->dup);
        if (!st && c->rank == root)
            st = rwc_mpi(PMPI_Recv(r, count, type, 0, RWC_TAG_FORWARD, c->dup, MPI_STATUS_IGNORE), "MPI_Recv (reduce)");
        return st;
    }
    void *mem;
    char *tmp;
    if ((st = rwc_typed_alloc(count, type, &mem, &tmp)))
        return st;
    st = rwc_reduce_tree(s, tmp, count, type, op, t0, c->dup);
    if (!st)
        st = rwc_mpi(PMPI_Send(tmp, count, type, root, RWC_TAG_FORWARD, c->dup), "MPI_Send (reduce)");
    free(mem);
    return st;
}

rw_status rwc_run_reduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                         rw_coll_alg alg, const rwc_params *prm)
{
    rwc_comm *c;
    size_t bytes;
    const rw_tree *t;
    int commute = 0;
    rw_status st = begin(RW_COLL_REDUCE, comm, alg, count, type, &op, root, &c, &bytes, &commute);
    if (st)
        return st;
    if (count == 0)
        return RW_OK;
    const run_entry *run = run_of(alg);
    if (run && run->reduce) {
        const int32_t *order = NULL;
        if ((st = order_of(c, alg, prm, &order)))
            return st;
        rwc_trace(RW_COLL_REDUCE, alg, comm, bytes);
        return run->reduce(s, r, count, type, op, root, c, order, prm);
    }
    if ((st = rwc_tree_get(c, alg, root, bytes, prm->radix, &t)))
        return st;
    rwc_trace(RW_COLL_REDUCE, alg, comm, bytes);
    if (!commute && !rw_tree_is_in_order(t))
        return reduce_in_order(s, r, count, type, op, root, c);
    return rwc_reduce_tree(s, r, count, type, op, t, c->dup);
}

/* Gathers and scatters move whole subtrees as one MPI message. */
static rw_status fits(size_t block, int n)
{
    return block * (size_t)n > INT_MAX ? rw_fail(RW_ERR_STATE, "%d blocks of %zu bytes exceed an MPI count", n, block)
                                       : RW_OK;
}

/* Gather and scatter share their set-up; one block per rank moves. */
static rw_status run_blocks(rw_coll_op op, const void *s, int sc, MPI_Datatype stype, void *r, int rc,
                            MPI_Datatype rtype, int root, MPI_Comm comm, rw_coll_alg alg, const rwc_params *prm)
{
    rwc_comm *c;
    size_t blk;
    const rw_tree *t;
    rw_status st = precheck(comm, op, alg);
    if (!st)
        st = setup(comm, op, root, &c);
    if (st)
        return st;
    /* gather: the root counts what it receives; scatter: every other rank does */
    int use_recv = (c->rank == root) == (op == RW_COLL_GATHER);
    int count = use_recv ? rc : sc;
    MPI_Datatype type = use_recv ? rtype : stype;
    if ((st = count_ok(count)) || (st = rwc_type_bytes(count, type, &blk)))
        return st;
    if ((st = fits(blk, c->size)))
        return st;
    if (blk == 0)
        return RW_OK;
    if ((st = rwc_tree_get(c, alg, root, blk, prm->radix, &t)))
        return st;
    rwc_trace(op, alg, comm, blk);
    return op == RW_COLL_GATHER ? rwc_gather_tree(s, sc, stype, r, rc, rtype, t, c->dup)
                            : rwc_scatter_tree(s, sc, stype, r, rc, rtype, t, c->dup);
}

rw_status rwc_run_gather(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype, int root,
                         MPI_Comm comm, rw_coll_alg alg, const rwc_params *prm)
{
    return run_blocks(RW_COLL_GATHER, s, sc, stype, r, rc, rtype, root, comm, alg, prm);
}

rw_status rwc_run_scatter(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype, int root,
                          MPI_Comm comm, rw_coll_alg alg, const rwc_params *prm)
{
    return run_blocks(RW_COLL_SCATTER, s, sc, stype, r, rc, rtype, root, comm, alg, prm);
}

rw_status rwc_run_allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                            rw_coll_alg alg, const rwc_params *prm)
{
    rwc_comm *c;
    size_t bytes;
    int commute = 0;
    rw_status st = begin(RW_COLL_ALLREDUCE, comm, alg, count, type, &op, 0, &c, &bytes, &commute);
    if (st)
        return st;
    if (count == 0)
        return RW_OK;
    rwc_trace(RW_COLL_ALLREDUCE, alg, comm, bytes);
    const run_entry *run = run_of(alg);
    if (run && run->allreduce && (commute || !run->allreduce_commutes)) {
        const int32_t *order = NULL;
        return (st = order_of(c, alg, prm, &order)) ? st : run->allreduce(s, r, count, type, op, c, order, prm);
    }
    /* reduce to 0 and broadcast from 0 over the tree (binomial for ring
     * and doubling with a non-commutative operation) */
    rw_coll_alg shape = is_tree_alg(alg) ? alg : RW_COLL_BINOMIAL;
    const rw_tree *t;
    if ((st = rwc_tree_get(c, shape, 0, bytes, prm->radix, &t)))
        return st;
    if (!commute && !rw_tree_is_in_order(t))
        st = reduce_in_order(c->rank == 0 ? s : (s == MPI_IN_PLACE ? r : s), r, count, type, op, 0, c);
    else
        st = rwc_reduce_tree(c->rank == 0 ? s : (s == MPI_IN_PLACE ? r : s), r, count, type, op, t, c->dup);
    return st ? st : rwc_bcast_tree(r, count, type, t, c->dup, prm->segment, shape == RW_COLL_FLAT);
}

rw_status rwc_run_allgather(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype,
                            MPI_Comm comm, rw_coll_alg alg, const rwc_params *prm)
{
    rwc_comm *c;
    size_t blk;
    rw_status st = precheck(comm, RW_COLL_ALLGATHER, alg);
    if (!st)
        st = count_ok(rc);
    if (!st)
        st = rwc_type_bytes(rc, rtype, &blk);
    if (!st)
        st = setup(comm, RW_COLL_ALLGATHER, 0, &c);
    if (!st)
        st = fits(blk, c->size);
    if (st)
        return st;
    if (blk == 0)
        return RW_OK;
    rwc_trace(RW_COLL_ALLGATHER, alg, comm, blk);
    const run_entry *run = run_of(alg);
    if (run && run->allgather) {
        const int32_t *order = NULL;
        return (st = order_of(c, alg, prm, &order)) ? st : run->allgather(s, sc, stype, r, rc, rtype, c, order);
    }
    /* gather to 0, broadcast from 0 over the tree */
    const rw_tree *t;
    MPI_Aint lb, ext;
    if ((st = rwc_tree_get(c, alg, 0, blk, prm->radix, &t)) ||
        (st = rwc_mpi(PMPI_Type_get_extent(rtype, &lb, &ext), "MPI_Type_get_extent")))
        return st;
    if (s == MPI_IN_PLACE && c->rank != 0)
        st = rwc_gather_tree((char *)r + (MPI_Aint)c->rank * rc * ext, rc, rtype, NULL, 0, rtype, t, c->dup);
    else
        st = rwc_gather_tree(s, sc, stype, r, rc, rtype, t, c->dup);
    return st ? st : rwc_bcast_tree(r, rc * c->size, rtype, t, c->dup, prm->segment, alg == RW_COLL_FLAT);
}

size_t rwc_bytes_of(int count, MPI_Datatype type)
{
    size_t b = 0;
    return count >= 0 && rwc_type_bytes(count, type, &b) == RW_OK ? b : 0;
}

int rwc_is_root(MPI_Comm comm, int root)
{
    int r = -1;
    return comm != MPI_COMM_NULL && PMPI_Comm_rank(comm, &r) == MPI_SUCCESS && r == root;
}

/* ---- over a caller's tree ---- */

static rw_status tree_setup(const rw_tree *tree, MPI_Comm comm, rwc_comm **c)
{
    rw_status st = comm_check(comm);
    if (!st)
        st = rw_tree_check(tree);
    if (!st)
        st = rwc_comm_get(comm, c);
    if (!st && tree->n_ranks != (*c)->size)
        st = rw_fail(RW_ERR_ARG, "a tree of %d ranks on a communicator of %d", (int)tree->n_ranks, (*c)->size);
    return st;
}

rw_status rwc_run_bcast_tree(void *buf, int count, MPI_Datatype type, const rw_tree *tree, MPI_Comm comm,
                             size_t segment_bytes)
{
    rwc_comm *c;
    rw_status st = count_ok(count);
    if (!st)
        st = tree_setup(tree, comm, &c);
    return st ? st : rwc_bcast_tree(buf, count, type, tree, c->dup, segment_bytes, 0);
}

rw_status rwc_run_reduce_tree(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, const rw_tree *tree,
                              MPI_Comm comm)
{
    rwc_comm *c;
    int commute = 0;
    rw_status st = count_ok(count);
    if (!st)
        st = rwc_op_fits(op, type);
    if (!st)
        st = commutative(op, &commute);
    if (!st && !commute && !rw_tree_is_in_order(tree))
        st = rw_fail(RW_ERR_STATE, "a non-commutative operation over a tree out of rank order");
    if (!st)
        st = tree_setup(tree, comm, &c);
    return st ? st : rwc_reduce_tree(s, r, count, type, op, tree, c->dup);
}

rw_status rwc_run_gather_tree(const void *s, int sc, MPI_Datatype st_, void *r, int rc, MPI_Datatype rt,
                              const rw_tree *tree, MPI_Comm comm)
{
    rwc_comm *c;
    rw_status st = tree_setup(tree, comm, &c);
    return st ? st : rwc_gather_tree(s, sc, st_, r, rc, rt, tree, c->dup);
}

rw_status rwc_run_scatter_tree(const void *s, int sc, MPI_Datatype st_, void *r, int rc, MPI_Datatype rt,
                               const rw_tree *tree, MPI_Comm comm)
{
    rwc_comm *c;
    rw_status st = tree_setup(tree, comm, &c);
    return st ? st : rwc_scatter_tree(s, sc, st_, r, rc, rt, tree, c->dup);
}
