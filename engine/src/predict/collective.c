/* A collective call as a schedule, and its predicted time. */
#include "predict_internal.h"

#include <math.h>
#include <string.h>

typedef rw_status (*coll_fn)(rw_builder *, const char *, double);

static const struct {
    const char *op;
    coll_fn fn;
    const char *algorithms;
} OPS[] = {
    {"alltoall", rwp_sched_alltoall, "pair,ring,bruck,linear"},
    {"bcast", rwp_sched_bcast, "binomial,knomial,knomial_isend,flat,chain,scatter_allgather,scatter_rdb_allgather"},
    {"reduce", rwp_sched_reduce, "binomial"},
    {"allreduce", rwp_sched_allreduce, "rdb,ring,rabenseifner"},
    {"allgather", rwp_sched_allgather, "ring,rdb,bruck,neighborexchange"},
    {"gather", rwp_sched_gather, "binomial,linear"},
    {"scatter", rwp_sched_scatter, "binomial,linear"},
};
#define N_OPS (sizeof OPS / sizeof OPS[0])

const char *rw_collective_algorithms(const char *op)
{
    for (size_t i = 0; op && i < N_OPS; i++)
        if (!strcmp(op, OPS[i].op))
            return OPS[i].algorithms;
    return "";
}

rw_status rw_sched_collective(const char *op, const char *algorithm, int32_t n_ranks, double bytes,
                              const rw_coll_options *opt, rw_sched **out)
{
    if (!out)
        return rw_fail(RW_ERR_ARG, "rw_sched_collective: out is NULL");
    *out = NULL;
    if (!op || !algorithm)
        return rw_fail(RW_ERR_ARG, "rw_sched_collective: operation and algorithm are required");
    size_t i = 0;
    while (i < N_OPS && strcmp(op, OPS[i].op))
        i++;
    if (i == N_OPS)
        return rw_fail(RW_ERR_ARG,
                       "unknown collective '%s' (known: alltoall, bcast, reduce, allreduce, allgather, gather, scatter)",
                       op);
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
