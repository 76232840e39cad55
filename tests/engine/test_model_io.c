#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "rankwise.h"

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static rw_model *sample_model(void)
{
    const char *names[3] = {"alpha-1", "beta-2", "gamma-3"};
    int32_t ranks[3] = {4, 4, 2};
    int64_t sizes[3] = {8, 1024, 1048576};
    rw_model *m;
    if (rw_model_create(3, names, ranks, 3, sizes, &m))
        return NULL;
    snprintf(m->source, sizeof m->source, "unit test");
    m->created = 1790000000.5;
    m->settings.mode = RW_MODE_ISOLATED;
    m->settings.repetitions = 7;
    for (int p = 0; p < 9; p++) {
        if (p / 3 == p % 3)
            continue;
        m->pair_state[p] = RW_PAIR_MEASURED;
        m->measured_at[p] = 1790000001.25 + p;
        for (int s = 0; s < 3; s++) {
            double t = 2e-6 * (1 + p) + sizes[s] / 1e10;
            m->pair_stats[p * 3 + s] = (rw_stat){t * 0.9, t, t * 1.2, 0.3, 21};
        }
        rw_model_fit_pair(m, p);
    }
    m->pair_state[2 * 3 + 1] = RW_PAIR_MISSING; /* gamma-3 -> beta-2 */
    m->alpha[7] = m->beta[7] = NAN;
    for (int s = 0; s < 3; s++)
        m->pair_stats[7 * 3 + s] = (rw_stat){NAN, NAN, NAN, NAN, 0};
    m->intra_state[0] = RW_PAIR_MEASURED;
    for (int s = 0; s < 3; s++)
        m->intra_stats[s] = (rw_stat){1e-7, 2e-7 + sizes[s] / 5e10, 3e-7 + sizes[s] / 5e10, 0.1, 15};
    rw_model_fit_intra(m, 0);
    return m;
}

static int same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

static void check_round_trip(void)
{
    rw_model *m = sample_model(), *r = NULL;
    CHECK(m != NULL);
    CHECK(rw_model_write(m, "rt.model") == RW_OK);
    CHECK(rw_model_read("rt.model", &r) == RW_OK);
    if (!r)
        return;
    CHECK(r->n_nodes == 3 && r->n_sizes == 3);
    CHECK(strcmp(r->node_names[2], "gamma-3") == 0 && r->ranks_per_node[2] == 2);
    CHECK(strcmp(r->source, "unit test") == 0);
    CHECK(r->settings.mode == RW_MODE_ISOLATED && r->settings.repetitions == 7);
    CHECK(same_double(r->created, m->created));
    for (int p = 0; p < 9; p++) {
        CHECK(r->pair_state[p] == m->pair_state[p]);
        CHECK(same_double(r->alpha[p], m->alpha[p]) && same_double(r->beta[p], m->beta[p]));
        for (int s = 0; s < 3; s++) {
            rw_stat a = m->pair_stats[p * 3 + s], b = r->pair_stats[p * 3 + s];
            CHECK(same_double(a.min, b.min) && same_double(a.median, b.median) &&
                  same_double(a.max, b.max) && a.count == b.count);
        }
    }
    CHECK(r->intra_state[0] == RW_PAIR_MEASURED && r->intra_state[1] == RW_PAIR_UNPROBED);
    CHECK(same_double(r->intra_alpha[0], m->intra_alpha[0]));
    CHECK(rw_model_time(r, 0, 1, 1000) > 0);
    CHECK(rw_model_time(r, 2, 1, 1000) < 0); /* missing */
    CHECK(rw_model_time(r, 1, 1, 1000) < 0); /* no intra figures */

    /* Merge: a re-probe of one pair replaces just that pair. */
    const char *names[2] = {"beta-2", "gamma-3"};
    int64_t sizes[3] = {8, 1024, 1048576};
    rw_model *u;
    CHECK(rw_model_create(2, names, NULL, 3, sizes, &u) == RW_OK);
    u->pair_state[1 * 2 + 0] = RW_PAIR_MEASURED; /* gamma-3 -> beta-2 */
    for (int s = 0; s < 3; s++)
        u->pair_stats[2 * 3 + s] = (rw_stat){1e-5, 1e-5 + sizes[s] / 1e9, 2e-5 + sizes[s] / 1e9, 0, 5};
    rw_model_fit_pair(u, 2);
    CHECK(rw_model_merge(r, u) == RW_OK);
    CHECK(r->pair_state[7] == RW_PAIR_MEASURED);
    CHECK_CLOSE(r->beta[7], 1e-9, 1e-6);
    CHECK(same_double(r->alpha[1], m->alpha[1])); /* untouched */
    u->sizes[2] = 7;
    CHECK(rw_model_merge(r, u) == RW_ERR_ARG);
    rw_model_free(u);
    rw_model_free(m);
    rw_model_free(r);
}

/* Each malformed file is refused with "path:line: ..." */
static void check_error(const char *text, const char *expect_prefix)
{
    write_text("bad.model", text);
    rw_model *m = (rw_model *)1;
    rw_status st = rw_model_read("bad.model", &m);
    CHECK(st == RW_ERR_PARSE);
    CHECK(m == NULL);
    if (strncmp(rw_last_error(), expect_prefix, strlen(expect_prefix)) != 0) {
        fprintf(stderr, "unexpected message: %s (wanted %s...)\n", rw_last_error(), expect_prefix);
        check_failures++;
    }
}

int main(void)
{
    check_round_trip();
    const char *head = "rankwise-model 1\nsizes 8 64\nnodes 2\nnode 0 a 1\nnode 1 b 1\n";
    char buf[512];
    check_error("", "bad.model:0: empty file");
    check_error("hello\n", "bad.model:1: not a rankwise model");
    check_error("rankwise-model 9\n", "bad.model:1: model format version 9");
    check_error("rankwise-model 1\nsizes 8 8\n", "bad.model:2: 'sizes' must be increasing");
    check_error("rankwise-model 1\nsizes 8\nnodes 2\nnode 0 a 1\npair 0 1 measured 1 1 1\n",
                "bad.model:5: 'nodes 2' but 1 'node' lines");
    snprintf(buf, sizeof buf, "%spair 0 1 measured 1e-6 x 0\n", head);
    check_error(buf, "bad.model:6: 'pair': field 5 ('x') is not a number");
    snprintf(buf, sizeof buf, "%spair 0 5 measured 1e-6 1e-9 0\n", head);
    check_error(buf, "bad.model:6: 'pair': field 2 ('5') must be an integer");
    snprintf(buf, sizeof buf, "%spair 0 1 measured 1e-6 1e-9 0\nrtt 0 1 16 1 1 1 0 3\n", head);
    check_error(buf, "bad.model:7: size 16 is not in 'sizes'");
    snprintf(buf, sizeof buf, "%spair 0 1 maybe 1e-6 1e-9 0\n", head);
    check_error(buf, "bad.model:6: unknown state 'maybe'");
    snprintf(buf, sizeof buf, "%sfrobnicate 3\n", head);
    check_error(buf, "bad.model:6: unknown keyword 'frobnicate'");
    snprintf(buf, sizeof buf, "%spair 0 1 measured 1e-6\n", head);
    check_error(buf, "bad.model:6: 'pair' takes 6 fields, found 4");

    rw_model *m;
    CHECK(rw_model_read("does-not-exist.model", &m) == RW_ERR_IO);
    CHECK(strstr(rw_last_error(), "does-not-exist.model: cannot open") != NULL);

    /* A failed write leaves nothing behind. */
    rw_model *s = sample_model();
    CHECK(rw_model_write(s, "no-such-dir/x.model") == RW_ERR_IO);
    CHECK(access("no-such-dir/x.model", F_OK) != 0);
    rw_model_free(s);
    CHECK_DONE();
}
