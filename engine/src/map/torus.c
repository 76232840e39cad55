/* Placeholder until the torus algorithm lands. */
#include "map_internal.h"
rw_status rw_alg_torus(const rw_map_job *job, int32_t *node_of, int32_t *slot_of)
{
    return rw_fail(RW_ERR_STATE, "virtual torus mapping is not built yet");
}
