/* The protocol knee: found where the round-trip curve breaks, fitted on
 * each side, never invented on a straight line. */
#include <math.h>

#include "check.h"
#include "rankwise.h"

static const int64_t sizes[] = {8,     32,    128,    512,    2048,    8192,   16384,
                                32768, 65536, 131072, 524288, 2097152, 4194304};
#define NS ((int)(sizeof sizes / sizeof *sizes))
#define NODES 4

/* Eager below 64 KiB (alpha 1 us, half bandwidth), rendezvous from it on
 * (a handshake: one-way latency 3 us, full bandwidth 12.5 GB/s); the empty
 * acknowledgement is eager. */
static const double a_small = 1e-6, b_small = 2.0 / 12.5e9, a_large = 3e-6, b_large = 1.0 / 12.5e9;

static double rtt(int64_t size, int with_knee, double noise)
{
    double t = with_knee && size >= 65536 ? a_large + a_small + b_large * (double)size
                                          : 2 * a_small + b_small * (double)size;
    return t * (1 + noise);
}

/* Every ordered pair measured, with +-noise alternating over sizes and pairs. */
static rw_model *model(int with_knee, double noise)
{
    rw_model *m;
    CHECK(rw_model_create(NODES, NULL, NULL, NS, sizes, &m) == RW_OK);
    for (int p = 0; p < NODES * NODES; p++) {
        if (p / NODES == p % NODES)
            continue;
        m->pair_state[p] = RW_PAIR_MEASURED;
        for (int s = 0; s < NS; s++) {
            double t = rtt(sizes[s], with_knee, (s + p) % 2 ? noise : -noise);
            rw_stat st = {t, t, t, 0, 5};
            m->pair_stats[(size_t)p * NS + s] = st;
        }
    }
    return m;
}

int main(void)
{
    /* A clean break: the knee is the first rendezvous size, each side's fit exact. */
    rw_model *m = model(1, 0);
    CHECK(rw_find_knee(m) == 65536);
    CHECK(rw_model_fit_knee(m) == RW_OK);
    CHECK(m->knee == 65536);
    CHECK_CLOSE(m->alpha[1], a_small, 1e-9);
    CHECK_CLOSE(m->beta[1], b_small, 1e-9);
    CHECK_CLOSE(m->alpha_large[1], a_large, 1e-9);
    CHECK_CLOSE(m->beta_large[1], b_large, 1e-9);
    CHECK(isnan(m->alpha_large[0])); /* the diagonal is no pair */
    CHECK(rw_model_check(m) == RW_OK);
    /* One-way time: the eager line below the knee, the large fit from it on. */
    CHECK_CLOSE(rw_model_time(m, 0, 1, 1024), a_small + b_small * 1024, 1e-9);
    CHECK_CLOSE(rw_model_time(m, 0, 1, 1 << 20), a_large + b_large * (1 << 20), 1e-9);
    rw_model_free(m);

    /* The same with +-3 % noise: same knee, both sides within 10 %. */
    m = model(1, 0.03);
    CHECK(rw_model_fit_knee(m) == RW_OK);
    CHECK(m->knee == 65536);
    CHECK_CLOSE(m->alpha[6], a_small, 0.1);
    CHECK_CLOSE(m->beta_large[6], b_large, 0.1);
    rw_model_free(m);

    /* A straight line, exact or with +-3 % noise: no knee, no large fit. */
    for (int k = 0; k < 2; k++) {
        m = model(0, k ? 0.03 : 0);
        m->knee = 4096; /* a stale knee is dropped */
        CHECK(rw_model_fit_knee(m) == RW_OK);
        CHECK(m->knee == 0);
        CHECK(isnan(m->alpha_large[1]) && isnan(m->beta_large[1]));
        CHECK_CLOSE(m->alpha[1], a_small, 0.05);
        CHECK_CLOSE(m->beta[1], b_small, 0.05);
        rw_model_free(m);
    }

    /* Only one pair breaks (one odd pair is not the protocol): no knee. */
    m = model(0, 0);
    for (int s = 0; s < NS; s++) {
        double t = rtt(sizes[s], 1, 0);
        rw_stat st = {t, t, t, 0, 5};
        m->pair_stats[1 * NS + s] = st;
    }
    CHECK(rw_find_knee(m) == 0);
    rw_model_free(m);

    /* Nothing measured: no knee. */
    rw_model *empty;
    CHECK(rw_model_create(NODES, NULL, NULL, NS, sizes, &empty) == RW_OK);
    CHECK(rw_find_knee(empty) == 0);
    rw_model_free(empty);
    CHECK_DONE();
}
