/* Placeholder until the multilevel algorithm lands. */
#include "map_internal.h"
rw_status rw_alg_multilevel(const rw_map_job *job, int32_t *node_of)
{
    return rw_fail(RW_ERR_STATE, "multilevel mapping is not built yet");
}
