/* The collectives and the library's algorithms (registry.h). Adding an
 * algorithm: its run function (engine/mpi/coll/base/, a line of run.c's
 * table), its schedule (a line of predict/library.c's table) and one line
 * here. */
#include "registry.h"

#include "rankwise_tree.h"

#include <stdio.h>
#include <string.h>

static const char *const OP_NAMES[RW_N_OPS] = {
    [RW_COLL_BCAST] = "bcast",         [RW_COLL_REDUCE] = "reduce", [RW_COLL_ALLREDUCE] = "allreduce",
    [RW_COLL_ALLGATHER] = "allgather", [RW_COLL_GATHER] = "gather", [RW_COLL_SCATTER] = "scatter",
    [RW_COLL_ALLTOALL] = "alltoall"};

const char *rw_op_name(int op)
{
    return op >= 0 && op < RW_N_OPS ? OP_NAMES[op] : NULL;
}

int rw_op_parse(const char *name)
{
    for (int op = 0; name && op < RW_N_OPS; op++)
        if (!strcmp(name, OP_NAMES[op]))
            return op;
    return -1;
}

int rw_op_rooted(int op)
{
    return op >= 0 && op < RW_N_OPS && (RW_OPS_ROOTED & RW_OP_BIT(op));
}

/* Open MPI's reduce pre-posts the next child's receive; its gather takes
 * the children one blocking receive after the other (tree_sched.c). */
static const char *const OMPI_NAMES[RW_N_OPS] = {[RW_COLL_REDUCE] = "reduce_ompi", [RW_COLL_GATHER] = "gather_ompi"};

const char *rw_op_ompi_name(int op)
{
    return op >= 0 && op < RW_N_OPS ? OMPI_NAMES[op] : NULL;
}

int rw_op_parse_variant(const char *name, int *ompi)
{
    *ompi = 0;
    for (int op = 0; name && op < RW_N_OPS; op++)
        if (OMPI_NAMES[op] && !strcmp(name, OMPI_NAMES[op])) {
            *ompi = 1;
            return op;
        }
    return rw_op_parse(name);
}

#define B(op) RW_OP_BIT(RW_COLL_##op)
/* The tree shapes run every collective but alltoall: allreduce as reduce +
 * bcast over the tree rooted at 0, allgather as gather + bcast. */
#define TREE_OPS (RW_OPS_ALL & ~B(ALLTOALL))
#define BOTH_ALL (B(ALLREDUCE) | B(ALLGATHER))

/* In the tuner's order: for allreduce and allgather it weighs binomial,
 * knomial, recursive doubling, ring, hier, then multiring and trinary
 * where they apply (select.c). */
static const rw_algo_info ALGS[] = {
    /* id                        name                  ops                            tuned         flags, shape */
    {RW_ALGO_AUTO, "auto", 0, 0, 0, -1},
    {RW_ALGO_PASSTHROUGH, "passthrough", RW_OPS_ALL, 0, 0, -1},
    {RW_ALGO_BINOMIAL, "binomial", TREE_OPS, BOTH_ALL, RW_ALGO_TREE, RW_SHAPE_BINOMIAL},
    {RW_ALGO_KNOMIAL, "knomial", TREE_OPS, BOTH_ALL, RW_ALGO_TREE, RW_SHAPE_KNOMIAL},
    {RW_ALGO_RECURSIVE_DOUBLING, "recursive_doubling", BOTH_ALL, BOTH_ALL, 0, -1},
    {RW_ALGO_RING, "ring", BOTH_ALL, BOTH_ALL, 0, -1},
    {RW_ALGO_HIER, "hier", TREE_OPS, BOTH_ALL, RW_ALGO_TREE | RW_ALGO_NODES, -1},
    {RW_ALGO_MULTIRING, "multiring", B(ALLGATHER), B(ALLGATHER), RW_ALGO_ORDER, -1},
    {RW_ALGO_TRINARY, "trinary", B(BCAST) | B(REDUCE) | B(ALLREDUCE), B(BCAST) | B(REDUCE) | B(ALLREDUCE),
     RW_ALGO_ORDER | RW_ALGO_SEGMENT | RW_ALGO_COMMUTES | RW_ALGO_LONG, -1},
    {RW_ALGO_PAIRWISE, "pairwise", B(ALLTOALL), B(ALLTOALL), 0, -1},
    {RW_ALGO_SYMMETRIC, "symmetric", B(ALLTOALL), B(ALLTOALL), RW_ALGO_CAP, -1},
    {RW_ALGO_FLAT, "flat", TREE_OPS, 0, RW_ALGO_TREE, RW_SHAPE_FLAT},
    {RW_ALGO_CHAIN, "chain", TREE_OPS, 0, RW_ALGO_TREE, RW_SHAPE_CHAIN},
};
#define N_ALGS ((int)(sizeof ALGS / sizeof *ALGS))
_Static_assert(N_ALGS == RW_N_ALGOS, "one line per algorithm id");

const rw_algo_info *rw_algo_at(int i)
{
    return i >= 0 && i < N_ALGS ? &ALGS[i] : NULL;
}

const rw_algo_info *rw_algo_by_id(int id)
{
    for (int i = 0; i < N_ALGS; i++)
        if (ALGS[i].id == id)
            return &ALGS[i];
    return NULL;
}

const rw_algo_info *rw_algo_by_name(const char *name)
{
    if (name && !strcmp(name, "rd")) /* the shorthand RANKWISE_COLL_<OP> takes */
        return rw_algo_by_id(RW_ALGO_RECURSIVE_DOUBLING);
    for (int i = 0; name && i < N_ALGS; i++)
        if (!strcmp(name, ALGS[i].name))
            return &ALGS[i];
    return NULL;
}

int rw_algo_valid(int op, int id)
{
    const rw_algo_info *a = rw_algo_by_id(id);
    return a && op >= 0 && op < RW_N_OPS && (a->ops & RW_OP_BIT(op));
}

static void join(char *buf, size_t size, size_t *len, const char *sep, const char *name)
{
    int k = snprintf(buf + *len, size - *len, "%s%s", *len ? sep : "", name);
    if (k > 0)
        *len = *len + (size_t)k < size ? *len + (size_t)k : size - 1;
}

const char *rw_algo_names(char *buf, size_t size, int first_id, int op, int last_or)
{
    size_t len = 0;
    int last = -1;
    buf[0] = '\0';
    for (int id = first_id; id < RW_N_ALGOS; id++)
        if (op < 0 || rw_algo_valid(op, id))
            last = id;
    for (int id = first_id; id < RW_N_ALGOS; id++)
        if (op < 0 || rw_algo_valid(op, id))
            join(buf, size, &len, last_or && id == last && len ? " or " : ", ", rw_algo_by_id(id)->name);
    return buf;
}

const char *rw_op_names(char *buf, size_t size, unsigned ops, const char *last_sep)
{
    size_t len = 0;
    int last = -1;
    buf[0] = '\0';
    for (int op = 0; op < RW_N_OPS; op++)
        if (ops & RW_OP_BIT(op))
            last = op;
    for (int op = 0; op < RW_N_OPS; op++)
        if (ops & RW_OP_BIT(op))
            join(buf, size, &len, op == last && len ? last_sep : ", ", OP_NAMES[op]);
    return buf;
}
