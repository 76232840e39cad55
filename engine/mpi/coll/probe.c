/* The in-job measurement behind RANKWISE_COLL_PROBE=1 (coll.h,
 * rwc_probe_pnet): not built yet, so the decision falls through to the
 * MPI's own collective. Collective on c: every rank returns the same. */
#include "coll.h"
#include "internal.h"

rw_status rwc_probe_pnet(rwc_comm *c, rw_pnet **out)
{
    *out = NULL;
    return rw_fail(RW_ERR_STATE, "in-job measurement not built");
}
