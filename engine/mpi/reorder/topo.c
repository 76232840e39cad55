/* MPI's reorder flag made real: MPI_Cart_create, MPI_Graph_create,
 * MPI_Dist_graph_create and MPI_Dist_graph_create_adjacent with reorder = 1
 * and RANKWISE_MODEL set give the virtual processes the slots rankwise's
 * mapper (rw_map) chooses on the measured model, among the slots the
 * communicator already occupies. The traffic is the topology's edges, one
 * message of EDGE_BYTES per unit of weight (weight 1 when not given; a
 * Cartesian grid's per dimension from RANKWISE_CART_WEIGHTS).
 *
 * Rank 0 of comm reads the model, maps and broadcasts new_rank_of[old
 * rank]; then every rank calls PMPI_Comm_split(comm, 0, new rank) and the
 * MPI's own constructor with reorder = 0 on the result, so the MPI's
 * topology object exists, in rankwise's order. The mapping replaces the
 * identity only when predicted faster by the mapper's min_gain. reorder =
 * 0, RANKWISE_TOPO_REORDER=0, no model, an intercommunicator, or any
 * failure (one warning line on rank 0): the MPI's own constructor with the
 * caller's arguments.
 *
 * A rank's node in the model is found as net_decide.c finds it: its
 * processor name, else "name:<rank in MPI_COMM_WORLD>". */
#include "coll.h"
#include "decision/decision.h"
#include "internal.h"
#include "placement.h"
#include "rankwise_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A stencil's halo is typically tens of KiB: both latency and bandwidth
 * of a pair count. */
#define EDGE_BYTES 65536
#define NAME_LEN RWC_NAME_LEN

#ifndef RW_SMPI
RWC_INTERPOSED int PMPI_Cart_create(MPI_Comm, int, const int *, const int *, int, MPI_Comm *)
    __attribute__((alias("MPI_Cart_create")));
RWC_INTERPOSED int PMPI_Graph_create(MPI_Comm, int, const int *, const int *, int, MPI_Comm *)
    __attribute__((alias("MPI_Graph_create")));
RWC_INTERPOSED int PMPI_Dist_graph_create(MPI_Comm, int, const int *, const int *, const int *, const int *, MPI_Info, int,
                           MPI_Comm *) __attribute__((alias("MPI_Dist_graph_create")));
RWC_INTERPOSED int PMPI_Dist_graph_create_adjacent(MPI_Comm, int, const int *, const int *, int, const int *, const int *,
                                    MPI_Info, int, MPI_Comm *) __attribute__((alias("MPI_Dist_graph_create_adjacent")));
#endif

/* ---------------------------------------------------------------------
 * The plan: new_rank_of[old rank], computed on rank 0
 * ------------------------------------------------------------------- */

static int warned;

static const char *model_path(void)
{
    return rwc_model_path();
}

static void warn_once(const char *what)
{
    if (warned)
        return;
    warned = 1;
    fprintf(stderr, "rankwise-coll: warning: %s (the MPI's own topology constructor runs)\n", what);
}

static int weighted(const int *w)
{
    return w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY;
}

/* Edges (src, dst, weight) in vertex numbers, built on rank 0. */
typedef struct edges {
    int64_t n, cap;
    int32_t *src, *dst;
    int64_t *msgs, *bytes;
} edges;

static rw_status edge_add(edges *e, int32_t s, int32_t d, int64_t w)
{
    if (s == d || w <= 0)
        return RW_OK; /* a message to oneself costs no network */
    if (e->n == e->cap) {
        int64_t cap = e->cap ? 2 * e->cap : 64;
        int32_t *src = realloc(e->src, (size_t)cap * sizeof *src);
        if (src)
            e->src = src;
        int32_t *dst = realloc(e->dst, (size_t)cap * sizeof *dst);
        if (dst)
            e->dst = dst;
        int64_t *msgs = realloc(e->msgs, (size_t)cap * sizeof *msgs);
        if (msgs)
            e->msgs = msgs;
        int64_t *bytes = realloc(e->bytes, (size_t)cap * sizeof *bytes);
        if (bytes)
            e->bytes = bytes;
        if (!src || !dst || !msgs || !bytes)
            return rw_fail(RW_ERR_NOMEM, "out of memory for %lld topology edges", (long long)cap);
        e->cap = cap;
    }
    e->src[e->n] = s;
    e->dst[e->n] = d;
    e->msgs[e->n] = w;
    e->bytes[e->n++] = w * EDGE_BYTES;
    return RW_OK;
}

static void edges_free(edges *e)
{
    free(e->src);
    free(e->dst);
    free(e->msgs);
    free(e->bytes);
}

/* Rank 0: new_rank_of[old] for n_virtual vertices with traffic e, on the
 * ranks' model nodes model_node[0..size) (rwc_place_on_model). */
static rw_status plan_on_root(const rw_model *model, const edges *e, int n_virtual, const int32_t *model_node,
                              int size, int *new_rank_of, int *changed)
{
    rw_matrix *traffic = NULL;
    rwc_placement p = {0};
    rw_status st = rw_matrix_create(n_virtual, e->n, e->src, e->dst, e->msgs, e->bytes, &traffic);
    if (!st)
        st = rwc_place_on_model(model, traffic, model_node, size, rw_map_options_default().min_gain, new_rank_of,
                                &p);
    *changed = !st && p.changed;
    if (!st && rwc_tracing())
        fprintf(stderr, "rankwise-coll: topology of %d vertices on %d nodes: identity %.6g s, %s %.6g s: %s\n",
                n_virtual, (int)p.n_nodes, p.identity, rw_algorithm_name(p.algorithm), p.cost,
                *changed ? "reordered" : "kept");
    rw_matrix_free(traffic);
    return st;
}

/* Collective on comm: new_rank_of (size entries, every rank) from the
 * edges rank 0 holds. 1 when the order changes, 0 when the identity stays,
 * -1 when anything failed on any rank (local_ok 0, no new_rank_of; rank 0
 * has warned). */
static int plan(MPI_Comm comm, int local_ok, const edges *e, int n_virtual, int *new_rank_of)
{
    int size = 0, rank = 0, me = 0, len = 0;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    char mine[NAME_LEN] = {0}, *names = NULL;
    int *world = NULL;
    int32_t *model_node = NULL;
    PMPI_Get_processor_name(mine, &len);
    for (char *p = mine; *p; p++)
        if (*p == ' ' || *p == '\t')
            *p = '_';
    if (rank == 0) {
        names = calloc((size_t)size, NAME_LEN);
        world = calloc((size_t)size, sizeof *world);
        model_node = calloc((size_t)size, sizeof *model_node);
    }
    int ok = local_ok && new_rank_of && (rank != 0 || (names && world && model_node)), all_ok = 0, outcome = 0;
    if (rwc_real_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS || !all_ok) {
        if (rank == 0)
            warn_once(ok ? "a rank could not describe the topology's traffic" : rw_last_error());
        outcome = -1;
    } else if (rwc_real_gather(mine, NAME_LEN, MPI_CHAR, names, NAME_LEN, MPI_CHAR, 0, comm) != MPI_SUCCESS ||
               rwc_real_gather(&me, 1, MPI_INT, world, 1, MPI_INT, 0, comm) != MPI_SUCCESS) {
        outcome = -1;
    } else if (rank == 0) {
        const rw_model *model = rwc_env_model(); /* NULL: it said why */
        char shown[RWC_SHOWN_BUF];
        rw_status st = model ? RW_OK : RW_ERR_IO;
        if (!st)
            st = rwc_model_nodes(model, rwc_shown(model_path(), RWC_SHOWN_PATH, shown), names, world, size, model_node);
        int changed = 0;
        if (!st)
            st = plan_on_root(model, e, n_virtual, model_node, size, new_rank_of, &changed);
        if (st && model)
            warn_once(rw_last_error());
        outcome = st ? -1 : changed;
    }
    free(names);
    free(world);
    free(model_node);
    if (rwc_real_bcast(&outcome, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
        outcome = -1;
    if (outcome > 0 && rwc_real_bcast(new_rank_of, size, MPI_INT, 0, comm) != MPI_SUCCESS)
        outcome = -1; /* cannot happen after the bcast above succeeded; all ranks would see it */
    return outcome;
}

/* Whether this call is ours to reorder: reorder set, a model, an
 * intracommunicator (the same answer on every rank). */
/* RANKWISE_TOPO_REORDER=0 keeps the MPI's own order while the model still
 * serves the collectives: for codes that assume reorder keeps every rank
 * (MPICH's distgraph1 checks neighbour lists against world ranks). Read
 * once, like every variable of the library. */
static int reorder_allowed(void)
{
    static int allowed = -1;
    if (allowed < 0) {
        const char *v = getenv("RANKWISE_TOPO_REORDER");
        allowed = v && *v ? rwc_env_bool("RANKWISE_TOPO_REORDER") : 1;
    }
    return allowed;
}

static int wanted(MPI_Comm comm, int reorder)
{
    int inter = 1;
    return reorder && model_path() && reorder_allowed() && !rwc_thread_multiple() && comm != MPI_COMM_NULL &&
           PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
}

/* comm with rank r renumbered new_rank_of[r] (collective). */
static int renumbered(MPI_Comm comm, const int *new_rank_of, MPI_Comm *out)
{
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    return PMPI_Comm_split(comm, 0, new_rank_of[rank], out);
}

static int *alloc_plan(MPI_Comm comm)
{
    int size = 0;
    PMPI_Comm_size(comm, &size);
    return malloc((size_t)(size > 0 ? size : 1) * sizeof(int));
}

/* ---------------------------------------------------------------------
 * The constructors
 * ------------------------------------------------------------------- */

/* RANKWISE_CART_WEIGHTS=w1,...,wN: the relative volume a Cartesian grid's
 * neighbours exchange along each of its N dimensions (a grid states none:
 * a halo's faces may differ, a forwarding stencil sends 1, 3 and 9 blocks
 * along its three dimensions). Unset: 1 along every dimension. */
static rw_status cart_weights(int ndims, int *w)
{
    const char *text = getenv("RANKWISE_CART_WEIGHTS");
    for (int d = 0; d < ndims; d++)
        w[d] = 1;
    if (!text || !*text)
        return RW_OK;
    const char *p = text;
    for (int d = 0; d < ndims; d++) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 1000000 || (*end != ',' && *end != '\0') ||
            (*end == '\0') != (d == ndims - 1)) {
            char shown[RWC_SHOWN_BUF];
            return rw_fail(RW_ERR_ARG, "RANKWISE_CART_WEIGHTS='%s': give %d positive integers, one per dimension",
                           rwc_shown(text, RWC_SHOWN_VALUE, shown), ndims);
        }
        w[d] = (int)v;
        p = end + 1;
    }
    return RW_OK;
}

static rw_status cart_edges(int ndims, const int *dims, const int *periods, int n, edges *e)
{
    int *coord = calloc((size_t)(ndims > 0 ? ndims : 1), sizeof *coord);
    int *weight = calloc((size_t)(ndims > 0 ? ndims : 1), sizeof *weight);
    rw_status st = coord && weight ? RW_OK : rw_fail(RW_ERR_NOMEM, "out of memory for %d dimensions", ndims);
    if (!st)
        st = cart_weights(ndims, weight);
    for (int v = 0; !st && v < n; v++) {
        for (int d = ndims - 1, x = v; d >= 0; d--) { /* row-major, as MPI numbers a grid */
            coord[d] = x % dims[d];
            x /= dims[d];
        }
        int stride = 1;
        for (int d = ndims - 1; !st && d >= 0; stride *= dims[d], d--)
            for (int step = -1; !st && step <= 1; step += 2) {
                int c = coord[d] + step;
                if (c < 0 || c >= dims[d]) {
                    if (!periods[d])
                        continue;
                    c = (c + dims[d]) % dims[d];
                }
                st = edge_add(e, v, v + (c - coord[d]) * stride, weight[d]);
            }
    }
    free(coord);
    free(weight);
    return st;
}

RWC_INTERPOSED int MPI_Cart_create(MPI_Comm comm, int ndims, const int *dims, const int *periods, int reorder, MPI_Comm *out)
{
    int size = 0, n = 1, ok = wanted(comm, reorder) && ndims > 0 && dims && periods &&
                                PMPI_Comm_size(comm, &size) == MPI_SUCCESS;
    for (int d = 0; ok && d < ndims; d++) {
        ok = dims[d] > 0 && n <= size / dims[d];
        n *= ok ? dims[d] : 1;
    }
    if (!ok) /* the MPI's own also reports what is wrong with the arguments */
        return rwc_real_cart_create(comm, ndims, dims, periods, reorder, out);
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    edges e = {0};
    rw_status st = rank == 0 ? cart_edges(ndims, dims, periods, n, &e) : RW_OK;
    int *new_rank_of = alloc_plan(comm);
    int outcome = plan(comm, !st, &e, n, new_rank_of);
    edges_free(&e);
    int rc;
    if (outcome < 0) {
        rc = rwc_real_cart_create(comm, ndims, dims, periods, reorder, out);
    } else if (outcome == 0) {
        rc = rwc_real_cart_create(comm, ndims, dims, periods, 0, out);
    } else {
        MPI_Comm tmp = MPI_COMM_NULL;
        rc = renumbered(comm, new_rank_of, &tmp);
        if (rc == MPI_SUCCESS) {
            rc = rwc_real_cart_create(tmp, ndims, dims, periods, 0, out);
            PMPI_Comm_free(&tmp);
        }
    }
    free(new_rank_of);
    return rc;
}

RWC_INTERPOSED int MPI_Graph_create(MPI_Comm comm, int nnodes, const int *index, const int *edges_in, int reorder, MPI_Comm *out)
{
    int size = 0, ok = wanted(comm, reorder) && nnodes > 0 && index && edges_in &&
                       PMPI_Comm_size(comm, &size) == MPI_SUCCESS && nnodes <= size;
    if (!ok)
        return rwc_real_graph_create(comm, nnodes, index, edges_in, reorder, out);
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    edges e = {0};
    rw_status st = RW_OK;
    for (int v = 0; rank == 0 && !st && v < nnodes; v++)
        for (int i = v ? index[v - 1] : 0; !st && i < index[v]; i++)
            st = edges_in[i] < 0 || edges_in[i] >= nnodes /* the MPI's own says what is wrong */
                     ? rw_fail(RW_ERR_ARG, "graph edge %d names vertex %d of %d", i, edges_in[i], nnodes)
                     : edge_add(&e, v, edges_in[i], 1);
    int *new_rank_of = alloc_plan(comm);
    int outcome = plan(comm, !st, &e, nnodes, new_rank_of);
    edges_free(&e);
    int rc;
    if (outcome < 0) {
        rc = rwc_real_graph_create(comm, nnodes, index, edges_in, reorder, out);
    } else if (outcome == 0) {
        rc = rwc_real_graph_create(comm, nnodes, index, edges_in, 0, out);
    } else {
        MPI_Comm tmp = MPI_COMM_NULL;
        rc = renumbered(comm, new_rank_of, &tmp);
        if (rc == MPI_SUCCESS) {
            rc = rwc_real_graph_create(tmp, nnodes, index, edges_in, 0, out);
            PMPI_Comm_free(&tmp);
        }
    }
    free(new_rank_of);
    return rc;
}

/* Rank 0 of comm receives every rank's (src, dst, weight) triples. */
static int gather_edges(MPI_Comm comm, int count, const int *triples, edges *e)
{
    int size = 0, rank = 0;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    int *counts = rank == 0 ? calloc((size_t)size, sizeof *counts) : NULL;
    int *displs = rank == 0 ? calloc((size_t)size, sizeof *displs) : NULL;
    int *all = NULL, ok = rank != 0 || (counts && displs);
    if (rwc_real_bcast(&ok, 1, MPI_INT, 0, comm) != MPI_SUCCESS || !ok)
        goto out;
    int mine = 3 * count;
    if (rwc_real_gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, comm) != MPI_SUCCESS) {
        ok = 0;
        goto out;
    }
    if (rank == 0) {
        int64_t total = 0;
        for (int r = 0; r < size; r++) {
            displs[r] = (int)total;
            total += counts[r];
        }
        all = total < (1 << 30) ? malloc((size_t)(total ? total : 1) * sizeof *all) : NULL;
        ok = all != NULL;
    }
    if (rwc_real_bcast(&ok, 1, MPI_INT, 0, comm) != MPI_SUCCESS || !ok)
        goto out;
    ok = PMPI_Gatherv(triples, mine, MPI_INT, all, counts, displs, MPI_INT, 0, comm) == MPI_SUCCESS;
    for (int r = 0; ok && rank == 0 && r < size; r++)
        for (int i = displs[r]; ok && i < displs[r] + counts[r]; i += 3) {
            int s = all[i], d = all[i + 1];
            ok = s >= 0 && s < size && d >= 0 && d < size && !edge_add(e, s, d, all[i + 2]);
        }
out:
    free(counts);
    free(displs);
    free(all);
    return ok;
}

/* The MPI's MPI_Dist_graph_create, on a fresh copy of comm's group when
 * comm is an intracommunicator. Open MPI 4.1 (and 5.0 before 5.0.10's
 * fix) sends the edges on comm with two fixed internal tags that its
 * nonblocking collectives' tag counter on comm reaches after a few dozen
 * communicators made from comm; the communicator's creation then waits
 * forever on every rank (open-mpi/ompi#13918, fixed by #13931). The
 * library's own communicators (private duplicates, reordering splits)
 * move that counter on the application's communicators, so the library
 * makes the graph where the counter has not moved: a new communicator,
 * same ranks, same order, no attributes copied. Its cost: one
 * MPI_Comm_split. */
static int dist_graph_create_fresh(MPI_Comm comm, int n, const int *sources, const int *degrees, const int *dest,
                                   const int *weights, MPI_Info info, int reorder, MPI_Comm *out)
{
    int inter = 1, rank = 0;
    MPI_Comm fresh = MPI_COMM_NULL;
    if (comm == MPI_COMM_NULL || n < 0 || rwc_thread_multiple() || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || PMPI_Comm_split(comm, 0, rank, &fresh) != MPI_SUCCESS)
        return rwc_real_dist_graph_create(comm, n, sources, degrees, dest, weights, info, reorder, out);
    int rc = rwc_real_dist_graph_create(fresh, n, sources, degrees, dest, weights, info, reorder, out);
    PMPI_Comm_free(&fresh);
    return rc;
}

RWC_INTERPOSED int MPI_Dist_graph_create(MPI_Comm comm, int n, const int *sources, const int *degrees, const int *dest,
                          const int *weights, MPI_Info info, int reorder, MPI_Comm *out)
{
    if (!wanted(comm, reorder) || n < 0)
        return dist_graph_create_fresh(comm, n, sources, degrees, dest, weights, info, reorder, out);
    int64_t count = 0;
    for (int i = 0; i < n; i++)
        count += degrees[i] > 0 ? degrees[i] : 0;
    int *triples = malloc((size_t)(3 * count + 1) * sizeof *triples);
    for (int i = 0, k = 0; triples && i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            triples[3 * k] = sources[i];
            triples[3 * k + 1] = dest[k];
            triples[3 * k + 2] = weighted(weights) ? weights[k] : 1;
        }
    edges e = {0};
    int ok = triples && count < (1 << 28);
    int all_ok = 0; /* nobody gathers while a rank could not build its edges */
    if (rwc_real_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        all_ok = 0;
    int *new_rank_of = all_ok ? alloc_plan(comm) : NULL;
    int outcome = -1;
    if (all_ok) {
        int size = 0, gathered = gather_edges(comm, (int)count, triples, &e);
        PMPI_Comm_size(comm, &size);
        outcome = plan(comm, gathered, &e, size, new_rank_of);
    }
    free(triples);
    edges_free(&e);
    int rc;
    if (outcome < 0) {
        rc = dist_graph_create_fresh(comm, n, sources, degrees, dest, weights, info, reorder, out);
    } else if (outcome == 0) {
        rc = dist_graph_create_fresh(comm, n, sources, degrees, dest, weights, info, 0, out);
    } else { /* vertex v is the new rank v, on tmp (fresh): the edges stay as given */
        MPI_Comm tmp = MPI_COMM_NULL;
        rc = renumbered(comm, new_rank_of, &tmp);
        if (rc == MPI_SUCCESS) {
            rc = rwc_real_dist_graph_create(tmp, n, sources, degrees, dest, weights, info, 0, out);
            PMPI_Comm_free(&tmp);
        }
    }
    free(new_rank_of);
    return rc;
}

/* The lists of vertex v, which old rank v gave, go to the process that
 * becomes rank v: each sends its own to new rank `old rank` of tmp and
 * receives those of its new rank from the rank that held it. */
static int swap_lists(MPI_Comm tmp, int old, int new_rank, const int *new_rank_of, int indeg, const int *src,
                      const int *srcw, int outdeg, const int *dst, const int *dstw, int *lists_out, int **got)
{
    int head[4] = {indeg, outdeg, weighted(srcw), weighted(dstw)}, theirs[4];
    int peer = new_rank_of[new_rank]; /* old rank new_rank is now this rank of tmp */
    if (PMPI_Sendrecv(head, 4, MPI_INT, old, 0, theirs, 4, MPI_INT, peer, 0, tmp, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return 0;
    int mine_n = 2 * (indeg + outdeg), their_n = 2 * (theirs[0] + theirs[1]);
    int *mine = malloc((size_t)(mine_n + 1) * sizeof *mine), *buf = malloc((size_t)(their_n + 1) * sizeof *buf);
    int ok = mine && buf;
    for (int i = 0; ok && i < indeg; i++) {
        mine[i] = src[i];
        mine[indeg + i] = head[2] ? srcw[i] : 1;
    }
    for (int i = 0; ok && i < outdeg; i++) {
        mine[2 * indeg + i] = dst[i];
        mine[2 * indeg + outdeg + i] = head[3] ? dstw[i] : 1;
    }
    /* every rank sends and receives once, even after a failed allocation, so no rank waits forever */
    ok = PMPI_Sendrecv(ok ? mine : head, ok ? mine_n : 0, MPI_INT, old, 1, ok ? buf : theirs, ok ? their_n : 0,
                       MPI_INT, peer, 1, tmp, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
         ok;
    free(mine);
    memcpy(lists_out, theirs, sizeof theirs);
    if (!ok) {
        free(buf);
        return 0;
    }
    *got = buf;
    return 1;
}

RWC_INTERPOSED int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indeg, const int *src, const int *srcw, int outdeg,
                                   const int *dst, const int *dstw, MPI_Info info, int reorder, MPI_Comm *out)
{
    if (!wanted(comm, reorder) || indeg < 0 || outdeg < 0)
        return rwc_real_dist_graph_create_adjacent(comm, indeg, src, srcw, outdeg, dst, dstw, info, reorder, out);
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    int *triples = malloc((size_t)(3 * (int64_t)outdeg + 1) * sizeof *triples);
    for (int i = 0; triples && i < outdeg; i++) { /* out-edges alone name every edge once */
        triples[3 * i] = rank;
        triples[3 * i + 1] = dst[i];
        triples[3 * i + 2] = weighted(dstw) ? dstw[i] : 1;
    }
    edges e = {0};
    int ok = triples != NULL, all_ok = 0;
    if (rwc_real_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        all_ok = 0;
    int *new_rank_of = all_ok ? alloc_plan(comm) : NULL;
    int outcome = -1;
    if (all_ok) {
        int size = 0, gathered = gather_edges(comm, outdeg, triples, &e);
        PMPI_Comm_size(comm, &size);
        outcome = plan(comm, gathered, &e, size, new_rank_of);
    }
    free(triples);
    edges_free(&e);
    int rc;
    if (outcome < 0) {
        rc = rwc_real_dist_graph_create_adjacent(comm, indeg, src, srcw, outdeg, dst, dstw, info, reorder, out);
    } else if (outcome == 0) {
        rc = rwc_real_dist_graph_create_adjacent(comm, indeg, src, srcw, outdeg, dst, dstw, info, 0, out);
    } else {
        MPI_Comm tmp = MPI_COMM_NULL;
        rc = renumbered(comm, new_rank_of, &tmp);
        int head[4] = {0}, *lists = NULL;
        int moved = rc == MPI_SUCCESS &&
                    swap_lists(tmp, rank, new_rank_of[rank], new_rank_of, indeg, src, srcw, outdeg, dst, dstw, head,
                               &lists);
        int all_moved = 0;
        if (rc == MPI_SUCCESS && rwc_real_allreduce(&moved, &all_moved, 1, MPI_INT, MPI_MIN, tmp) != MPI_SUCCESS)
            all_moved = 0;
        if (rc == MPI_SUCCESS && all_moved) {
            int in = head[0], outd = head[1];
            /* the graph is weighted everywhere or nowhere; an empty list of a weighted graph may say so */
            const int *w_in = head[2] ? lists + in : weighted(srcw) ? MPI_WEIGHTS_EMPTY : srcw;
            const int *w_out = head[3] ? lists + 2 * in + outd : weighted(dstw) ? MPI_WEIGHTS_EMPTY : dstw;
            rc = rwc_real_dist_graph_create_adjacent(tmp, in, lists, w_in, outd, lists + 2 * in, w_out, info, 0, out);
        } else if (rc == MPI_SUCCESS) { /* the same answer on every rank: the MPI's own */
            rc = rwc_real_dist_graph_create_adjacent(comm, indeg, src, srcw, outdeg, dst, dstw, info, reorder, out);
        }
        free(lists);
        if (tmp != MPI_COMM_NULL)
            PMPI_Comm_free(&tmp);
    }
    free(new_rank_of);
    return rc;
}
