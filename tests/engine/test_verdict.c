/* The statistics of the trials that verify a decision in the job
 * (engine/src/coll/verdict.c, engine/mpi/coll/decision/verify.c): a block's time
 * per call without the calls that lost the processor, block lengths with
 * a bound, and a verdict that keeps the MPI's own unless the choice is
 * faster beyond the trials' spread. */
#include "../../engine/src/coll/verdict.h"
#include "check.h"

#include <math.h>

/* Four blocks as verify.c lays them out (choice, own, choice, own), each
 * block's per-call times; the verdict from their block statistics. */
static int verdict(double blocks[4][8], int n)
{
    double choice[2], own[2];
    for (int k = 0; k < 4; k++)
        (k % 2 ? own : choice)[k / 2] = rw_verdict_block(blocks[k], n);
    return rw_verdict_keep(choice, 2, own, 2, 0.02);
}

int main(void)
{
    /* the slowest quarter is left out: one of 3 or 4, two of 8 */
    double three[] = {3e-3, 1e-6, 2e-6};
    CHECK_CLOSE(rw_verdict_block(three, 3), 1.5e-6, 1e-12);
    double four[] = {1e-6, 4e-3, 1e-6, 1e-6};
    CHECK_CLOSE(rw_verdict_block(four, 4), 1e-6, 1e-12);
    double eight[] = {1, 2, 3, 4, 5, 6, 100, 200};
    CHECK_CLOSE(rw_verdict_block(eight, 8), 3.5, 1e-12);
    double one[] = {7};
    CHECK(rw_verdict_block(one, 1) == 7);

    /* Two sub-microsecond collectives of the same speed (0.4 us a call),
     * one call of each of the MPI's own blocks losing a 4 ms time slice:
     * the blocks' sums (the statistic before) made the choice 2,000x
     * faster and kept it; without the slowest quarter the two cannot be
     * told apart and the MPI's own stays. */
    double same[4][8];
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 8; i++)
            same[k][i] = 0.4e-6 * (1 + 0.01 * ((i * 7 + k) % 5));
    same[1][3] = same[3][6] = 4e-3;
    double sums[4] = {0, 0, 0, 0};
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 8; i++)
            sums[k] += same[k][i];
    double sum_choice[2] = {sums[0], sums[2]}, sum_own[2] = {sums[1], sums[3]};
    CHECK(rw_verdict_keep(sum_choice, 2, sum_own, 2, 0.02) == 1); /* the flaw of the sums */
    CHECK(verdict(same, 8) == 0);

    /* A choice twice as fast keeps its verdict through a lost time slice
     * in one of its own blocks and in the MPI's own. */
    double faster[4][8];
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 8; i++)
            faster[k][i] = (k % 2 ? 0.8e-6 : 0.4e-6) * (1 + 0.01 * (i % 3));
    faster[0][2] = faster[3][5] = 4e-3;
    CHECK(verdict(faster, 8) == 1);

    /* Within the spread: the choice faster on average (0.95x) but its
     * blocks overlapping the MPI's own; and faster by less than the 2 %
     * margin. The MPI's own both times. */
    double choice[2] = {0.90e-6, 1.05e-6}, own[2] = {1.0e-6, 1.0e-6};
    CHECK(rw_verdict_keep(choice, 2, own, 2, 0.02) == 0);
    double close[2] = {0.99e-6, 0.985e-6};
    CHECK(rw_verdict_keep(close, 2, own, 2, 0.02) == 0);
    double clear[2] = {0.97e-6, 0.975e-6};
    CHECK(rw_verdict_keep(clear, 2, own, 2, 0.02) == 1);
    /* equal, not measured, or not numbers: the MPI's own */
    CHECK(rw_verdict_keep(own, 2, own, 2, 0.02) == 0);
    double zero[2] = {0, 0}, nan2[2] = {NAN, 1e-6}, inf2[2] = {1e-6, INFINITY};
    CHECK(rw_verdict_keep(zero, 2, own, 2, 0.02) == 0);
    CHECK(rw_verdict_keep(choice, 2, zero, 2, 0.02) == 0);
    CHECK(rw_verdict_keep(nan2, 2, own, 2, 0.02) == 0);
    CHECK(rw_verdict_keep(clear, 2, inf2, 2, 0.02) == 0);
    CHECK(rw_verdict_keep(clear, 0, own, 2, 0.02) == 0);

    /* Block lengths: as many calls as last the minimum at the measured
     * pace, within the bounds; the lower bound where the pace is unknown. */
    CHECK(rw_verdict_block_calls(0.4e-6, 200e-6, 4, 256) == 256);
    CHECK(rw_verdict_block_calls(5e-6, 200e-6, 4, 256) == 40);
    CHECK(rw_verdict_block_calls(3e-6, 200e-6, 4, 256) == 67);
    CHECK(rw_verdict_block_calls(1e-3, 200e-6, 4, 256) == 4);
    CHECK(rw_verdict_block_calls(0, 200e-6, 4, 256) == 4);
    CHECK(rw_verdict_block_calls(NAN, 200e-6, 4, 256) == 4);
    CHECK(rw_verdict_block_calls(INFINITY, 200e-6, 4, 256) == 4);
    CHECK(rw_verdict_block_calls(-1, 200e-6, 4, 256) == 4);
    CHECK_DONE();
}
