/* The capacity stress test: many flows at once between groups of nodes,
 * to find what shared links (rack uplinks) and node interfaces carry. */
#ifndef RW_STRESS_H
#define RW_STRESS_H

#include <mpi.h>

#include "rankwise.h"

typedef struct rw_stress_cost {
    int phases;     /* timed phases run (each repeated a few times) */
    double seconds; /* MPI_Wtime the test took (simulated under SMPI) */
    int abandoned;  /* 1: given up on a node that stopped answering; requests
                       or a collective are left pending (do not finalize) */
    int raised;     /* pairs through a link whose load varies raised to its
                       typical reading (raise_varying) */
} rw_stress_cost;

/* Collective over `leaders` (one rank per node, rank = node index). Rank 0
 * holds `m` (NULL elsewhere), its pairs measured, or copied by node name
 * from `base` when base is not NULL: it finds the groups
 * (rw_model_groups), plans the phases and, from the rates measured, writes
 * group_of, the links and the nic caps (inject/eject) into m, and raises
 * the pairs through a link whose load varies to its typical reading. A leader
 * that does not answer within `timeout` seconds (a step's start or a flow)
 * ends the test on every leader still answering: RW_OK, m without links,
 * and rw_stress_last_cost().abandoned set. */
rw_status rw_stress_run(MPI_Comm leaders, rw_model *m, const rw_model *base, double timeout);

/* The cost of the last rw_stress_run on rank 0 (phases -1 when none ran). */
rw_stress_cost rw_stress_last_cost(void);

#endif
