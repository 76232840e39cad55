/* Per-node send overhead o, measured by the probe (overhead.c). */
#ifndef RW_OVERHEAD_H
#define RW_OVERHEAD_H

#include <mpi.h>
#include <stdint.h>

/* Called by every leader of `leaders` at once: this node's send overhead
 * in seconds (median over batches of the time per back-to-back blocking
 * 8-byte send to the next leader on a ring), NaN when that one is known
 * dead (`dead`, per leader, may be NULL) or did not acknowledge within
 * `timeout`. */
double rw_measure_overhead(MPI_Comm leaders, const uint8_t *dead, double timeout);

#endif
