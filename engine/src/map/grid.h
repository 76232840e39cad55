/* Process-grid jobs (stencil blocks, virtual torus): what the two
 * algorithms share. The placement engine itself is rw_grid_map, in
 * stencil.c; torus.c only asks it to also try folded orders. */
#ifndef RW_MAP_GRID_H
#define RW_MAP_GRID_H

#include "algorithms.h"

/* The job's process grid, x fastest (rank = x + gx (y + gy z)); a missing
 * y or z extent counts as 1. RW_ERR_ARG when it does not hold n ranks. */
static inline rw_status rw_grid_dims(const rw_map_options *o, int32_t n, int32_t dim[3])
{
    for (int d = 0; d < 3; d++) dim[d] = o->grid[d] > 0 ? o->grid[d] : 1;
    int64_t p = (int64_t)dim[0] * dim[1] * dim[2];
    if (o->grid[0] <= 0 || p != n)
        return rw_fail(RW_ERR_ARG, "the process grid %dx%dx%d holds %lld ranks, the job has %d",
                       o->grid[0], o->grid[1], o->grid[2], o->grid[0] > 0 ? (long long)p : 0LL,
                       n);
    return RW_OK;
}

/* Coordinate d of cell p of a grid. */
static inline int32_t rw_grid_coord(const int32_t dim[3], int64_t p, int d)
{
    if (d == 0) return (int32_t)(p % dim[0]);
    if (d == 1) return (int32_t)((p / dim[0]) % dim[1]);
    return (int32_t)(p / ((int64_t)dim[0] * dim[1]));
}

/* Position of ring coordinate c (of g) on a line laid out folded: the ring
 * visits positions 0, 2, 4, ..., 5, 3, 1, so every neighbour pair, the
 * wrap-around one included, sits at most two positions apart. */
static inline int32_t rw_grid_fold(int32_t c, int32_t g)
{
    int32_t half = (g + 1) / 2;
    return c < half ? 2 * c : 2 * (g - 1 - c) + 1;
}

/* Cells of a grid (cell_dim, wrapping when periodic), one per node among
 * the `usable` ones, so that grid neighbours sit on neighbouring nodes:
 * node pairs within a few percent of each node's nearest latency
 * (embed.c). 1 with owner[cell] filled, 0 when none was found within the
 * search's budget, -1 out of memory. */
int rw_grid_embed(const rw_network *net, const int32_t cell_dim[3], int periodic,
                  const uint8_t *usable, int32_t *owner);

/* Place the grid job: node boxes (or, failing an exact tiling, the ranks
 * themselves) cut by recursive bisection along the network's hierarchy of
 * close nodes. With `torus` set, orders folded along every periodic
 * dimension are tried too; the cheapest candidate under the job's
 * objective wins. */
rw_status rw_grid_map(const rw_map_job *job, int32_t *node_of, int32_t *slot_of, int torus);

#endif
