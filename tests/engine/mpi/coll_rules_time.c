/* Times of broadcasts under SMPI with a rules file, for
 * tests/python/coll/test_coll_rules.py. Per size, one broadcast from rank 0:
 *   auto  MPI_Bcast as the library decides it (RANKWISE_COLL_RULES);
 *   tree  the tree the rules give for it, through rw_coll_bcast_tree
 *         (the MPI's own when the rule is not a tree);
 *   pass  the MPI's own (RW_COLL_PASSTHROUGH).
 * Every timed call starts on all ranks at one simulated instant, the same
 * in every mode (as coll_oracle.c), so two modes running the same messages
 * print the same times. Each rank prints "rank size nanoseconds", rank 0
 * also "rule size algorithm segment" as it read the rules itself.
 * Usage: coll_rules_time auto|tree|pass RULES SIZE... (an SMPI program). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rankwise_coll.h"
#include "rankwise_coll_rules.h"
#include "sim_until.h"

static double next_start = 0.9; /* simulated seconds: 1.0, 1.1, ... on every rank, after the set-up */

/* sleep until the next call's instant, far after the previous call's end */
static void start(void)
{
    next_start += 0.1;
    sim_until(next_start);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    rw_coll_rules *rules = NULL;
    if (argc < 4 || rw_coll_rules_read(argv[2], &rules) != RW_OK) {
        fprintf(stderr, "coll_rules_time: %s\n",
                argc < 4 ? "usage: coll_rules_time auto|tree|pass RULES SIZE..." : rw_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *mode = argv[1];
    int max = 0;
    for (int i = 3; i < argc; i++)
        max = atoi(argv[i]) > max ? atoi(argv[i]) : max;
    char *buf = calloc((size_t)max + 1, 1);
    /* the library's set-up, untimed: the communicator's duplicate and, with
     * a model, its network and a decision per size class */
    MPI_Bcast(buf, 1, MPI_CHAR, 0, MPI_COMM_WORLD);
    for (int i = 3; i < argc; i++)
        MPI_Bcast(buf, atoi(argv[i]), MPI_CHAR, 0, MPI_COMM_WORLD);
    for (int i = 3; i < argc; i++) {
        int size = atoi(argv[i]);
        rw_coll_choice ch;
        rw_coll_rules_lookup(rules, "bcast", n, 0, size, &ch);
        if (me == 0)
            printf("rule %d %s %lld\n", size, ch.algorithm, (long long)ch.segment);
        rw_status st = RW_OK;
        start();
        double t0 = MPI_Wtime();
        if (!strcmp(mode, "auto"))
            MPI_Bcast(buf, size, MPI_CHAR, 0, MPI_COMM_WORLD);
        else if (!strcmp(mode, "tree") && ch.tree)
            st = rw_coll_bcast_tree(buf, size, MPI_CHAR, ch.tree, MPI_COMM_WORLD, (size_t)ch.segment);
        else
            st = rw_coll_bcast(buf, size, MPI_CHAR, 0, MPI_COMM_WORLD, RW_COLL_PASSTHROUGH);
        double took = MPI_Wtime() - t0;
        if (st) {
            fprintf(stderr, "coll_rules_time: %s\n", rw_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("%d %d %.0f\n", me, size, took * 1e9);
    }
    rw_coll_rules_free(rules);
    free(buf);
    MPI_Finalize();
    return 0;
}
