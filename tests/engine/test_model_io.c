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

/* Numbers outside the documented bounds, integers beyond their type,
 * names and texts that are not clean UTF-8: refused with path:line. */
static void check_bounds(const char *head)
{
    static const struct {
        const char *line, *expect;
    } bad[] = {
        {"pair 0 1 measured -1e-6 1e-9 0", "bad.model:6: 'pair': field 4: alpha -1e-06 s is outside [0, 1000]"},
        {"pair 0 1 measured nan 1e-9 0", "bad.model:6: 'pair': field 4: alpha is nan"},
        {"pair 0 1 measured 1e300 1e-9 0", "bad.model:6: 'pair': field 4: alpha 1e+300 s is outside"},
        {"pair 0 1 measured inf 1e-9 0", "bad.model:6: 'pair': field 4 ('inf') is not a number"},
        {"pair 0 1 measured 1e-6 -1e-9 0", "bad.model:6: 'pair': field 5: beta -1e-09 s/B is outside [0, 1]"},
        {"pair 0 1 measured 1e-6 2 0", "bad.model:6: 'pair': field 5: beta 2 s/B is outside"},
        {"pair 0 1 missing nan nan 1e300", "bad.model:6: 'pair': field 6: timestamp 1e+300 (unix time) is outside"},
        {"pair 0 1 missing -5 nan 0", "bad.model:6: 'pair': field 4: alpha -5 s is outside"},
        {"pair 0 1 measured 1e-6 1e-9 9.2e18", "bad.model:6: 'pair': field 6: timestamp 9.2e+18"},
        {"intra 0 measured nan nan", "bad.model:6: 'intra': field 3: alpha is nan"},
        {"pair 0 1 measured 1e-6 1e-9 0\nrtt 0 1 8 -1 1e-6 1e-6 0 3", "bad.model:7: 'rtt': field 4: round-trip time -1 s"},
        {"pair 0 1 measured 1e-6 1e-9 0\nrtt 0 1 8 1e-6 nan 1e-6 0 3", "bad.model:7: 'rtt': field 5: round-trip time is nan"},
        {"pair 0 1 measured 1e-6 1e-9 0\nrtt 0 1 8 1e-6 1e-6 1e-6 1e300 3", "bad.model:7: 'rtt': field 7: jitter 1e+300"},
        {"pair 0 1 measured 1e-6 1e-9 0\nrtt 0 1 8 1e-6 1e-6 1e-6 0 0", "bad.model:7: 'rtt': field 8 ('0') must be an integer in [1, 2147483647]"},
        {"pair 0 1 measured 1e-6 1e-9 0\nrtt 0 1 8 1e-6 1e-6 1e-6 0 3e9", "bad.model:7: 'rtt': field 8 ('3e9') must be an integer"},
    };
    char buf[1024];
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        snprintf(buf, sizeof buf, "%s%s\n", head, bad[k].line);
        check_error(buf, bad[k].expect);
    }
    static const struct {
        const char *text, *expect;
    } header[] = {
        {"rankwise-model 1\ncreated 1e300\n", "bad.model:2: 'created': field 1: timestamp 1e+300"},
        {"rankwise-model 1\ncreated 9.2e18\n", "bad.model:2: 'created': field 1: timestamp 9.2e+18"},
        {"rankwise-model 1\ncreated -1\n", "bad.model:2: 'created': field 1: timestamp -1"},
        {"rankwise-model 1\nduration 1e300\n", "bad.model:2: 'duration': field 1: duration 1e+300 s"},
        {"rankwise-model 1\nsettings repetitions=3e9\n", "bad.model:2: settings: repetitions must be an integer in [1, 2147483647], found '3e9'"},
        {"rankwise-model 1\nsettings repetitions=3000000000\n", "bad.model:2: settings: repetitions must be an integer"},
        {"rankwise-model 1\nsettings rounds=0\n", "bad.model:2: settings: rounds must be an integer in [1,"},
        {"rankwise-model 1\nsettings warmup=-1\n", "bad.model:2: settings: warmup must be an integer in [0,"},
        {"rankwise-model 1\nsettings warmup=1.5\n", "bad.model:2: settings: warmup must be an integer"},
        {"rankwise-model 1\nsettings timeout=1e300\n", "bad.model:2: settings: timeout must be a number of seconds in [0, 1e+09]"},
        {"rankwise-model 1\nsettings timeout=nan\n", "bad.model:2: settings: timeout must be a number"},
        {"rankwise-model 1\nsizes 8 2000000000000\n", "bad.model:2: 'sizes': field 2 ('2000000000000') must be an integer in [0, 1099511627776]"},
        {"rankwise-model 1\nsizes 8\nnodes 1\nnode 0 a\xff 1\n", "bad.model:4: node 0: the name is not valid UTF-8"},
        {"rankwise-model 1\nsizes 8\nnodes 1\nnode 0 \xed\xa0\x80 1\n", "bad.model:4: node 0: the name is not valid UTF-8"},
        {"rankwise-model 1\nsizes 8\nnodes 1\nnode 0 a\x01" "b 1\n", "bad.model:4: node 0: the name holds a control character (0x01)"},
        {"rankwise-model 1\nsource a\rb\n", "bad.model:2: 'source' text holds a line break (0x0d)"},
        {"rankwise-model 1\nsource caf\xe9\n", "bad.model:2: 'source' text is not valid UTF-8"},
        {"rankwise-model 1\nsource a\0b\n", "bad.model:2: a NUL byte"},
    };
    for (size_t k = 0; k < sizeof header / sizeof *header; k++) {
        /* Written with fwrite: some hold a NUL byte. */
        const char *t = header[k].text;
        size_t len = strlen(t);
        if (strstr(header[k].expect, "NUL"))
            len = strlen(t) + 1 + strlen(t + strlen(t) + 1);
        FILE *f = fopen("bad.model", "wb");
        fwrite(t, 1, len, f);
        fclose(f);
        rw_model *m = (rw_model *)1;
        CHECK(rw_model_read("bad.model", &m) == RW_ERR_PARSE && m == NULL);
        if (strncmp(rw_last_error(), header[k].expect, strlen(header[k].expect)) != 0) {
            fprintf(stderr, "unexpected message: %s (wanted %s...)\n", rw_last_error(), header[k].expect);
            check_failures++;
        }
    }
}

/* The writer refuses what the reader would refuse, and writes nothing. */
static void expect_write_refused(rw_model *m, const char *expect)
{
    unlink("refused.model");
    CHECK(rw_model_write(m, "refused.model") == RW_ERR_ARG);
    CHECK(access("refused.model", F_OK) != 0);
    if (!strstr(rw_last_error(), expect) || strncmp(rw_last_error(), "refused.model: cannot write: ", 29)) {
        fprintf(stderr, "unexpected message: %s (wanted ...%s)\n", rw_last_error(), expect);
        check_failures++;
    }
    rw_model_free(m);
}

static void check_write_refusals(void)
{
    rw_model *m;
    m = sample_model(), m->alpha[1] = -1;
    expect_write_refused(m, "pair 0 1 (alpha-1 -> beta-2): alpha -1 s is outside [0, 1000]");
    m = sample_model(), m->alpha[1] = NAN;
    expect_write_refused(m, "pair 0 1 (alpha-1 -> beta-2): alpha is nan");
    m = sample_model(), m->beta[1] = INFINITY;
    expect_write_refused(m, "beta inf s/B is outside");
    m = sample_model(), m->measured_at[1] = 9.2e18;
    expect_write_refused(m, "timestamp 9.2e+18");
    m = sample_model(), m->created = 1e300;
    expect_write_refused(m, "created: timestamp 1e+300");
    m = sample_model(), m->settings.repetitions = 0;
    expect_write_refused(m, "settings: repetitions and rounds must be >= 1");
    m = sample_model(), m->settings.timeout = NAN;
    expect_write_refused(m, "settings: timeout is nan");
    m = sample_model(), m->pair_stats[1 * 3 + 0].median = 1e300;
    expect_write_refused(m, "rtt 0 1 (alpha-1 -> beta-2), size 8: round-trip time 1e+300");
    m = sample_model(), m->intra_alpha[0] = -1;
    expect_write_refused(m, "intra 0 (alpha-1): alpha -1 s");
    m = sample_model(), m->ranks_per_node[1] = 0;
    expect_write_refused(m, "node 1 (beta-2): 0 ranks is outside [1, 1048576]");
    m = sample_model(), free(m->node_names[1]), m->node_names[1] = strdup("a b");
    expect_write_refused(m, "node 1: the name holds a blank or '#'");
    m = sample_model(), free(m->node_names[1]), m->node_names[1] = strdup("a\xff");
    expect_write_refused(m, "is not valid UTF-8");
    m = sample_model(), free(m->node_names[1]), m->node_names[1] = strdup("alpha-1");
    expect_write_refused(m, "nodes 0 and 1 are both named 'alpha-1'");
    m = sample_model(), snprintf(m->source, sizeof m->source, "a\rb");
    expect_write_refused(m, "cannot write: source holds a line break (0x0d)");
    m = sample_model(), m->pair_state[4] = RW_PAIR_MEASURED;
    expect_write_refused(m, "pair 1 1: a node with itself");
}

/* Texts and numbers at the edges of the rules read back as written. */
static void check_text_round_trip(void)
{
    rw_model *m = sample_model(), *r = NULL;
    snprintf(m->source, sizeof m->source, "mpi:mpirun  -np 4 # run \xc3\xa9t\xc3\xa9");
    free(m->node_names[0]);
    m->node_names[0] = strdup("n\xc5\x93ud-1");
    m->alpha[1] = 1e-320; /* subnormal: strtod says ERANGE, still a number */
    m->settings.repetitions = INT32_MAX;
    m->settings.timeout = 0.1234567891;
    CHECK(rw_model_write(m, "edge.model") == RW_OK);
    CHECK(rw_model_read("edge.model", &r) == RW_OK);
    if (r) {
        CHECK(strcmp(r->source, m->source) == 0);
        CHECK(strcmp(r->node_names[0], m->node_names[0]) == 0);
        CHECK(r->alpha[1] > 0 && r->alpha[1] < 1e-319);
        CHECK(r->settings.repetitions == INT32_MAX);
        CHECK(r->settings.timeout == 0.1234567891);
    }
    rw_model_free(m);
    rw_model_free(r);
}

/* Overhead, NIC caps, knee, large-message fit, groups and links read back. */
static void check_structure_round_trip(void)
{
    rw_model *m = sample_model(), *r = NULL;
    int n = m->n_nodes;
    m->overhead[0] = 1.5e-6;
    m->inject[1] = 1.25e10; /* eject of node 1 stays unknown */
    m->knee = 65536;
    int p = -1;
    for (int q = 0; q < n * n && p < 0; q++)
        if (m->pair_state[q] == RW_PAIR_MEASURED)
            p = q;
    m->alpha_large[p] = 4e-6;
    m->beta_large[p] = 7e-11;
    for (int i = 0; i < n; i++)
        m->group_of[i] = i % 2;
    int32_t out[1] = {0};
    CHECK(rw_model_add_link(m, "up-0", 5e10, 1, out, 0, NULL) == RW_OK);
    CHECK(rw_model_add_link(m, "bad name", 5e10, 0, NULL, 0, NULL) == RW_ERR_ARG);
    CHECK(rw_model_add_link(m, "zero", 0, 0, NULL, 0, NULL) == RW_ERR_ARG);
    CHECK(rw_model_link_crosses(m, 0, 0, 1) == 1 && rw_model_link_crosses(m, 0, 1, 0) == 0);
    CHECK(rw_model_write(m, "structure.model") == RW_OK);
    CHECK(rw_model_read("structure.model", &r) == RW_OK);
    if (r) {
        CHECK(r->overhead[0] == 1.5e-6 && isnan(r->overhead[1]));
        CHECK(r->inject[1] == 1.25e10 && isnan(r->eject[1]));
        CHECK(r->knee == 65536);
        CHECK(r->alpha_large[p] == 4e-6 && r->beta_large[p] == 7e-11);
        CHECK(r->group_of[1] == 1 && r->n_links == 1);
        CHECK(r->n_links == 1 && strcmp(r->links[0].name, "up-0") == 0 && r->links[0].n_from == 1 &&
              r->links[0].from[0] == 0 && r->links[0].n_to == 0 && r->links[0].capacity == 5e10);
    }
    rw_model_free(r);
    rw_model_free(m);
}

/* Capacities read at separate times (format 5): written only when the
 * model has them (older files stay version 2-4), read back exactly,
 * replaced by name, bounded. */
static void check_spread_round_trip(void)
{
    rw_model *m = sample_model(), *r = NULL;
    CHECK(rw_model_write(m, "spread.model") == RW_OK);
    CHECK(rw_model_read("spread.model", &r) == RW_OK);
    if (r)
        CHECK(r->n_spreads == 0);
    rw_model_free(r);
    r = NULL;
    FILE *f = fopen("spread.model", "r");
    char first[64] = "";
    CHECK(f && fgets(first, sizeof first, f));
    CHECK(strncmp(first, "rankwise-model 5", 16) != 0);
    if (f)
        fclose(f);
    CHECK(rw_model_add_spread(m, "up-0", 1e10, 2e10, 4e10, 0.01, 4) == RW_OK);
    CHECK(rw_model_add_spread(m, "down-0", 3e10, 3e10, 3e10, 0, 4) == RW_OK);
    CHECK(rw_model_add_spread(m, "up-0", 1e10, 3e10, 9e10, 0.02, 4) == RW_OK); /* replaces */
    CHECK(rw_model_add_spread(m, "bad name", 1e10, 1e10, 1e10, 0, 1) == RW_ERR_ARG);
    CHECK(rw_model_add_spread(m, "x", 2e10, 1e10, 3e10, 0, 2) == RW_ERR_ARG); /* low > median */
    CHECK(rw_model_add_spread(m, "x", 1e10, 1e10, 1e10, -1, 2) == RW_ERR_ARG);
    CHECK(rw_model_add_spread(m, "x", 1e10, 1e10, 1e10, 0, 0) == RW_ERR_ARG);
    CHECK(rw_model_add_spread(m, "x", 0, 1e10, 1e10, 0, 2) == RW_ERR_ARG);
    CHECK(m->n_spreads == 2);
    CHECK(rw_model_write(m, "spread.model") == RW_OK);
    CHECK(rw_model_read("spread.model", &r) == RW_OK);
    if (r) {
        CHECK(r->n_spreads == 2 && strcmp(r->spreads[0].name, "up-0") == 0);
        CHECK(r->spreads[0].low == 1e10 && r->spreads[0].median == 3e10 && r->spreads[0].high == 9e10 &&
              r->spreads[0].noise == 0.02 && r->spreads[0].times == 4);
        CHECK(strcmp(r->spreads[1].name, "down-0") == 0 && r->spreads[1].times == 4);
    }
    f = fopen("spread.model", "r");
    CHECK(f && fgets(first, sizeof first, f));
    CHECK(strncmp(first, "rankwise-model 5", 16) == 0);
    if (f)
        fclose(f);
    unlink("spread.model");
    rw_model_free(r);
    rw_model_free(m);
}

/* Duplex caps (format 6): written only when the model has one (older
 * files keep their version), read back exactly, refused in a file of an
 * older version and out of bounds. */
static void check_duplex_round_trip(void)
{
    rw_model *m = sample_model(), *r = NULL;
    char first[64] = "";
    CHECK(rw_model_write(m, "duplex.model") == RW_OK);
    FILE *f = fopen("duplex.model", "r");
    CHECK(f && fgets(first, sizeof first, f));
    CHECK(strncmp(first, "rankwise-model 6", 16) != 0);
    if (f)
        fclose(f);
    m->duplex[1] = 1.3e10;
    CHECK(rw_model_write(m, "duplex.model") == RW_OK);
    CHECK(rw_model_read("duplex.model", &r) == RW_OK);
    if (r)
        CHECK(isnan(r->duplex[0]) && r->duplex[1] == 1.3e10);
    rw_model_free(r);
    r = NULL;
    f = fopen("duplex.model", "r");
    CHECK(f && fgets(first, sizeof first, f));
    CHECK(strncmp(first, "rankwise-model 6", 16) == 0);
    if (f)
        fclose(f);
    m->duplex[1] = 0;
    CHECK(rw_model_write(m, "duplex.model") == RW_ERR_ARG);
    unlink("duplex.model");
    rw_model_free(m);
}

/* A direct network's links (format 7): written only when the model has
 * them, kept in (from, to) order, replaced by (from, to), read back
 * exactly; refused in an older file, with a node itself, twice, out of
 * range or carrying nothing. */
static void check_hop_round_trip(void)
{
    rw_model *m = sample_model(), *r = NULL;
    char first[64] = "";
    CHECK(rw_model_add_hop(m, 2, 0, 3e9) == RW_OK);
    CHECK(rw_model_add_hop(m, 0, 1, 1e9) == RW_OK);
    CHECK(rw_model_add_hop(m, 0, 1, 2e9) == RW_OK); /* replaces */
    CHECK(rw_model_add_hop(m, 1, 1, 1e9) == RW_ERR_ARG);
    CHECK(rw_model_add_hop(m, 0, 3, 1e9) == RW_ERR_ARG);
    CHECK(rw_model_add_hop(m, 0, 2, 0) == RW_ERR_ARG);
    CHECK(m->n_hops == 2 && m->hops[0].from == 0 && m->hops[0].capacity == 2e9 && m->hops[1].from == 2);
    CHECK(rw_model_write(m, "hop.model") == RW_OK);
    CHECK(rw_model_read("hop.model", &r) == RW_OK);
    if (r)
        CHECK(r->n_hops == 2 && r->hops[0].to == 1 && r->hops[0].capacity == 2e9 && r->hops[1].to == 0 &&
              r->hops[1].capacity == 3e9);
    rw_model_free(r);
    FILE *f = fopen("hop.model", "r");
    CHECK(f && fgets(first, sizeof first, f));
    CHECK(strncmp(first, "rankwise-model 7", 16) == 0);
    if (f)
        fclose(f);
    unlink("hop.model");
    rw_model_free(m);
    const char *head6 = "rankwise-model 6\nsizes 8 64\nnodes 2\nnode 0 a 1\nnode 1 b 1\n";
    const char *head7 = "rankwise-model 7\nsizes 8 64\nnodes 2\nnode 0 a 1\nnode 1 b 1\n";
    char buf[512];
    snprintf(buf, sizeof buf, "%shop 0 1 1e10\n", head6);
    check_error(buf, "bad.model:6: 'hop' needs model format version 7 (the file says 6)");
    snprintf(buf, sizeof buf, "%shop 1 1 1e10\n", head7);
    check_error(buf, "bad.model:6: hop 1 1: a node with itself");
    snprintf(buf, sizeof buf, "%shop 0 1 1e10\nhop 0 1 2e10\n", head7);
    check_error(buf, "bad.model:7: hop 0 1: given twice");
    snprintf(buf, sizeof buf, "%shop 0 1 0\n", head7);
    check_error(buf, "bad.model:6: hop 0 1: bandwidth 0 B/s carries nothing");
    snprintf(buf, sizeof buf, "%shop 0 2 1e10\n", head7);
    check_error(buf, "bad.model:6: 'hop': field 2 ('2') must be an integer");
}

int main(void)
{
    check_round_trip();
    check_duplex_round_trip();
    check_hop_round_trip();
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

    /* Structure lines (format 2): refused in a version-1 file, checked in a
     * version-2 one. */
    snprintf(buf, sizeof buf, "%snic 0 1e10 1e10\n", head);
    check_error(buf, "bad.model:6: 'nic' needs model format version 2 (the file says 1)");
    check_error("rankwise-model 1\nknee 65536\n", "bad.model:2: 'knee' needs model format version 2");
    const char *head2 = "rankwise-model 2\nsizes 8 64\nnodes 2\nnode 0 a 1\nnode 1 b 1\n";
    snprintf(buf, sizeof buf, "%snic 0 0 1e10\n", head2);
    check_error(buf, "bad.model:6: nic 0: bandwidth 0 B/s carries nothing");
    /* recv-overhead (format 4): refused in a version-3 file, bounded in a version-4 one */
    snprintf(buf, sizeof buf, "%srecv-overhead 0 1e-6\n", head2);
    check_error(buf, "bad.model:6: 'recv-overhead' needs model format version 4 (the file says 2)");
    snprintf(buf, sizeof buf, "rankwise-model 4\nsizes 8 64\nnodes 2\nnode 0 a 1\nnode 1 b 1\nrecv-overhead 1 -1e-6\n");
    check_error(buf, "bad.model:6: ");
    snprintf(buf, sizeof buf, "%soverhead 1 -1e-6\n", head2);
    check_error(buf, "bad.model:6: 'overhead': field 2: overhead -1e-06 s is outside");
    snprintf(buf, sizeof buf, "%spair-large 0 1 1e-6 1e-9\n", head2);
    check_error(buf, "bad.model:6: pair-large 0 1: after a 'pair' line of a measured pair only");
    snprintf(buf, sizeof buf, "%slink up 5e10 0, *\n", head2);
    check_error(buf, "bad.model:6: 'link': field 3 ends with ','");
    snprintf(buf, sizeof buf, "%sgroup 0 0\ngroup 1 0\nlink up 5e10 0 1\n", head2);
    check_error(buf, "bad.model: link up: destination group 1 is no node's group");
    check_structure_round_trip();
    check_spread_round_trip();
    snprintf(buf, sizeof buf, "rankwise-model 4\nsizes 8 64\nnodes 2\nnode 0 a 1\nnode 1 b 1\n"
                              "capacity-spread up-0 1e10 2e10 3e10 0 4\n");
    check_error(buf, "bad.model:6: 'capacity-spread' needs model format version 5 (the file says 4)");
    snprintf(buf, sizeof buf, "rankwise-model 5\nsizes 8 64\nnodes 2\nnode 0 a 1\nnode 1 b 1\n"
                              "capacity-spread up-0 3e10 2e10 3e10 0 4\n");
    check_error(buf, "bad.model:6: capacity-spread up-0: needs low <= median <= high");
    snprintf(buf, sizeof buf, "rankwise-model 5\nsizes 8 64\nnodes 2\nnode 0 a 1\nnode 1 b 1\n"
                              "capacity-spread up-0 1e10 2e10 3e10 0 0\n");
    check_error(buf, "bad.model:6: 'capacity-spread': field 6 ('0') must be an integer in [1,");
    snprintf(buf, sizeof buf, "rankwise-model 5\nsizes 8 64\nnodes 2\nnode 0 a 1\nnode 1 b 1\n"
                              "capacity-spread up-0 1e10 2e10 3e10 0\n");
    check_error(buf, "bad.model:6: 'capacity-spread' takes 6 fields, found 5");
    snprintf(buf, sizeof buf, "rankwise-model 5\nsizes 8 64\nnodes 2\nnode 0 a 1\nnode 1 b 1\nduplex 0 1e10\n");
    check_error(buf, "bad.model:6: 'duplex' needs model format version 6 (the file says 5)");
    snprintf(buf, sizeof buf, "rankwise-model 6\nsizes 8 64\nnodes 2\nnode 0 a 1\nnode 1 b 1\nduplex 0 0\n");
    check_error(buf, "bad.model:6: duplex 0: bandwidth 0 B/s carries nothing");
    snprintf(buf, sizeof buf, "rankwise-model 6\nsizes 8 64\nnodes 2\nnode 0 a 1\nnode 1 b 1\nduplex 2 1e10\n");
    check_error(buf, "bad.model:6: 'duplex': field 1 ('2') must be an integer in [0, 1]");

    check_bounds(head);
    check_write_refusals();
    check_text_round_trip();

    rw_model *m;
    CHECK(rw_model_read("does-not-exist.model", &m) == RW_ERR_IO);
    CHECK(strstr(rw_last_error(), "does-not-exist.model: cannot open") != NULL);
    CHECK(rw_model_read(".", &m) == RW_ERR_IO && m == NULL);
    CHECK(strcmp(rw_last_error(), ".: cannot open: it is a directory, not a file") == 0);

    /* A failed write leaves nothing behind. */
    rw_model *s = sample_model();
    CHECK(rw_model_write(s, "no-such-dir/x.model") == RW_ERR_IO);
    CHECK(access("no-such-dir/x.model", F_OK) != 0);
    rw_model_free(s);
    CHECK_DONE();
}
