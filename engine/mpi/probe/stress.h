/* The capacity stress test: many flows at once between groups of nodes,
 * to find what shared links (rack uplinks) and node interfaces carry. */
#ifndef RW_STRESS_H
#define RW_STRESS_H

#include <mpi.h>

#include "rankwise.h"

typedef struct rw_stress_cost {
    int phases;     /* timed phases run (each repeated a few times) */
    double seconds; /* MPI_Wtime the test took (simulated under SMPI) */
} rw_stress_cost;

/* Collective over `leaders` (one rank per node, rank = node index). Rank 0
 * holds `m` (NULL elsewhere), its pairs measured, or copied by node name
 * from `base` when base is not NULL: it finds the groups
 * (rw_model_groups), plans the phases and, from the rates measured, writes
 * group_of, the links and the nic caps (inject/eject) into m. */
rw_status rw_stress_run(MPI_Comm leaders, rw_model *m, const rw_model *base);

/* The cost of the last rw_stress_run on rank 0 (phases -1 when none ran). */
rw_stress_cost rw_stress_last_cost(void);

#endif
