/* The algorithms behind one entry per collective: rwc_run_<op> checks the
 * case (refusing before anything is sent), then runs the algorithm on the
 * communicator's private duplicate; rw_coll_<op> (rankwise_coll.h) adds
 * the decision for RW_COLL_AUTO and the MPI's own for RW_COLL_PASSTHROUGH. */
#include "coll_trinary.h"
#include "coll.h"
#include "internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The public enum and the registry's ids are one numbering. */
_Static_assert((int)RW_COLL_AUTO == RW_ALGO_AUTO && (int)RW_COLL_PASSTHROUGH == RW_ALGO_PASSTHROUGH &&
                   (int)RW_COLL_BINOMIAL == RW_ALGO_BINOMIAL && (int)RW_COLL_KNOMIAL == RW_ALGO_KNOMIAL &&
                   (int)RW_COLL_FLAT == RW_ALGO_FLAT && (int)RW_COLL_CHAIN == RW_ALGO_CHAIN && (int)RW_COLL_HIER == RW_ALGO_HIER &&
                   (int)RW_COLL_RING == RW_ALGO_RING && (int)RW_COLL_RECURSIVE_DOUBLING == RW_ALGO_RECURSIVE_DOUBLING &&
                   (int)RW_COLL_TRINARY == RW_ALGO_TRINARY && (int)RW_COLL_PAIRWISE == RW_ALGO_PAIRWISE &&
                   (int)RW_COLL_SYMMETRIC == RW_ALGO_SYMMETRIC && (int)RW_COLL_MULTIRING == RW_ALGO_MULTIRING,
               "rw_coll_alg numbers the registry's algorithms");

const char *rw_coll_last_error(void)
{
    return rw_last_error();
}

const char *rw_coll_alg_name(rw_coll_alg alg)
{
    const rw_algo_info *a = rw_algo_by_id((int)alg);
    return a ? a->name : NULL;
}

rw_status rw_coll_alg_parse(const char *name, rw_coll_alg *out)
{
    const rw_algo_info *a = rw_algo_by_name(name);
    if (a) {
        *out = (rw_coll_alg)a->id;
        return RW_OK;
    }
    char known[256];
    return rw_fail(RW_ERR_ARG, "'%s' is not a collective algorithm (%s)", name ? name : "(null)",
                   rw_algo_names(known, sizeof known, RW_ALGO_AUTO, -1, 0));
}

static int is_tree_alg(rw_coll_alg alg)
{
    return alg >= RW_COLL_BINOMIAL && alg <= RW_COLL_HIER;
}

/* What every rooted call checks: a valid communicator and root, not an
 * intercommunicator, a tree algorithm. */
static rw_status setup(MPI_Comm comm, int root, rw_coll_alg alg, int rooted, rwc_comm **c)
{
    *c = NULL;
    if (comm == MPI_COMM_NULL)
        return rw_fail(RW_ERR_ARG, "MPI_COMM_NULL");
    rw_status st = rwc_comm_get(comm, c);
    if (st)
        return st;
    if (rooted && (root < 0 || root >= (*c)->size))
        return rw_fail(RW_ERR_ARG, "root %d is not a rank of a communicator of %d", root, (*c)->size);
    if (rooted && !is_tree_alg(alg) && !(rooted == 2 && alg == RW_COLL_TRINARY))
        return rw_fail(RW_ERR_ARG, "%s is not an algorithm of rooted collectives",
                       rw_coll_alg_name(alg) ? rw_coll_alg_name(alg) : "an unknown value");
    return RW_OK;
}

static rw_status count_ok(int count)
{
    return count < 0 ? rw_fail(RW_ERR_ARG, "count %d is negative", count) : RW_OK;
}

/* A check made before the communicator's cache exists: intercomm and bad
 * values must not create one (its MPI_Comm_dup is collective). */
static rw_status precheck(MPI_Comm comm, rw_coll_alg alg)
{
    int inter = 0;
    if (comm == MPI_COMM_NULL)
        return rw_fail(RW_ERR_ARG, "MPI_COMM_NULL");
    if (!rw_coll_alg_name(alg) || alg == RW_COLL_AUTO || alg == RW_COLL_PASSTHROUGH)
        return rw_fail(RW_ERR_ARG, "no algorithm to run");
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return rw_fail(RW_ERR_ARG, "not a communicator");
    return inter ? rw_fail(RW_ERR_STATE, "an intercommunicator (passed to the MPI)") : RW_OK;
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
static rw_status begin(MPI_Comm comm, rw_coll_alg alg, int count, MPI_Datatype type, const MPI_Op *op, int root,
                       int rooted, rwc_comm **c, size_t *bytes, int *commute)
{
    rw_status st = precheck(comm, alg);
    if (!st)
        st = count_ok(count);
    if (!st)
        st = rwc_type_bytes(count, type, bytes);
    if (!st && op)
        st = rwc_op_fits(*op, type);
    if (!st && op)
        st = commutative(*op, commute);
    if (!st && alg == RW_COLL_MULTIRING)
        st = rw_fail(RW_ERR_ARG, "multiring is an algorithm of allgather only");
    if (!st && op && alg == RW_COLL_TRINARY && !*commute)
        st = rw_fail(RW_ERR_STATE, "trinary %s: a non-commutative operation (the trees are out of rank order)",
                     rw_op_name(rooted ? RW_OP_REDUCE : RW_OP_ALLREDUCE));
    return st ? st : setup(comm, root, alg, rooted, c);
}

rw_status rwc_run_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, rw_coll_alg alg)
{
    rwc_comm *c;
    size_t bytes;
    const rw_tree *t;
    int commute = 1;
    rw_status st = begin(comm, alg, count, type, NULL, root, 2, &c, &bytes, &commute); /* 2: trinary too */
    if (st)
        return st;
    if (bytes == 0 || c->size == 1)
        return RW_OK;
    const int32_t *order = NULL;
    if (alg == RW_COLL_TRINARY && !(st = rwc_trinary_order(c, &order))) {
        rwc_trace(RWC_BCAST, alg, comm, bytes);
        return rwc_bcast_trinary(buf, count, type, root, c->dup, order, rwc_segment_bytes());
    }
    if (st)
        return st;
    if ((st = rwc_tree_get(c, alg, root, bytes, &t)))
        return st;
    rwc_trace(RWC_BCAST, alg, comm, bytes);
    return rwc_bcast_tree(buf, count, type, t, c->dup, rwc_segment_bytes(), alg == RW_COLL_FLAT);
}

/* A non-commutative reduce over a tree out of rank order goes over the
 * binomial tree rooted at 0 (in order), then from 0 to the root. */
static rw_status reduce_in_order(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root,
                                 rwc_comm *c)
{
    const rw_tree *t0;
    rw_status st = rwc_tree_get(c, RW_COLL_BINOMIAL, 0, 0, &t0);
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
                         rw_coll_alg alg)
{
    rwc_comm *c;
    size_t bytes;
    const rw_tree *t;
    int commute = 0;
    rw_status st = begin(comm, alg, count, type, &op, root, 2, &c, &bytes, &commute); /* 2: trinary too */
    if (st)
        return st;
    if (count == 0)
        return RW_OK;
    const int32_t *order = NULL;
    if (alg == RW_COLL_TRINARY && !(st = rwc_trinary_order(c, &order))) {
        rwc_trace(RWC_REDUCE, alg, comm, bytes);
        return rwc_reduce_trinary(s, r, count, type, op, root, c->dup, order, rwc_segment_bytes());
    }
    if (st)
        return st;
    if ((st = rwc_tree_get(c, alg, root, bytes, &t)))
        return st;
    rwc_trace(RWC_REDUCE, alg, comm, bytes);
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
static rw_status run_blocks(rwc_op op, const void *s, int sc, MPI_Datatype stype, void *r, int rc,
                            MPI_Datatype rtype, int root, MPI_Comm comm, rw_coll_alg alg)
{
    rwc_comm *c;
    size_t blk;
    const rw_tree *t;
    rw_status st = precheck(comm, alg);
    if (!st)
        st = setup(comm, root, alg, 1, &c);
    if (st)
        return st;
    /* gather: the root counts what it receives; scatter: every other rank does */
    int use_recv = (c->rank == root) == (op == RWC_GATHER);
    int count = use_recv ? rc : sc;
    MPI_Datatype type = use_recv ? rtype : stype;
    if ((st = count_ok(count)) || (st = rwc_type_bytes(count, type, &blk)))
        return st;
    if ((st = fits(blk, c->size)))
        return st;
    if (blk == 0)
        return RW_OK;
    if ((st = rwc_tree_get(c, alg, root, blk, &t)))
        return st;
    rwc_trace(op, alg, comm, blk);
    return op == RWC_GATHER ? rwc_gather_tree(s, sc, stype, r, rc, rtype, t, c->dup)
                            : rwc_scatter_tree(s, sc, stype, r, rc, rtype, t, c->dup);
}

rw_status rwc_run_gather(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype, int root,
                         MPI_Comm comm, rw_coll_alg alg)
{
    return run_blocks(RWC_GATHER, s, sc, stype, r, rc, rtype, root, comm, alg);
}

rw_status rwc_run_scatter(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype, int root,
                          MPI_Comm comm, rw_coll_alg alg)
{
    return run_blocks(RWC_SCATTER, s, sc, stype, r, rc, rtype, root, comm, alg);
}

rw_status rwc_run_allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                            rw_coll_alg alg)
{
    rwc_comm *c;
    size_t bytes;
    int commute = 0;
    rw_status st = begin(comm, alg, count, type, &op, 0, 0, &c, &bytes, &commute);
    if (st)
        return st;
    if (count == 0)
        return RW_OK;
    rwc_trace(RWC_ALLREDUCE, alg, comm, bytes);
    if (alg == RW_COLL_TRINARY) { /* reduce to 0 and broadcast from 0, both over the trinary trees */
        const int32_t *order = NULL;
        st = rwc_trinary_order(c, &order);
        if (!st)
            st = rwc_reduce_trinary(c->rank == 0 ? s : (s == MPI_IN_PLACE ? r : s), r, count, type, op, 0, c->dup,
                                    order, rwc_segment_bytes());
        return st ? st : rwc_bcast_trinary(r, count, type, 0, c->dup, order, rwc_segment_bytes());
    }
    if (commute && alg == RW_COLL_RING)
        return rwc_allreduce_ring(s, r, count, type, op, c->dup);
    if (commute && alg == RW_COLL_RECURSIVE_DOUBLING)
        return rwc_allreduce_rd(s, r, count, type, op, c->dup);
    if (commute && alg == RW_COLL_HIER)
        return rwc_allreduce_hier(s, r, count, type, op, c);
    /* reduce to 0 and broadcast from 0 over the tree (binomial for ring
     * and doubling with a non-commutative operation) */
    rw_coll_alg shape = is_tree_alg(alg) ? alg : RW_COLL_BINOMIAL;
    const rw_tree *t;
    if ((st = rwc_tree_get(c, shape, 0, bytes, &t)))
        return st;
    if (!commute && !rw_tree_is_in_order(t))
        st = reduce_in_order(c->rank == 0 ? s : (s == MPI_IN_PLACE ? r : s), r, count, type, op, 0, c);
    else
        st = rwc_reduce_tree(c->rank == 0 ? s : (s == MPI_IN_PLACE ? r : s), r, count, type, op, t, c->dup);
    return st ? st : rwc_bcast_tree(r, count, type, t, c->dup, rwc_segment_bytes(), shape == RW_COLL_FLAT);
}

rw_status rwc_run_allgather(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype,
                            MPI_Comm comm, rw_coll_alg alg)
{
    rwc_comm *c;
    size_t blk;
    rw_status st = precheck(comm, alg);
    if (!st)
        st = count_ok(rc);
    if (!st)
        st = rwc_type_bytes(rc, rtype, &blk);
    if (!st && alg == RW_COLL_TRINARY)
        st = rw_fail(RW_ERR_ARG, "trinary is not an allgather algorithm");
    if (!st)
        st = setup(comm, 0, alg, 0, &c);
    if (!st)
        st = fits(blk, c->size);
    if (st)
        return st;
    if (blk == 0)
        return RW_OK;
    rwc_trace(RWC_ALLGATHER, alg, comm, blk);
    if (alg == RW_COLL_RING)
        return rwc_allgather_ring(s, sc, stype, r, rc, rtype, c->dup);
    if (alg == RW_COLL_RECURSIVE_DOUBLING)
        return rwc_allgather_rd(s, sc, stype, r, rc, rtype, c->dup);
    if (alg == RW_COLL_MULTIRING)
        return rwc_allgather_multiring(s, sc, stype, r, rc, rtype, c);
    /* gather to 0, broadcast from 0 over the tree */
    const rw_tree *t;
    MPI_Aint lb, ext;
    if ((st = rwc_tree_get(c, alg, 0, blk, &t)) ||
        (st = rwc_mpi(PMPI_Type_get_extent(rtype, &lb, &ext), "MPI_Type_get_extent")))
        return st;
    if (s == MPI_IN_PLACE && c->rank != 0)
        st = rwc_gather_tree((char *)r + (MPI_Aint)c->rank * rc * ext, rc, rtype, NULL, 0, rtype, t, c->dup);
    else
        st = rwc_gather_tree(s, sc, stype, r, rc, rtype, t, c->dup);
    return st ? st : rwc_bcast_tree(r, rc * c->size, rtype, t, c->dup, rwc_segment_bytes(), alg == RW_COLL_FLAT);
}

/* ---- rankwise_coll.h: the decision for RW_COLL_AUTO (entry.c), the MPI for PASSTHROUGH ---- */

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

rw_status rw_coll_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, rw_coll_alg alg)
{
    if (alg == RW_COLL_AUTO)
        return rwc_auto_bcast(buf, count, type, root, comm);
    if (alg == RW_COLL_PASSTHROUGH)
        return rwc_mpi(rwc_real_bcast(buf, count, type, root, comm), "MPI_Bcast");
    return rwc_run_bcast(buf, count, type, root, comm, alg);
}

rw_status rw_coll_reduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                         rw_coll_alg alg)
{
    if (alg == RW_COLL_AUTO)
        return rwc_auto_reduce(s, r, count, type, op, root, comm);
    if (alg == RW_COLL_PASSTHROUGH)
        return rwc_mpi(rwc_real_reduce(s, r, count, type, op, root, comm), "MPI_Reduce");
    return rwc_run_reduce(s, r, count, type, op, root, comm, alg);
}

rw_status rw_coll_gather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root,
                         MPI_Comm comm, rw_coll_alg alg)
{
    if (alg == RW_COLL_AUTO)
        return rwc_auto_gather(s, sc, st, r, rc, rt, root, comm);
    if (alg == RW_COLL_PASSTHROUGH)
        return rwc_mpi(rwc_real_gather(s, sc, st, r, rc, rt, root, comm), "MPI_Gather");
    return rwc_run_gather(s, sc, st, r, rc, rt, root, comm, alg);
}

rw_status rw_coll_scatter(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root,
                          MPI_Comm comm, rw_coll_alg alg)
{
    if (alg == RW_COLL_AUTO)
        return rwc_auto_scatter(s, sc, st, r, rc, rt, root, comm);
    if (alg == RW_COLL_PASSTHROUGH)
        return rwc_mpi(rwc_real_scatter(s, sc, st, r, rc, rt, root, comm), "MPI_Scatter");
    return rwc_run_scatter(s, sc, st, r, rc, rt, root, comm, alg);
}

rw_status rw_coll_allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                            rw_coll_alg alg)
{
    if (alg == RW_COLL_AUTO)
        return rwc_auto_allreduce(s, r, count, type, op, comm);
    if (alg == RW_COLL_PASSTHROUGH)
        return rwc_mpi(rwc_real_allreduce(s, r, count, type, op, comm), "MPI_Allreduce");
    return rwc_run_allreduce(s, r, count, type, op, comm, alg);
}

rw_status rw_coll_allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm,
                            rw_coll_alg alg)
{
    if (alg == RW_COLL_AUTO)
        return rwc_auto_allgather(s, sc, st, r, rc, rt, comm);
    if (alg == RW_COLL_PASSTHROUGH)
        return rwc_mpi(rwc_real_allgather(s, sc, st, r, rc, rt, comm), "MPI_Allgather");
    return rwc_run_allgather(s, sc, st, r, rc, rt, comm, alg);
}

/* ---- over a caller's tree ---- */

static rw_status tree_setup(const rw_tree *tree, MPI_Comm comm, rwc_comm **c)
{
    rw_status st = precheck(comm, RW_COLL_BINOMIAL);
    if (!st)
        st = rw_tree_check(tree);
    if (!st)
        st = rwc_comm_get(comm, c);
    if (!st && tree->n_ranks != (*c)->size)
        st = rw_fail(RW_ERR_ARG, "a tree of %d ranks on a communicator of %d", (int)tree->n_ranks, (*c)->size);
    return st;
}

rw_status rw_coll_bcast_tree(void *buf, int count, MPI_Datatype type, const rw_tree *tree, MPI_Comm comm,
                             size_t segment_bytes)
{
    rwc_comm *c;
    rw_status st = count_ok(count);
    if (!st)
        st = tree_setup(tree, comm, &c);
    return st ? st : rwc_bcast_tree(buf, count, type, tree, c->dup, segment_bytes, 0);
}

rw_status rw_coll_reduce_tree(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, const rw_tree *tree,
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

rw_status rw_coll_gather_tree(const void *s, int sc, MPI_Datatype st_, void *r, int rc, MPI_Datatype rt,
                              const rw_tree *tree, MPI_Comm comm)
{
    rwc_comm *c;
    rw_status st = tree_setup(tree, comm, &c);
    return st ? st : rwc_gather_tree(s, sc, st_, r, rc, rt, tree, c->dup);
}

rw_status rw_coll_scatter_tree(const void *s, int sc, MPI_Datatype st_, void *r, int rc, MPI_Datatype rt,
                               const rw_tree *tree, MPI_Comm comm)
{
    rwc_comm *c;
    rw_status st = tree_setup(tree, comm, &c);
    return st ? st : rwc_scatter_tree(s, sc, st_, r, rc, rt, tree, c->dup);
}
