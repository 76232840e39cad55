#include <stdlib.h>

#include "check.h"
#include "rankwise.h"

/* 4 racks of 8 nodes, noisy latencies (intra 10-12, inter 30-40), one node
 * whose own cable is slow (all its latencies x3): the racks come out of the
 * numbers alone and the slow node stays with its rack. */
int main(void)
{
    int n = 32, slow = 13;
    int64_t sizes[1] = {8};
    rw_model *m;
    CHECK(rw_model_create(n, NULL, NULL, 1, sizes, &m) == RW_OK);
    srand(7);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j)
                continue;
            int p = i * n + j;
            double noise = rand() / (double)RAND_MAX;
            m->alpha[p] = (i / 8 == j / 8 ? 10 + 2 * noise : 30 + 10 * noise) * 1e-6;
            if (i == slow || j == slow)
                m->alpha[p] *= 3;
            m->beta[p] = 1e-10;
            m->pair_state[p] = RW_PAIR_MEASURED;
        }
    int32_t g[32];
    CHECK(rw_model_groups(m, g) == 4);
    for (int i = 0; i < n; i++)
        CHECK(g[i] == g[(i / 8) * 8]);
    CHECK(g[0] != g[8] && g[8] != g[16] && g[16] != g[24]);

    /* Uniform numbers: a single group. */
    for (int p = 0; p < n * n; p++)
        m->alpha[p] = 5e-6;
    CHECK(rw_model_groups(m, g) == 1);
    rw_model_free(m);
    CHECK_DONE();
}
