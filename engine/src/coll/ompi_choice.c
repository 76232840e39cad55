/* The fastest of Open MPI's own algorithms for a call, by the predictor, as
 * its coll/tuned dynamic rules file numbers them (rankwise_coll_tune.h,
 * rw_coll_ompi_choose; docs/concepts/collectives.md, "Open MPI's own
 * rules file"). */
#include "registry.h"
#include "tune_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Open MPI 4.1's coll/tuned numbers of the algorithms the predictor costs
 * as Open MPI runs them (names as rw_coll_ompi_algorithm gives them).
 * Left out: allreduce ring (it ignores non-commutative operations, which
 * a rules file cannot tell apart), reduce binary, chain and pipeline (trees
 * not in rank order: wrong for non-commutative operations), bcast chain and
 * knomial (other fan-outs and radix than the predictor's schedules), and
 * where SMPI's ports of Open MPI's code disagree with the predictor on
 * generated platforms (docs/results/coll.md, "Open MPI's own rules file"):
 * reduce linear (its blocking receives in rank order: slower than
 * predicted in every row), bcast pipeline (not checkable there: SMPI's
 * port picks its own segment), gather and scatter linear from the eager
 * limit (rendezvous blocks, as the library's own trees there), bcast's
 * scatter + allgather (slower in 5 of 15 simulated rows and 2 of 3 under
 * real Open MPI). */
static const struct {
    int op; /* registry.h */
    const char *name;
    int32_t id;
    int pow2_only;     /* the predictor's schedule of it needs a power-of-two size */
    int eager_only;    /* costed right only below the eager limit */
} ALGS[] = {
    {RW_COLL_BCAST, "linear", 1, 0, 0},
    {RW_COLL_BCAST, "split_binary", 4, 0, 0},
    {RW_COLL_BCAST, "binary", 5, 0, 0},
    {RW_COLL_BCAST, "binomial", 6, 0, 0},
    {RW_COLL_REDUCE, "binomial", 5, 0, 0},
    {RW_COLL_GATHER, "linear", 1, 0, 1},
    {RW_COLL_GATHER, "binomial", 2, 0, 0},
    {RW_COLL_SCATTER, "linear", 1, 0, 1},
    {RW_COLL_SCATTER, "binomial", 2, 0, 0},
    {RW_COLL_ALLREDUCE, "nonoverlapping", 2, 0, 0},
    {RW_COLL_ALLREDUCE, "recursive_doubling", 3, 0, 0},
    {RW_COLL_ALLREDUCE, "rabenseifner", 6, 0, 0},
    {RW_COLL_ALLGATHER, "bruck", 2, 0, 0},
    {RW_COLL_ALLGATHER, "recursive_doubling", 3, 1, 0},
    {RW_COLL_ALLGATHER, "ring", 4, 0, 0},
    {RW_COLL_ALLGATHER, "neighbor", 5, 0, 0},
    {RW_COLL_ALLTOALL, "linear", 1, 0, 0},
    {RW_COLL_ALLTOALL, "pair", 2, 0, 0},
    {RW_COLL_ALLTOALL, "bruck", 3, 0, 0},
};
#define N_ALGS (sizeof ALGS / sizeof ALGS[0])

/* Open MPI's collective numbers in its rules file (coll_base_functions.h). */
int32_t rw_coll_ompi_collective_id(const char *op)
{
    static const int32_t IDS[RW_N_OPS] = {[RW_COLL_ALLGATHER] = 0, [RW_COLL_ALLREDUCE] = 2, [RW_COLL_ALLTOALL] = 3,
                                          [RW_COLL_BCAST] = 7,     [RW_COLL_GATHER] = 9,     [RW_COLL_REDUCE] = 11,
                                          [RW_COLL_SCATTER] = 15};
    int k = rw_op_parse(op);
    return k >= 0 ? IDS[k] : -1;
}

static void put(rw_coll_ompi_choice *out, const char *name, int32_t id, int64_t segment, double time)
{
    rw_coll_ompi_alg *a = &out->alg[out->n++];
    snprintf(a->name, sizeof a->name, "%s", name);
    a->id = id;
    a->segment = segment;
    a->time = time;
}

struct cost_ctx {
    const rw_coll_ompi_choice *out;
    const char *op;
    double bytes;
    const rw_tune_options *o;
};

static double cost_on(int32_t i, const rw_pnet *view, void *ctx)
{
    const struct cost_ctx *c = ctx;
    int64_t seg;
    return rw_coll_ompi_time(view, c->op, c->out->alg[i].name, c->bytes, c->o, &seg);
}

rw_status rw_coll_ompi_choose(const rw_pnet *net, const char *op, double bytes, const rw_tune_options *opt,
                              rw_coll_ompi_choice *out)
{
    if (!out)
        return rw_fail(RW_ERR_ARG, "rw_coll_ompi_choose: out is NULL");
    memset(out, 0, sizeof *out);
    rw_tune_options o;
    const char *fixed;
    rw_status checked = rw_coll_check_decision("rw_coll_ompi_choose", net, op, bytes, opt, &o, &fixed);
    if (checked != RW_OK)
        return checked;
    int32_t p = net->n_ranks, k_op = rw_op_parse(op);
    int64_t seg;
    double pass = rw_coll_ompi_time(net, op, fixed, bytes, &o, &seg);
    put(out, fixed, 0, seg, pass);
    for (size_t i = 0; i < N_ALGS && out->n < RW_COLL_OMPI_MAX; i++) {
        if (ALGS[i].op != k_op || (ALGS[i].pow2_only && (p & (p - 1))) ||
            (ALGS[i].eager_only && bytes >= (double)o.eager_limit))
            continue;
        double t = rw_coll_ompi_time(net, op, ALGS[i].name, bytes, &o, &seg);
        if (isfinite(t))
            put(out, ALGS[i].name, ALGS[i].id, seg, t);
    }
    double times[RW_COLL_OMPI_MAX];
    for (int32_t i = 0; i < out->n; i++)
        times[i] = out->alg[i].time;
    struct cost_ctx ctx = {out, op, bytes, &o};
    rw_coll_gain_rule rule = {net, out->n, times, NULL, o.min_gain, cost_on, &ctx};
    rw_status st = rw_coll_pick(&rule, &out->chosen);
    if (st) {
        memset(out, 0, sizeof *out);
        return st;
    }
    out->gain = pass > 0 && isfinite(pass) ? 1.0 - out->alg[out->chosen].time / pass : 0.0;
    return RW_OK;
}
