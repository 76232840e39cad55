/* Virtual torus (Tofu-style): the stencil blocks' placement, with the grid
 * of node boxes also laid out folded along every periodic dimension (the
 * ring 0, 1, 2, ... visits positions 0, 2, 4, ..., 5, 3, 1), so that the
 * wrap-around neighbours sit as close as the others when the network
 * itself is a line or a torus. The plain order is costed too and wins when
 * cheaper: on racks behind one switch, folding only doubles every rack's
 * surface. */
#include "grid.h"

rw_status rw_alg_torus(const rw_map_job *job, int32_t *node_of, int32_t *slot_of)
{
    return rw_grid_map(job, node_of, slot_of, 1);
}
