/* Reduce over a tree. A commutative operation receives the children in
 * the reverse of the tree's send order (smallest subtree first on the
 * standard shapes, the order the model's trees are built and scored for:
 * rw_sched_tree), folding each arrival into the rank's value; the
 * receives are posted at once while they hold at most RW_REDUCE_POSTED_MAX
 * bytes in all (rankwise_predict.h), which the predictor knows. A
 * non-commutative one combines in rank order: children below the rank
 * first (nearest first, on the left), then those above it (nearest first,
 * on the right); on an in-order tree (rw_tree_is_in_order) that is the
 * rank order MPI requires. Either order depends only on the tree, so a
 * floating-point result is the same on every run with the same
 * communicator, root and size. */
#include "base.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static int by_rank(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* A commutative fold with every child's receive posted at once (under
 * SMPI a transfer starts when its receive is posted: one after the other,
 * each child's message waited its whole latency behind the previous one),
 * waited for and folded in the same order as one at a time, the last child
 * first, so the result does not depend on which arrives first. */
static rw_status fold_posted(char *acc, int count, MPI_Datatype type, MPI_Op op, const int32_t *child, int n,
                             MPI_Comm dup)
{
    MPI_Request *req = malloc(sizeof *req * (size_t)n);
    void **mem = calloc((size_t)n, sizeof *mem);
    char **buf = calloc((size_t)n, sizeof *buf);
    rw_status st = req && mem && buf ? RW_OK : rw_fail(RW_ERR_NOMEM, "out of memory for %d children", n);
    int posted = 0;
    for (int i = n - 1; !st && i >= 0; i--) {
        st = rwc_typed_alloc(count, type, &mem[i], &buf[i]);
        if (!st)
            st = rwc_mpi(PMPI_Irecv(buf[i], count, type, child[i], RWC_TAG_REDUCE, dup, &req[posted]),
                         "MPI_Irecv (reduce)");
        posted += !st;
    }
    /* request k is child n - 1 - k: waited for in posting order */
    for (int k = 0; k < posted; k++) {
        rw_status w = rwc_mpi(PMPI_Wait(&req[k], MPI_STATUS_IGNORE), "MPI_Wait (reduce)");
        if (!st && !(st = w))
            st = rwc_mpi(PMPI_Reduce_local(buf[n - 1 - k], acc, count, type, op), "MPI_Reduce_local");
    }
    for (int i = 0; mem && i < n; i++)
        free(mem[i]);
    free(req);
    free(mem);
    free(buf);
    return st;
}

rw_status rwc_reduce_tree(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                          const rw_tree *t, MPI_Comm dup)
{
    int me;
    PMPI_Comm_rank(dup, &me);
    int root = t->root, first = t->first_child[me], n = t->first_child[me + 1] - first;
    if (count == 0)
        return RW_OK;
    const void *mine = me == root && sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (n == 0 && me == root) /* alone */
        return mine == recvbuf ? RW_OK : rwc_copy(mine, count, type, recvbuf, count, type, dup);
    if (n == 0) /* a leaf sends its own data as it is */
        return me == root ? RW_OK
                          : rwc_mpi(PMPI_Send(mine, count, type, t->parent[me], RWC_TAG_REDUCE, dup),
                                    "MPI_Send (reduce)");
    int32_t *kids = malloc(sizeof(int32_t) * (size_t)n);
    void *acc_mem = NULL, *tmp_mem = NULL;
    char *acc = NULL, *tmp = NULL;
    rw_status st = kids ? RW_OK : rw_fail(RW_ERR_NOMEM, "out of memory for %d children", n);
    if (!st)
        st = rwc_typed_alloc(count, type, &acc_mem, &acc);
    if (!st)
        st = rwc_typed_alloc(count, type, &tmp_mem, &tmp);
    if (!st)
        st = rwc_copy(mine, count, type, acc, count, type, dup);
    int commute = 0;
    if (!st)
        st = rwc_mpi(PMPI_Op_commutative(op, &commute), "MPI_Op_commutative");
    size_t bytes = 0;
    if (!st && commute)
        st = rwc_type_bytes(count, type, &bytes);
    if (!st && commute && n > 1 && (double)n * (double)bytes <= RW_REDUCE_POSTED_MAX) {
        st = fold_posted(acc, count, type, op, t->child + first, n, dup);
    } else if (!st && commute) {
        /* acc = child op acc, the last child in the tree's order first */
        for (int i = n - 1; !st && i >= 0; i--) {
            st = rwc_mpi(PMPI_Recv(tmp, count, type, t->child[first + i], RWC_TAG_REDUCE, dup, MPI_STATUS_IGNORE),
                         "MPI_Recv (reduce)");
            if (!st)
                st = rwc_mpi(PMPI_Reduce_local(tmp, acc, count, type, op), "MPI_Reduce_local");
        }
    } else if (!st) {
        memcpy(kids, t->child + first, sizeof(int32_t) * (size_t)n);
        qsort(kids, (size_t)n, sizeof *kids, by_rank);
        int below = 0;
        while (below < n && kids[below] < me)
            below++;
        /* left: acc = child op acc, nearest first */
        for (int i = below - 1; !st && i >= 0; i--) {
            st = rwc_mpi(PMPI_Recv(tmp, count, type, kids[i], RWC_TAG_REDUCE, dup, MPI_STATUS_IGNORE),
                         "MPI_Recv (reduce)");
            if (!st)
                st = rwc_mpi(PMPI_Reduce_local(tmp, acc, count, type, op), "MPI_Reduce_local");
        }
        /* right: acc = acc op child; the result lands in the child's buffer */
        for (int i = below; !st && i < n; i++) {
            st = rwc_mpi(PMPI_Recv(tmp, count, type, kids[i], RWC_TAG_REDUCE, dup, MPI_STATUS_IGNORE),
                         "MPI_Recv (reduce)");
            if (!st)
                st = rwc_mpi(PMPI_Reduce_local(acc, tmp, count, type, op), "MPI_Reduce_local");
            if (!st) {
                char *swap = acc;
                void *swap_mem = acc_mem;
                acc = tmp, acc_mem = tmp_mem;
                tmp = swap, tmp_mem = swap_mem;
            }
        }
    }
    if (!st)
        st = me == root ? rwc_copy(acc, count, type, recvbuf, count, type, dup)
                        : rwc_mpi(PMPI_Send(acc, count, type, t->parent[me], RWC_TAG_REDUCE, dup), "MPI_Send (reduce)");
    free(kids);
    free(acc_mem);
    free(tmp_mem);
    return st;
}
