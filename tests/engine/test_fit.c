#include "check.h"
#include "rankwise.h"

int main(void)
{
    /* Exact Hockney data: rtt = 2 alpha + beta m. */
    double alpha = 1.5e-6, beta = 1.0 / 12.5e9;
    double size[11], rtt[11];
    for (int k = 0; k < 11; k++) {
        size[k] = 8.0 * (1 << (2 * k));
        rtt[k] = 2 * alpha + beta * size[k];
    }
    double a, b;
    CHECK(rw_fit_hockney(size, rtt, 11, &a, &b) == RW_OK);
    CHECK_CLOSE(a, alpha, 1e-9);
    CHECK_CLOSE(b, beta, 1e-9);

    /* +-3 % alternating noise: both parameters stay within 5 %, and the
     * small-size latency is not swamped by the large sizes. */
    for (int k = 0; k < 11; k++)
        rtt[k] *= k % 2 ? 1.03 : 0.97;
    CHECK(rw_fit_hockney(size, rtt, 11, &a, &b) == RW_OK);
    CHECK_CLOSE(a, alpha, 0.05);
    CHECK_CLOSE(b, beta, 0.05);

    /* Latency only (flat times): beta clamps to zero, never negative. */
    double flat[3] = {2e-6, 2e-6, 1.9e-6}, sz[3] = {8, 64, 512};
    CHECK(rw_fit_hockney(sz, flat, 3, &a, &b) == RW_OK);
    CHECK(b == 0 && a > 0.9e-6 && a < 1.05e-6);

    /* Invalid samples are an error, not a crash. */
    double bad[2] = {1e-6, -1};
    CHECK(rw_fit_hockney(sz, bad, 2, &a, &b) == RW_ERR_ARG);
    CHECK(rw_fit_hockney(sz, bad, 0, &a, &b) == RW_ERR_ARG);
    CHECK_DONE();
}
