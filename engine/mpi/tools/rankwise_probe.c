/* rankwise-probe: measure the network of the current MPI job into a model
 * file. Run with any MPI launcher (or smpirun for the simulated cluster);
 * rank 0 writes the model. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "probe_end.h"
#include "rankwise_probe.h"
#include "reference.h"
#include "stress.h"

#define MAX_SIZES 40

static const char usage[] =
    "usage: rankwise-probe --output MODEL [options]\n"
    "  -o, --output PATH        model file to write (atomically)\n"
    "      --update MODEL       merge the measured pairs into MODEL, write to --output\n"
    "      --same-nodes         with --update: the job must run on MODEL's nodes, no other\n"
    "      --sizes LIST         message sizes, e.g. 8,1K,64K,4M (default 8 B..4 MiB)\n"
    "      --repetitions N      timed ping-pongs per pair, size and round (default 5)\n"
    "      --rounds N           times the whole schedule is repeated (default 3)\n"
    "      --warmup N           untimed ping-pongs before each series (default 1)\n"
    "      --mode MODE          concurrent (all pairs of a round at once) or isolated\n"
    "      --timeout SEC        a pair slower than this is recorded missing (default 10)\n"
    "      --time-budget SEC    stop starting new rounds after SEC seconds (default: none)\n"
    "      --group-by WHAT      host (ranks of one host form a node) or rank\n"
    "      --no-intra           skip rank-to-rank measurement inside nodes\n"
    "      --pairs LIST         only these ordered pairs: SRC:DST,SRC:DST (node names)\n"
    "      --no-references      no reference pass (lone-pair bandwidths across groups)\n"
    "      --capacities         then the stress test: shared-link and NIC capacities\n"
    "      --capacities-only    only the stress test, on the pairs of --update MODEL\n"
    "      --source TEXT        where the numbers come from, kept in the model\n"
    "      --progress           print 'RW-PROGRESS done total' lines on stderr,\n"
    "                           'RW-WRITTEN PATH' once the model is on disk and\n"
    "                           'RW-UNFINALIZED' before ending without MPI_Finalize\n";

typedef struct args {
    rw_probe_options opt;
    const char *output, *update, *source;
    int64_t sizes[MAX_SIZES];
    char **pair_src, **pair_dst;
    char *pair_text;
    int progress;
    int same_nodes;
} args;

static int fail(int rank, const char *fmt, const char *what)
{
    if (rank == 0) {
        fprintf(stderr, "rankwise-probe: error: ");
        fprintf(stderr, fmt, what);
        fprintf(stderr, "\n");
    }
    return 2;
}

static int parse_number(const char *s, double lo, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || end == s || !(v >= lo))
        return -1;
    *out = v;
    return 0;
}

static int parse_int(const char *s, int lo, int *out)
{
    double v;
    if (parse_number(s, lo, &v) || v != (int)v)
        return -1;
    *out = (int)v;
    return 0;
}

/* "8,1K,64K,4M" -> bytes. */
static int parse_sizes(const char *text, int64_t *sizes, int *n)
{
    *n = 0;
    char *list = strdup(text), *save = NULL;
    if (!list)
        return -1;
    int bad = 0;
    for (char *tok = strtok_r(list, ",", &save); tok && !bad; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        errno = 0;
        long long v = strtoll(tok, &end, 10);
        long long mult = 1;
        if (*end == 'K' || *end == 'k')
            mult = 1024, end++;
        else if (*end == 'M' || *end == 'm')
            mult = 1024 * 1024, end++;
        if (*end == 'i' && end[1] == 'B')
            end += 2;
        else if (*end == 'B')
            end++;
        if (errno || *end || end == tok || v < 0 || *n == MAX_SIZES)
            bad = 1;
        else
            sizes[(*n)++] = v * mult;
    }
    free(list);
    return !bad && *n > 0 ? 0 : -1;
}

/* Node names point into a copy of the list, kept until exit. */
static int parse_pairs(const char *text, args *a)
{
    char *list = a->pair_text = strdup(text);
    if (!list)
        return -1;
    int n = 1;
    for (char *c = list; *c; c++)
        n += *c == ',';
    a->pair_src = calloc((size_t)n, sizeof *a->pair_src);
    a->pair_dst = calloc((size_t)n, sizeof *a->pair_dst);
    if (!a->pair_src || !a->pair_dst)
        return -1;
    int k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(tok, ':');
        if (!colon || colon == tok || !colon[1])
            return -1;
        *colon = '\0';
        a->pair_src[k] = tok;
        a->pair_dst[k] = colon + 1;
        k++;
    }
    a->opt.n_pairs = k;
    a->opt.pair_src = (const char *const *)a->pair_src;
    a->opt.pair_dst = (const char *const *)a->pair_dst;
    return k > 0 ? 0 : -1;
}

static int parse_args(int argc, char **argv, int rank, args *a)
{
    enum { O_UPDATE = 256, O_SIZES, O_REPS, O_ROUNDS, O_WARMUP, O_MODE, O_TIMEOUT, O_BUDGET,
           O_GROUP, O_NOINTRA, O_PAIRS, O_SOURCE, O_PROGRESS, O_CAP, O_CAPONLY, O_SAME, O_NOREF };
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'},   {"update", required_argument, 0, O_UPDATE},
        {"sizes", required_argument, 0, O_SIZES}, {"repetitions", required_argument, 0, O_REPS},
        {"rounds", required_argument, 0, O_ROUNDS}, {"warmup", required_argument, 0, O_WARMUP},
        {"mode", required_argument, 0, O_MODE},   {"timeout", required_argument, 0, O_TIMEOUT},
        {"time-budget", required_argument, 0, O_BUDGET},
        {"group-by", required_argument, 0, O_GROUP}, {"no-intra", no_argument, 0, O_NOINTRA},
        {"pairs", required_argument, 0, O_PAIRS}, {"source", required_argument, 0, O_SOURCE},
        {"progress", no_argument, 0, O_PROGRESS}, {"help", no_argument, 0, 'h'},
        {"capacities", no_argument, 0, O_CAP}, {"capacities-only", no_argument, 0, O_CAPONLY},
        {"same-nodes", no_argument, 0, O_SAME}, {"no-references", no_argument, 0, O_NOREF},
        {0, 0, 0, 0}};
    rw_probe_options_default(&a->opt);
    rw_probe_settings *s = &a->opt.settings;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': a->output = optarg; break;
        case O_UPDATE: a->update = optarg; break;
        case O_SOURCE: a->source = optarg; break;
        case O_PROGRESS: a->progress = 1; break;
        case O_SAME: a->same_nodes = 1; break;
        case O_NOINTRA: a->opt.measure_intra = 0; break;
        case O_CAP: a->opt.capacities = RW_CAPACITIES_AFTER; break;
        case O_CAPONLY: a->opt.capacities = RW_CAPACITIES_ONLY; break;
        case O_NOREF: a->opt.no_references = 1; break;
        case O_SIZES:
            if (parse_sizes(optarg, a->sizes, &a->opt.n_sizes))
                return fail(rank, "--sizes: '%s' is not a list like 8,1K,4M", optarg);
            a->opt.sizes = a->sizes;
            break;
        case O_REPS:
            if (parse_int(optarg, 1, &s->repetitions))
                return fail(rank, "--repetitions: '%s' is not an integer >= 1", optarg);
            break;
        case O_ROUNDS:
            if (parse_int(optarg, 1, &s->rounds))
                return fail(rank, "--rounds: '%s' is not an integer >= 1", optarg);
            break;
        case O_WARMUP:
            if (parse_int(optarg, 0, &s->warmup))
                return fail(rank, "--warmup: '%s' is not an integer >= 0", optarg);
            break;
        case O_TIMEOUT:
            if (parse_number(optarg, 1e-9, &s->timeout))
                return fail(rank, "--timeout: '%s' is not a positive number of seconds", optarg);
            break;
        case O_BUDGET:
            if (parse_number(optarg, 0, &s->time_budget))
                return fail(rank, "--time-budget: '%s' is not a number of seconds >= 0", optarg);
            break;
        case O_MODE:
            if (strcmp(optarg, "concurrent") == 0)
                s->mode = RW_MODE_CONCURRENT;
            else if (strcmp(optarg, "isolated") == 0)
                s->mode = RW_MODE_ISOLATED;
            else
                return fail(rank, "--mode: '%s' is not concurrent or isolated", optarg);
            break;
        case O_GROUP:
            if (strcmp(optarg, "host") == 0)
                a->opt.group_by = RW_GROUP_BY_HOST;
            else if (strcmp(optarg, "rank") == 0)
                a->opt.group_by = RW_GROUP_BY_RANK;
            else
                return fail(rank, "--group-by: '%s' is not host or rank", optarg);
            break;
        case O_PAIRS:
            if (parse_pairs(optarg, a))
                return fail(rank, "--pairs: '%s' is not a list like nodeA:nodeB,nodeC:nodeD", optarg);
            break;
        case 'h':
            if (rank == 0)
                fputs(usage, stdout);
            return 1;
        case ':':
            return fail(rank, "%s needs a value", argv[optind - 1]);
        default:
            return fail(rank, "unknown option '%s' (see --help)", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return fail(rank, "unexpected argument '%s'", argv[optind]);
    if (!a->output)
        return fail(rank, "%s", "--output is required");
    if (a->opt.capacities == RW_CAPACITIES_ONLY && !a->update)
        return fail(rank, "%s", "--capacities-only needs --update MODEL (the pairs it stresses)");
    if (a->opt.capacities == RW_CAPACITIES_ONLY && a->opt.n_pairs)
        return fail(rank, "%s", "--capacities-only measures no pairs: drop --pairs");
    return 0;
}

static void print_progress(int done, int total, void *arg)
{
    (void)arg;
    fprintf(stderr, "RW-PROGRESS %d %d\n", done, total);
    fflush(stderr);
}

/* The job's nodes are the model's, no more and no fewer (--same-nodes). */
static rw_status same_nodes(const rw_model *base, const rw_model *m, const char *path)
{
    for (int i = 0; i < m->n_nodes; i++)
        if (rw_model_find_node(base, m->node_names[i]) < 0)
            return rw_fail(RW_ERR_ARG, "the job runs on node '%s', which %s was not measured on (%d node(s) "
                           "there, %d in the job): a series continues on its own nodes",
                           m->node_names[i], path, (int)base->n_nodes, (int)m->n_nodes);
    if (m->n_nodes != base->n_nodes)
        return rw_fail(RW_ERR_ARG, "the job runs on %d of the %d nodes %s was measured on: a series "
                       "continues on its own nodes", (int)m->n_nodes, (int)base->n_nodes, path);
    return RW_OK;
}

/* Rank 0: merge into the existing model if asked, then write. */
static rw_status write_model(const args *a, rw_model *m)
{
    if (a->source) {
        snprintf(m->source, sizeof m->source, "%s", a->source);
        rw_text_clean(m->source); /* the writer refuses what would not read back */
    }
    if (!a->update)
        return rw_model_write(m, a->output);
    rw_model *base;
    rw_status st = rw_model_read(a->update, &base);
    if (!st && a->same_nodes) /* a series continued (rankwise watch): one network's pairs only */
        st = same_nodes(base, m, a->update);
    if (!st) {
        rw_probe_settings pairs_settings = base->settings;
        st = rw_model_merge(base, m);
        if (a->opt.capacities == RW_CAPACITIES_ONLY)
            base->settings = pairs_settings; /* no pair was measured: they say how base's were */
    }
    /* One knee for the merged pairs, every pair fitted on its sides; with
     * --capacities only no pair changed, and refitting the file's rounded
     * medians would move untouched pairs in their last digit. */
    if (!st && a->opt.capacities != RW_CAPACITIES_ONLY)
        rw_model_fit_knee(base);
    if (!st) {
        if (a->source) {
            snprintf(base->source, sizeof base->source, "%s", a->source);
            rw_text_clean(base->source);
        }
        st = rw_model_write(base, a->output);
    }
    rw_model_free(base);
    return st;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    args a = {0};
    int code = parse_args(argc, argv, rank, &a);
    if (code) {
        MPI_Finalize();
        return code == 1 ? 0 : code;
    }
    if (a.progress && rank == 0)
        a.opt.progress = print_progress;

    /* Fail before measuring when the model to update cannot be read. */
    int bad = 0;
    rw_model *base = NULL;
    if (rank == 0 && a.update) {
        if (rw_model_read(a.update, &base)) {
            fprintf(stderr, "rankwise-probe: error: %s\n", rw_last_error());
            bad = 1;
        } else if (a.opt.capacities == RW_CAPACITIES_ONLY && base->n_sizes > MAX_SIZES) {
            fprintf(stderr, "rankwise-probe: error: %s: more than %d message sizes\n", a.update, MAX_SIZES);
            bad = 1;
        }
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad) {
        rw_model_free(base);
        MPI_Finalize();
        return 1;
    }
    if (a.opt.capacities == RW_CAPACITIES_ONLY) {
        /* The stressed model merges back into base: probe's sizes are its. */
        if (rank == 0) {
            a.opt.n_sizes = base->n_sizes;
            memcpy(a.sizes, base->sizes, (size_t)base->n_sizes * sizeof *a.sizes);
        }
        MPI_Bcast(&a.opt.n_sizes, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Bcast(a.sizes, a.opt.n_sizes, MPI_INT64_T, 0, MPI_COMM_WORLD);
        a.opt.sizes = a.sizes;
        a.opt.base = base;
    }

    rw_model *model = NULL;
    rw_status st = rw_probe_run(MPI_COMM_WORLD, &a.opt, &model);
    if (!st && rank == 0)
        st = write_model(&a, model);
    if (st && rank == 0)
        fprintf(stderr, "rankwise-probe: error: %s\n", rw_last_error());
    rw_reference_cost ref = rw_reference_last_cost();
    if (!st && rank == 0 && ref.rounds >= 0) {
        printf("reference pass: %d rounds, %.6g s (wall %.3f s), %d pairs raised (median +%.1f %%)\n",
               ref.rounds, ref.seconds, ref.wall, ref.raised, 100 * ref.gain);
        fflush(stdout);
    }
    rw_stress_cost cost = rw_stress_last_cost();
    if (!st && rank == 0 && cost.phases >= 0) {
        printf("stress test: %d phases, %.6g s, %d pairs through a varying link raised\n", cost.phases,
               cost.seconds, cost.raised);
        fflush(stdout);
    } else if (!st && rank == 0 && a.opt.capacities)
        fprintf(stderr, "rankwise-probe: warning: a node stopped answering: no stress test\n");
    if (!st && rank == 0 && a.progress) {
        fprintf(stderr, "RW-WRITTEN %s\n", a.output);
        fflush(stderr);
    }
    rw_model_free(model);
    rw_model_free(base);
    free(a.pair_src);
    free(a.pair_dst);
    free(a.pair_text);
    /* MPI_Finalize waits for every rank, a stopped one too, and would also
     * progress requests given up on. The model is on disk: rank 0 ends
     * without it, and the launcher, seeing a rank end unfinalized, ends the
     * job (the other ranks wait in MPI_Finalize until then). */
    if (rank == 0 && rw_probe_left_pending()) {
        if (a.progress)
            fprintf(stderr, "RW-UNFINALIZED\n");
        fprintf(stderr, "rankwise-probe: warning: a node stopped answering; %s, ending the job "
                        "without MPI_Finalize\n", st ? "no model written" : "model written");
        fflush(stdout);
        fflush(stderr);
        _exit(st ? 1 : 0);
    }
    MPI_Finalize();
    return st ? 1 : 0;
}
