/* A collective call as a schedule, and its predicted time. */
#include "predict_internal.h"
#include "../coll/registry.h"

#include <math.h>
#include <string.h>

typedef rw_status (*coll_fn)(rw_builder *, const char *, double);

/* The schedule of each operation (the registry's ids) and the algorithms
 * of the MPI's own it models (SimGrid SMPI's names). */
static const struct {
    coll_fn fn;
    const char *algorithms;
} OPS[RW_N_OPS] = {
    [RW_COLL_ALLTOALL] = {rwp_sched_alltoall, "pair,ring,bruck,linear"},
    [RW_COLL_BCAST] = {rwp_sched_bcast,
                       "binomial,knomial,knomial_isend,flat,chain,scatter_allgather,scatter_rdb_allgather"},
    [RW_COLL_REDUCE] = {rwp_sched_reduce, "binomial"},
    [RW_COLL_ALLREDUCE] = {rwp_sched_allreduce, "rdb,ring,rabenseifner"},
    [RW_COLL_ALLGATHER] = {rwp_sched_allgather, "ring,rdb,bruck,neighborexchange"},
    [RW_COLL_GATHER] = {rwp_sched_gather, "binomial,linear"},
    [RW_COLL_SCATTER] = {rwp_sched_scatter, "binomial,linear"},
};

const char *rw_collective_algorithms(const char *op)
{
    int k = rw_op_parse(op);
    return k >= 0 ? OPS[k].algorithms : "";
}

rw_status rw_sched_collective(const char *op, const char *algorithm, int32_t n_ranks, double bytes,
                              const rw_coll_options *opt, rw_sched **out)
{
    if (!out)
        return rw_fail(RW_ERR_ARG, "rw_sched_collective: out is NULL");
    *out = NULL;
    if (!op || !algorithm)
        return rw_fail(RW_ERR_ARG, "rw_sched_collective: operation and algorithm are required");
    int i = rw_op_parse(op);
    char known[160];
    if (i < 0)
        return rw_fail(RW_ERR_ARG, "unknown collective '%s' (known: %s)", op,
                       rw_op_names(known, sizeof known, RW_OPS_ALL, ", "));
    if (!(isfinite(bytes) && bytes >= 0.0 && bytes < 9.0e15))
        return rw_fail(RW_ERR_ARG, "%s: message size %g bytes (0 to 8 PB)", op, bytes);
    if (n_ranks < 1 || n_ranks > (1 << 24))
        return rw_fail(RW_ERR_ARG, "%s: %d ranks (1 to 2^24)", op, (int)n_ranks);
    if (opt && (opt->gamma < 0 || !isfinite(opt->gamma) || opt->eager_threshold < 0))
        return rw_fail(RW_ERR_ARG, "%s: gamma %g and eager threshold %lld must be >= 0", op, opt->gamma,
                       (long long)opt->eager_threshold);
    rw_builder b;
    rw_status st = rw_builder_init(&b, n_ranks, opt);
    if (st != RW_OK)
        return st;
    st = OPS[i].fn(&b, algorithm, bytes);
    if (st != RW_OK && b.err == RW_OK)
        b.err = st;
    return rw_builder_finish(&b, out);
}

rw_status rw_predict_collective(const rw_pnet *net, const char *op, const char *algorithm, double bytes,
                                const rw_coll_options *opt, rw_sim_mode mode, rw_sim_result *out)
{
    if (!net || !out)
        return rw_fail(RW_ERR_ARG, "rw_predict_collective: net and out are required");
    rw_sched *s = NULL;
    rw_status st = rw_sched_collective(op, algorithm, net->n_ranks, bytes, opt, &s);
    if (st == RW_OK)
        st = rw_simulate(net, s, mode, out, NULL);
    rw_sched_free(s);
    return st;
}
