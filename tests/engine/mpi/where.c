/* Each rank prints "rank R host H cpu C" (sched_getcpu) and the cpus it may
 * run on: how the tests check that a launcher bound ranks where rankwise
 * placed them. */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    cpu_set_t set;
    CPU_ZERO(&set);
    char allowed[1024] = "";
    int len = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE && len < (int)sizeof allowed - 8; c++)
            if (CPU_ISSET(c, &set))
                len += snprintf(allowed + len, sizeof allowed - (size_t)len, "%s%d", len ? "," : "", c);
    /* Ranks print in turn so that lines never interleave. */
    for (int r = 0; r < 1 << 20; r++) {
        int size;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (r >= size)
            break;
        if (r == rank) {
            printf("rank %d host %s cpu %d allowed %s\n", rank, host, sched_getcpu(), allowed);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
