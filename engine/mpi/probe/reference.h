/* The reference pass: lone-pair bandwidths from rounds whose flow sets are
 * known (one flow out of each group per round), after the tournament. */
#ifndef RW_REFERENCE_H
#define RW_REFERENCE_H

#include <mpi.h>
#include <stdint.h>

#include "rankwise.h"

typedef struct rw_reference_cost {
    int rounds;     /* rounds run (-1: none) */
    double seconds; /* MPI_Wtime they took (simulated under SMPI) */
    double wall;    /* the host's seconds they took (the simulation's cost under SMPI) */
    int raised;     /* cross-group pairs rewritten at their lone bandwidth */
    double gain;    /* median bandwidth gain of those pairs (0.25: +25 %) */
    int abandoned;  /* 1: given up on a node; requests may be pending */
} rw_reference_cost;

/* Collective over `leaders` (rank = node index). Rank 0 holds `m` (NULL
 * elsewhere), its pairs measured by the tournament: it finds the groups
 * (rw_model_groups), plans at most max_rounds rounds over the groups (none
 * with one group or no size >= 128 KiB and the knee), and rewrites each
 * cross-group pair measured slower than its lone estimate. sizes: the
 * probe's sizes (the model's, on every leader). A leader that does not
 * answer within `timeout` ends the pass on every leader still answering:
 * RW_OK, m unchanged, rw_reference_last_cost().abandoned set. */
rw_status rw_reference_run(MPI_Comm leaders, rw_model *m, const int64_t *sizes, int reps, int warmup,
                           int max_rounds, double timeout);

/* The cost of the last rw_reference_run on rank 0. */
rw_reference_cost rw_reference_last_cost(void);

#endif
