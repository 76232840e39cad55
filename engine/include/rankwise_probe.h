/* rankwise — the network probe, an MPI library function.
 * Built twice from the same sources: against a real MPI and against
 * SimGrid SMPI (where RW_SMPI is defined). */
#ifndef RANKWISE_PROBE_H
#define RANKWISE_PROBE_H

#include <mpi.h>

#include "rankwise.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rw_group_by {
    RW_GROUP_BY_HOST = 0, /* ranks with the same processor name form a node */
    RW_GROUP_BY_RANK = 1  /* every rank is a node of its own (localhost tests) */
} rw_group_by;

enum { RW_CAPACITIES_NONE = 0, RW_CAPACITIES_AFTER = 1, RW_CAPACITIES_ONLY = 2 };

typedef void (*rw_progress_fn)(int done, int total, void *arg);

typedef struct rw_probe_options {
    rw_probe_settings settings;
    int n_sizes;
    const int64_t *sizes;
    rw_group_by group_by;
    int measure_intra;         /* also rank-to-rank inside each node */
    /* Partial probe: n_pairs ordered pairs given by node name (src, dst);
     * 0 means every pair. */
    int n_pairs;
    const char *const *pair_src;
    const char *const *pair_dst;
    /* Shared-link capacity stress test (engine/mpi/probe/stress.c):
     * RW_CAPACITIES_AFTER after the ping-pong, RW_CAPACITIES_ONLY instead
     * of it, on the pairs of `base` (rank 0; same sizes as the options). */
    int capacities;
    const rw_model *base;
    /* 1: no reference pass after the tournament (engine/mpi/probe/
     * reference.c: lone-pair bandwidths of pairs across groups). */
    int no_references;
    rw_progress_fn progress;   /* called on rank 0 only, may be NULL */
    void *progress_arg;
} rw_probe_options;

/* Options with the documented defaults: 8 B to 4 MiB, concurrent mode. */
void rw_probe_options_default(rw_probe_options *opt);

/* Collective over comm. On rank 0 of comm *out receives the model (NULL
 * elsewhere). Every rank returns the same status. */
rw_status rw_probe_run(MPI_Comm comm, const rw_probe_options *opt, rw_model **out);

#ifdef __cplusplus
}
#endif
#endif
