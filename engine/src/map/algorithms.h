/* The mapping algorithms' entry points (one file each) and what they
 * share: the job they are given, the refinement they may end with, grid
 * detection. map.c's algorithm table points at these; the algorithms
 * themselves see only this header, context.h and rng.h. */
#ifndef RW_MAP_ALGORITHMS_H
#define RW_MAP_ALGORITHMS_H

#include "context.h"
#include "rng.h"

/* ---------------------------------------------------------------------
 * Algorithms. Each receives the job and a valid start placement in
 * node_of (on job->net, a network restricted to the selected nodes) and
 * overwrites it with its result; slot_of may be filled (else left -1,
 * and ranks take a node's slots in rank order). They stop at
 * job->deadline (seconds on rw_now()) with the best placement found.
 * ------------------------------------------------------------------- */
typedef struct rw_map_job {
    const rw_matrix *traffic;
    const rw_network *net;
    const rw_map_options *opt;
    double deadline;
} rw_map_job;

rw_status rw_alg_greedy(const rw_map_job *job, int32_t *node_of);
rw_status rw_alg_anneal(const rw_map_job *job, int32_t *node_of);
rw_status rw_alg_exhaustive(const rw_map_job *job, int32_t *node_of);
rw_status rw_alg_stencil(const rw_map_job *job, int32_t *node_of, int32_t *slot_of);
rw_status rw_alg_torus(const rw_map_job *job, int32_t *node_of, int32_t *slot_of);
rw_status rw_alg_multilevel(const rw_map_job *job, int32_t *node_of);

/* 1 when the traffic is a stencil on a Cartesian grid numbered in rank
 * order (x fastest), with the grid and whether it wraps; 0 otherwise. */
int rw_detect_grid(const rw_matrix *traffic, int32_t grid[3], int32_t *periodic);

/* Swap/move refinement of node_of against the job's objective. When
 * `local` is set, a rank only looks at the nodes of its communication
 * partners (large jobs); otherwise at every node. Returns the number of
 * accepted moves, or -1 (error left in rw_last_error). */
int64_t rw_refine(const rw_map_job *job, int32_t *node_of, int local);

#endif
