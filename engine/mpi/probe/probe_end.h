/* How the probe ended, for the program around it. */
#ifndef RW_PROBE_END_H
#define RW_PROBE_END_H

/* Nonzero when the last rw_probe_run gave up on a peer that stopped
 * answering (on rank 0: as seen by any node), leaving MPI requests or a
 * collective that may never complete. MPI_Finalize then waits for that
 * peer forever, so the program must end without it. Always 0 under SMPI,
 * where waits block. */
int rw_probe_left_pending(void);

#endif
