/* What the library keeps per communicator: a private duplicate (our tags
 * never meet the application's messages), the node of each rank, the
 * trees per (algorithm, root, size class), and with RANKWISE_MODEL the
 * predictor's network and the decisions made from it. Kept as an attribute of the
 * user's communicator, so it is freed with it (MPI_Comm_free or, for the
 * predefined ones, MPI_Finalize); duplicates of it build their own. */
#include "coll.h"
#include "internal.h"
#include "decision/verify.h"

#include <stdlib.h>
#include <string.h>

static int keyval = MPI_KEYVAL_INVALID;

/* The communicator rwc_comm_fast found last: its handle may be reused
 * once it is freed, so cache_free forgets it. */
static MPI_Comm last_comm = MPI_COMM_NULL;
static rwc_comm *last_c;

void rwc_comm_forget_network(rwc_comm *c)
{
    while (c->decisions) {
        rwc_decision_entry *d = c->decisions;
        c->decisions = d->next;
        rw_tree_free(d->tree);
        free(d);
    }
    rw_pnet_free(c->net);
    c->net = NULL;
    free(c->trinary_order);
    c->trinary_order = NULL;
    c->net_state = 0;
    free(c->ring_order); /* laid on that network */
    c->ring_order = NULL;
    memset(c->a2a_cap, 0, sizeof c->a2a_cap); /* made from that network */
    rwc_verify_forget(c); /* of decisions made from it (and keyed by their trees) */
    memset(c->last, 0, sizeof c->last); /* outcomes may name those trees */
}

static void cache_free(rwc_comm *c)
{
    if (last_c == c) {
        last_comm = MPI_COMM_NULL;
        last_c = NULL;
    }
    while (c->trees) {
        rwc_tree_entry *e = c->trees;
        c->trees = e->next;
        rw_tree_free(e->tree);
        free(e);
    }
    rwc_comm_forget_network(c);
    free(c->node_of);
    rw_tree_free(c->node_tree);
    if (c->node != MPI_COMM_NULL)
        PMPI_Comm_free(&c->node);
    if (c->leaders != MPI_COMM_NULL)
        PMPI_Comm_free(&c->leaders);
    if (c->dup != MPI_COMM_NULL)
        PMPI_Comm_free(&c->dup);
    free(c);
}

static int delete_cache(MPI_Comm comm, int key, void *value, void *extra)
{
    cache_free(value);
    return MPI_SUCCESS;
}

rwc_comm *rwc_comm_cached(MPI_Comm comm)
{
    rwc_comm *c = NULL;
    int found = 0;
    if (keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL ||
        PMPI_Comm_get_attr(comm, keyval, &c, &found) != MPI_SUCCESS || !found)
        return NULL;
    return c;
}

rwc_comm *rwc_comm_fast(MPI_Comm comm)
{
    if (comm == last_comm && comm != MPI_COMM_NULL)
        return last_c;
    rwc_comm *c = rwc_comm_cached(comm);
    if (c) {
        last_comm = comm;
        last_c = c;
    }
    return c;
}

rw_status rwc_comm_get(MPI_Comm comm, rwc_comm **out)
{
    *out = NULL;
    if (rwc_thread_multiple())
        return rw_fail(RW_ERR_STATE, "MPI_THREAD_MULTIPLE: the library runs nothing of its own (passed to the MPI)");
    int inter = 0, found = 0;
    rw_status st = rwc_mpi(PMPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
    if (st)
        return st;
    if (inter)
        return rw_fail(RW_ERR_STATE, "an intercommunicator (passed to the MPI)");
    if (keyval == MPI_KEYVAL_INVALID &&
        (st = rwc_mpi(PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_cache, &keyval, NULL),
                      "MPI_Comm_create_keyval")))
        return st;
    rwc_comm *c = NULL;
    if ((st = rwc_mpi(PMPI_Comm_get_attr(comm, keyval, &c, &found), "MPI_Comm_get_attr")))
        return st;
    if (found) {
        *out = c;
        return RW_OK;
    }
    if (!(c = calloc(1, sizeof *c)))
        return rw_fail(RW_ERR_NOMEM, "out of memory for a communicator's cache");
    c->dup = c->node = c->leaders = MPI_COMM_NULL;
    c->world_order = -1;
    c->generation = rwc_model_generation();
    PMPI_Comm_size(comm, &c->size);
    PMPI_Comm_rank(comm, &c->rank);
    if ((st = rwc_mpi(PMPI_Comm_dup(comm, &c->dup), "MPI_Comm_dup")) ||
        (st = rwc_mpi(PMPI_Comm_set_attr(comm, keyval, c), "MPI_Comm_set_attr"))) {
        cache_free(c);
        return st;
    }
    *out = c;
    return RW_OK;
}

/* node_of[r] = the lowest rank sharing r's node (MPI_COMM_TYPE_SHARED);
 * the node's communicator (in rank order), the leaders' (lowest ranks),
 * and a binomial tree over the node rooted at its leader. Collective. */
rw_status rwc_nodes(rwc_comm *c)
{
    if (c->node_of)
        return RW_OK;
    int lowest = c->rank, node_size = 0;
    rw_status st = rwc_mpi(PMPI_Comm_split_type(c->dup, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &c->node),
                           "MPI_Comm_split_type");
    /* the node's rank 0 is its lowest rank (key = rank) */
    if (!st)
        st = rwc_mpi(rwc_real_bcast(&lowest, 1, MPI_INT, 0, c->node), "MPI_Bcast (node leader)");
    if (!st)
        st = rwc_mpi(PMPI_Comm_split(c->dup, lowest == c->rank ? 0 : MPI_UNDEFINED, c->rank, &c->leaders),
                     "MPI_Comm_split (leaders)");
    if (!st)
        st = rwc_mpi(PMPI_Comm_size(c->node, &node_size), "MPI_Comm_size");
    if (!st)
        st = rw_tree_shape_build(RW_SHAPE_BINOMIAL, node_size, 0, 2, &c->node_tree);
    int *all = st ? NULL : malloc((size_t)c->size * sizeof *all);
    if (!st && !all)
        st = rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks", c->size);
    if (!st)
        st = rwc_mpi(rwc_real_allgather(&lowest, 1, MPI_INT, all, 1, MPI_INT, c->dup), "MPI_Allgather (nodes)");
    int32_t *node_of = st ? NULL : malloc((size_t)c->size * sizeof *node_of);
    if (!st && !node_of)
        st = rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks", c->size);
    for (int r = 0; !st && r < c->size; r++)
        node_of[r] = all[r];
    free(all);
    c->node_of = node_of; /* set last: it says the rest is ready */
    return st;
}

rw_status rwc_tree_get(rwc_comm *c, rw_coll_alg alg, int root, size_t bytes, int radix, const rw_tree **out)
{
    *out = NULL;
    int cls = rw_size_class_protocol(bytes);
    for (rwc_tree_entry *e = c->trees; e; e = e->next)
        if (e->alg == alg && e->root == root && e->protocol_class == cls) {
            *out = e->tree;
            return RW_OK;
        }
    rw_status st;
    rw_tree *t = NULL;
    const rw_algo_info *a;
    if (alg == RW_COLL_HIER) {
        if ((st = rwc_nodes(c)))
            return st;
        st = rw_tree_hierarchical(c->size, root, c->node_of, RW_SHAPE_BINOMIAL, RW_SHAPE_BINOMIAL, 2, &t);
    } else if ((a = rw_algo_by_id((int)alg)) && a->shape >= 0) { /* the registry's shapes */
        st = rw_tree_shape_build((rw_tree_shape)a->shape, c->size, root, radix, &t);
    } else {
        st = rw_fail(RW_ERR_ARG, "%s is not a tree algorithm", rw_coll_alg_name(alg) ? rw_coll_alg_name(alg) : "?");
    }
    if (st)
        return st;
    rwc_tree_entry *e = malloc(sizeof *e);
    if (!e) {
        rw_tree_free(t);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a tree");
    }
    *e = (rwc_tree_entry){alg, root, cls, t, c->trees};
    c->trees = e;
    *out = t;
    return RW_OK;
}
