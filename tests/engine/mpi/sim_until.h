/* Sleep until the (simulated) instant t, in seconds of MPI_Wtime: the test
 * programs start every timed call on all ranks at one instant (under SMPI a
 * sleep costs no wall time), as the benchmark harness does. Header only:
 * each program is compiled from its one source file. */
#ifndef RW_TESTS_SIM_UNTIL_H
#define RW_TESTS_SIM_UNTIL_H

#include <mpi.h>
#include <time.h>

static inline void sim_until(double t)
{
    double wait = t - MPI_Wtime();
    if (wait <= 0)
        return;
    struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
    nanosleep(&ts, NULL);
}

#endif
