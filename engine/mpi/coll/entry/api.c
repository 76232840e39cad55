/* The C API (rankwise_coll.h): rw_coll_<op> runs the algorithm asked for
 * (base/run.c) with the decision's parameters, the MPI's own for
 * RW_COLL_PASSTHROUGH, and for RW_COLL_AUTO the decided call the MPI
 * entries make too (decided.c); rw_coll_<op>_tree over the caller's tree.
 * Names come from the registry (src/coll/registry.c). */
#include "base/base.h"
#include "decision/decision.h"
#include "decision/verify.h"
#include "entry.h"
#include "internal.h"

/* The public enum and the registry's ids are one numbering. */
#define SAME_ID(name) _Static_assert((int)RW_COLL_##name == RW_ALGO_##name, "rw_coll_alg numbers the registry's ids")
SAME_ID(AUTO);
SAME_ID(PASSTHROUGH);
SAME_ID(BINOMIAL);
SAME_ID(KNOMIAL);
SAME_ID(FLAT);
SAME_ID(CHAIN);
SAME_ID(HIER);
SAME_ID(RING);
SAME_ID(RECURSIVE_DOUBLING);
SAME_ID(TRINARY);
SAME_ID(PAIRWISE);
SAME_ID(SYMMETRIC);
SAME_ID(MULTIRING);
#undef SAME_ID

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

/* The decided call; RW_ERR_MPI when the MPI's own fails. */
#define API_AUTO(call, real, name)                                                                      \
    do {                                                                                                \
        int pass = 0;                                                                                   \
        rw_status st_ = call; /* (a parameter is named st) */                                           \
        if (pass)                                                                                       \
            st_ = rwc_mpi(real, name);                                                                  \
        rwc_verify_end(pass);                                                                           \
        return st_;                                                                                     \
    } while (0)

rw_status rw_coll_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, rw_coll_alg alg)
{
    if (alg == RW_COLL_AUTO)
        API_AUTO(rwc_decided_bcast(buf, count, type, root, comm, &pass),
                 rwc_real_bcast(buf, count, type, root, comm), "MPI_Bcast");
    if (alg == RW_COLL_PASSTHROUGH)
        return rwc_mpi(rwc_real_bcast(buf, count, type, root, comm), "MPI_Bcast");
    rwc_params prm = rwc_decision_params();
    return rwc_run_bcast(buf, count, type, root, comm, alg, &prm);
}

rw_status rw_coll_reduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                         rw_coll_alg alg)
{
    if (alg == RW_COLL_AUTO)
        API_AUTO(rwc_decided_reduce(s, r, count, type, op, root, comm, &pass),
                 rwc_real_reduce(s, r, count, type, op, root, comm), "MPI_Reduce");
    if (alg == RW_COLL_PASSTHROUGH)
        return rwc_mpi(rwc_real_reduce(s, r, count, type, op, root, comm), "MPI_Reduce");
    rwc_params prm = rwc_decision_params();
    return rwc_run_reduce(s, r, count, type, op, root, comm, alg, &prm);
}

rw_status rw_coll_gather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root,
                         MPI_Comm comm, rw_coll_alg alg)
{
    if (alg == RW_COLL_AUTO)
        API_AUTO(rwc_decided_gather(s, sc, st, r, rc, rt, root, comm, &pass),
                 rwc_real_gather(s, sc, st, r, rc, rt, root, comm), "MPI_Gather");
    if (alg == RW_COLL_PASSTHROUGH)
        return rwc_mpi(rwc_real_gather(s, sc, st, r, rc, rt, root, comm), "MPI_Gather");
    rwc_params prm = rwc_decision_params();
    return rwc_run_gather(s, sc, st, r, rc, rt, root, comm, alg, &prm);
}

rw_status rw_coll_scatter(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root,
                          MPI_Comm comm, rw_coll_alg alg)
{
    if (alg == RW_COLL_AUTO)
        API_AUTO(rwc_decided_scatter(s, sc, st, r, rc, rt, root, comm, &pass),
                 rwc_real_scatter(s, sc, st, r, rc, rt, root, comm), "MPI_Scatter");
    if (alg == RW_COLL_PASSTHROUGH)
        return rwc_mpi(rwc_real_scatter(s, sc, st, r, rc, rt, root, comm), "MPI_Scatter");
    rwc_params prm = rwc_decision_params();
    return rwc_run_scatter(s, sc, st, r, rc, rt, root, comm, alg, &prm);
}

rw_status rw_coll_allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                            rw_coll_alg alg)
{
    if (alg == RW_COLL_AUTO)
        API_AUTO(rwc_decided_allreduce(s, r, count, type, op, comm, &pass),
                 rwc_real_allreduce(s, r, count, type, op, comm), "MPI_Allreduce");
    if (alg == RW_COLL_PASSTHROUGH)
        return rwc_mpi(rwc_real_allreduce(s, r, count, type, op, comm), "MPI_Allreduce");
    rwc_params prm = rwc_decision_params();
    return rwc_run_allreduce(s, r, count, type, op, comm, alg, &prm);
}

rw_status rw_coll_allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm,
                            rw_coll_alg alg)
{
    if (alg == RW_COLL_AUTO)
        API_AUTO(rwc_decided_allgather(s, sc, st, r, rc, rt, comm, &pass),
                 rwc_real_allgather(s, sc, st, r, rc, rt, comm), "MPI_Allgather");
    if (alg == RW_COLL_PASSTHROUGH)
        return rwc_mpi(rwc_real_allgather(s, sc, st, r, rc, rt, comm), "MPI_Allgather");
    rwc_params prm = rwc_decision_params();
    return rwc_run_allgather(s, sc, st, r, rc, rt, comm, alg, &prm);
}

rw_status rw_coll_alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm,
                           rw_coll_alg alg)
{
    if (alg == RW_COLL_AUTO)
        API_AUTO(rwc_decided_alltoall(s, sc, st, r, rc, rt, comm, &pass),
                 rwc_real_alltoall(s, sc, st, r, rc, rt, comm), "MPI_Alltoall");
    if (alg == RW_COLL_PASSTHROUGH)
        return rwc_mpi(rwc_real_alltoall(s, sc, st, r, rc, rt, comm), "MPI_Alltoall");
    rwc_params prm = rwc_decision_params();
    return rwc_run_alltoall(s, sc, st, r, rc, rt, comm, alg, &prm);
}

/* ---- over a caller's tree ---- */

rw_status rw_coll_bcast_tree(void *buf, int count, MPI_Datatype type, const rw_tree *tree, MPI_Comm comm,
                             size_t segment_bytes)
{
    return rwc_run_bcast_tree(buf, count, type, tree, comm, segment_bytes);
}

rw_status rw_coll_reduce_tree(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, const rw_tree *tree,
                              MPI_Comm comm)
{
    return rwc_run_reduce_tree(s, r, count, type, op, tree, comm);
}

rw_status rw_coll_gather_tree(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                              const rw_tree *tree, MPI_Comm comm)
{
    return rwc_run_gather_tree(s, sc, st, r, rc, rt, tree, comm);
}

rw_status rw_coll_scatter_tree(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                               const rw_tree *tree, MPI_Comm comm)
{
    return rwc_run_scatter_tree(s, sc, st, r, rc, rt, tree, comm);
}
