/* Decisions from the measured network, per communicator: the predictor's
 * network for the communicator's placement (RANKWISE_MODEL, or the in-job
 * measurement with RANKWISE_COLL_PROBE=1), then rw_coll_decide
 * (docs/concepts/collectives.md) per (collective, root, power-of-two size
 * class), lazily, at the class's smallest size.
 *
 * Rank 0 of the communicator does the work and broadcasts the outcome on
 * the private duplicate (all ranks are in the collective call): every rank
 * runs the same algorithm and tree whatever its view of the files, and
 * only rank 0 reads the model. A rank's node is its processor name (blanks
 * as '_', as the probe names nodes), or, when the model has no such node,
 * "name:<rank in MPI_COMM_WORLD>" (the names of `rankwise probe --group-by
 * rank`). A rank whose node is not in the model, a model that cannot be
 * read or lacks a pair: one warning, and the communicator passes through. */
#include "decision.h"
#include "internal.h"
#include "rankwise_coll_tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* SMPI's helpers turn clock_gettime into simulated time: the decision's
 * cost is wall time on this machine. */
#ifdef clock_gettime
#undef clock_gettime
#endif

static int cfg_read, probe_on;
static const char *model_path;
static int warned;      /* one warning per process */

static void read_cfg(void)
{
    model_path = rwc_model_path();
    probe_on = rwc_env_bool("RANKWISE_COLL_PROBE");
    cfg_read = 1;
    /* Rank 0 of MPI_COMM_WORLD reads the model at its first decision,
     * whichever communicator that is on, so that a model that cannot be
     * read is said once per job even when the communicators' rank 0s that
     * need it are other processes. */
    if (model_path && rwc_world_rank0())
        rwc_env_model();
}

int rwc_net_configured(void)
{
    if (!cfg_read)
        read_cfg();
    return model_path || probe_on;
}

/* The model decisions reason on: the live one when there is one (only
 * when RANKWISE_MODEL or RANKWISE_COLL_PROBE asked for decisions from the
 * network: a live context alone changes nothing in the collectives). */
static const rw_model *current_model(void)
{
    const rw_model *live = rwc_live_model();
    return live ? live : model_path ? rwc_env_model() : NULL;
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Collective on c, after a network could not be set up: rank 0's reason
 * (why, empty when already said) goes to every rank, and rank 0 of
 * MPI_COMM_WORLD, when it is one of them, says the first it hears of, so
 * that a job hears of a problem once however many communicators meet it
 * (a communicator without it stays silent; MPI_COMM_WORLD holds every rank
 * a model can lack). */
#define WHY_LEN 512
static void tell(rwc_comm *c, char *why, const char *then)
{
    if (rwc_real_bcast(why, WHY_LEN, MPI_CHAR, 0, c->dup) != MPI_SUCCESS || !why[0] || warned)
        return;
    why[WHY_LEN - 1] = '\0';
    if (rwc_world_rank0()) {
        warned = 1;
        rwc_say("warning", "%s (%s)", why, then);
    }
}

#define NAME_LEN RWC_NAME_LEN

rw_status rwc_model_nodes(const rw_model *m, const char *path, const char *names, const int *world, int n,
                          int32_t *node_of)
{
    for (int r = 0; r < n; r++) {
        const char *name = names + (size_t)r * NAME_LEN;
        int k = rw_model_find_node(m, name);
        if (k < 0) {
            char by_rank[NAME_LEN + 16];
            snprintf(by_rank, sizeof by_rank, "%s:%d", name, world[r]);
            k = rw_model_find_node(m, by_rank);
        }
        if (k < 0)
            return rw_fail(RW_ERR_STATE, "node '%s' of rank %d (nor '%s:%d') is not in the model %s", name, r, name,
                           world[r], path);
        node_of[r] = k;
    }
    return RW_OK;
}

/* Rank 0: the network from the model, or why not (RW_ERR_IO: the model
 * could not be read, which rwc_env_model has reported). */
static rw_status net_from_model(const char *names, const int *world, int n, rw_pnet **out)
{
    const rw_model *m = rwc_live_model();
    char shown[RWC_SHOWN_BUF];
    const char *path = m ? "(live)" : rwc_shown(model_path, RWC_SHOWN_PATH, shown);
    if (!m && !(m = rwc_env_model()))
        return RW_ERR_IO;
    int32_t *node_of = malloc((size_t)n * sizeof *node_of);
    if (!node_of)
        return rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks", n);
    rw_status st = rwc_model_nodes(m, path, names, world, n, node_of);
    if (!st)
        st = rwc_pnet_from_model(m, n, node_of, out);
    free(node_of);
    return st;
}

/* Collective on c: the network from the model (rank 0 holds it), else the
 * in-job measurement; c->net_state says which, the same on every rank. */
static void set_up_network(rwc_comm *c)
{
    int ok = 0;
    char why[WHY_LEN] = "";
    if (model_path || rwc_live_model()) {
        char mine[NAME_LEN] = {0}, *names = NULL;
        int len = 0, me = 0, *world = NULL;
        PMPI_Get_processor_name(mine, &len);
        for (char *p = mine; *p; p++)
            if (*p == ' ' || *p == '\t')
                *p = '_';
        PMPI_Comm_rank(MPI_COMM_WORLD, &me);
        if (c->rank == 0) {
            names = calloc((size_t)c->size, NAME_LEN);
            world = calloc((size_t)c->size, sizeof *world);
        }
        int alloc_ok = c->rank != 0 || (names && world);
        rwc_real_bcast(&alloc_ok, 1, MPI_INT, 0, c->dup);
        if (alloc_ok && rwc_real_gather(mine, NAME_LEN, MPI_CHAR, names, NAME_LEN, MPI_CHAR, 0, c->dup) == MPI_SUCCESS &&
            rwc_real_gather(&me, 1, MPI_INT, world, 1, MPI_INT, 0, c->dup) == MPI_SUCCESS && c->rank == 0) {
            rw_status st = net_from_model(names, world, c->size, &c->net);
            if (st && st != RW_ERR_IO) /* (an unreadable model is said by rwc_env_model) */
                snprintf(why, sizeof why, "%s", rw_last_error());
            ok = !st;
        }
        free(names);
        free(world);
        if (rwc_real_bcast(&ok, 1, MPI_INT, 0, c->dup) != MPI_SUCCESS)
            ok = 0;
        if (!ok)
            tell(c, why, probe_on ? "this communicator decides from the in-job measurement"
                                  : "collectives on this communicator pass through");
        c->net_source = "model";
    }
    if (!ok && probe_on) {
        rw_pnet *net = NULL;
        rw_status st = rwc_probe_pnet(c, &net);
        ok = !st && net; /* rank 0's outcome decides */
        if (c->rank == 0 && !ok)
            snprintf(why, sizeof why, "%s", st ? rw_last_error() : "the in-job measurement gave no network");
        if (rwc_real_bcast(&ok, 1, MPI_INT, 0, c->dup) != MPI_SUCCESS)
            ok = 0;
        if (!ok)
            tell(c, why, "collectives on this communicator pass through");
        if (ok && c->rank == 0) {
            rw_pnet_free(c->net);
            c->net = net;
        } else {
            rw_pnet_free(net);
        }
        c->net_source = "probe";
    }
    c->net_state = ok ? 1 : -1;
}

/* What rank 0 broadcasts: alg, segment, has tree, seconds; then parents
 * and sibling orders of the tree. */
enum { H_ALG, H_SEGMENT, H_TREE, H_SECONDS, H_N };

/* Rank 0: decide, fill the header and (with a tree) parents and orders. */
static void decide_on_root(rwc_comm *c, rw_coll_op op, int root, int cls, double *head, int32_t *links)
{
    double t0 = wall();
    rw_tune_options opt = rw_tune_options_default();
    opt.max_evals = rwc_max_evals(); /* RANKWISE_COLL_MAX_EVALS */
    const rw_model *m = current_model();
    if (!strcmp(c->net_source, "model") && m && m->knee > 0)
        opt.eager_limit = m->knee; /* as coll tune does */
    rw_coll_decision *d = NULL;
    head[H_ALG] = RW_COLL_PASSTHROUGH;
    head[H_SEGMENT] = head[H_TREE] = 0;
    /* unrooted collectives are decided with root 0 */
    if (rw_coll_decide(c->net, rw_op_name(op), root < 0 ? 0 : root, ldexp(1.0, cls), &opt, &d) == RW_OK &&
        d->chosen > 0) {
        const rw_coll_candidate *k = &d->candidates[d->chosen];
        rw_coll_alg alg;
        if (k->tree && k->tree->n_ranks == c->size && (root < 0 || k->tree->root == root)) {
            const rw_tree *t = k->tree;
            head[H_ALG] = RW_COLL_AUTO;
            head[H_TREE] = 1;
            head[H_SEGMENT] = (double)k->segment;
            for (int32_t r = 0; r < c->size; r++)
                links[r] = t->parent[r];
            for (int32_t r = 0; r < c->size; r++)
                for (int32_t i = t->first_child[r]; i < t->first_child[r + 1]; i++)
                    links[c->size + t->child[i]] = i - t->first_child[r];
            links[c->size + t->root] = 0;
        } else if (!k->tree && rw_coll_alg_parse(k->algorithm, &alg) == RW_OK && alg != RW_COLL_AUTO) {
            head[H_ALG] = alg;
            head[H_SEGMENT] = (double)k->segment;
        }
    }
    rw_coll_decision_free(d);
    head[H_SECONDS] = wall() - t0;
}

static rw_status decide_class(rwc_comm *c, rw_coll_op op, int root, int cls, rwc_decision_entry **out)
{
    double head[H_N] = {0};
    int32_t *links = malloc(2 * (size_t)c->size * sizeof *links);
    int have = links != NULL, all_have = 0;
    /* nobody waits for a rank that could not allocate */
    if (rwc_real_allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, c->dup) != MPI_SUCCESS || !all_have) {
        free(links);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a decision over %d ranks", c->size);
    }
    if (c->rank == 0)
        decide_on_root(c, op, root, cls, head, links);
    rw_status st = rwc_mpi(rwc_real_bcast(head, H_N, MPI_DOUBLE, 0, c->dup), "MPI_Bcast (decision)");
    if (!st && head[H_TREE])
        st = rwc_mpi(rwc_real_bcast(links, 2 * c->size, MPI_INT, 0, c->dup), "MPI_Bcast (decision tree)");
    rwc_decision_entry *e = st ? NULL : calloc(1, sizeof *e);
    if (!st && !e)
        st = rw_fail(RW_ERR_NOMEM, "out of memory for a decision");
    if (!st) {
        *e = (rwc_decision_entry){op, root, cls, (rw_coll_alg)head[H_ALG], (int64_t)head[H_SEGMENT], NULL,
                                  head[H_SECONDS], NULL};
    }
    if (!st && head[H_TREE]) { /* every rank builds the tree from the same arrays */
        int32_t tree_root = 0;
        for (int32_t r = 0; r < c->size; r++)
            if (links[r] < 0)
                tree_root = r;
        if (rw_tree_from_parents(c->size, tree_root, links, links + c->size, &e->tree) != RW_OK)
            e->alg = RW_COLL_PASSTHROUGH; /* cannot happen with rank 0's tree; all ranks agree anyway */
    }
    free(links);
    if (st) {
        free(e);
        return st;
    }
    e->next = c->decisions;
    c->decisions = e;
    *out = e;
    return RW_OK;
}

int rwc_net_ready(rwc_comm *c)
{
    if (!rwc_net_configured())
        return 0;
    if (c->generation != rwc_model_generation()) {
        rwc_comm_forget_network(c);
        c->generation = rwc_model_generation();
    }
    if (c->net_state == 0)
        set_up_network(c);
    return c->net_state > 0;
}

int rwc_net_choice(rwc_comm *c, rw_coll_op op, int root, size_t bytes, rwc_choice *out)
{
    if (!rwc_net_configured())
        return 0;
    if (c->generation != rwc_model_generation()) { /* a live model changed: decide again */
        rwc_comm_forget_network(c);
        c->generation = rwc_model_generation();
    }
    if (c->net_state == 0)
        set_up_network(c);
    if (c->net_state < 0 || bytes == 0) /* nothing moves at 0 bytes */
        return 0;
    int cls = rw_size_class_pow2(bytes);
    rwc_decision_entry *e = c->decisions;
    while (e && !(e->op == (int)op && e->root == root && e->size_class == cls))
        e = e->next;
    if (!e) {
        if (decide_class(c, op, root, cls, &e))
            return 0;
        if (rwc_tracing() && c->rank == 0)
            fprintf(stderr, "rankwise-coll: decided %s root %d %.0f+ bytes on %d ranks from the %s: %s (%.6f s)\n",
                    rw_op_name(op), root, ldexp(1.0, cls), c->size, c->net_source,
                    e->tree ? "tree" : rw_coll_alg_name(e->alg), e->seconds);
    }
    *out = (rwc_choice){e->tree ? RW_COLL_AUTO : e->alg, e->tree, (size_t)e->segment, c->net_source};
    return 1;
}
