#include <stdlib.h>

#include "check.h"
#include "rankwise.h"

int main(void)
{
    double odd[] = {5, 1, 3};
    CHECK(rw_median(odd, 3) == 3);
    double even[] = {4, 1, 3, 2};
    CHECK(rw_median(even, 4) == 2.5);

    /* Three rounds of four samples; the second round is 20x slower (a
     * neighbour's burst) and must be dropped. */
    double s[] = {1.0, 1.1, 1.2, 1.3, 20, 21, 22, 23, 1.05, 1.15, 1.25, 1.35};
    rw_stat st;
    int dropped = rw_stat_from_rounds(s, 3, 4, &st);
    CHECK(dropped == 1);
    CHECK(st.count == 8);
    CHECK(st.min == 1.0);
    CHECK(st.max == 1.35);
    CHECK_CLOSE(st.median, (1.15 + 1.2) / 2, 1e-12);
    double mean = (1.0 + 1.1 + 1.2 + 1.3 + 1.05 + 1.15 + 1.25 + 1.35) / 8;
    CHECK_CLOSE(st.jitter, (1.35 - 1.0) / mean, 1e-12);

    /* Rounds within an order of magnitude are all kept. */
    double t[] = {1, 1, 5, 5, 2, 2};
    CHECK(rw_stat_from_rounds(t, 3, 2, &st) == 0);
    CHECK(st.count == 6 && st.min == 1 && st.max == 5 && st.median == 2);
    CHECK_DONE();
}
