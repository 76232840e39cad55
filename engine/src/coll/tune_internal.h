/* Pieces shared by the tree constructions (model_trees.c) and the selection
 * (select.c): node leaders and leader-level trees. Not installed. */
#ifndef RW_TUNE_INTERNAL_H
#define RW_TUNE_INTERNAL_H

#include "../predict/predict_internal.h"
#include "rankwise_coll_tune.h"

/* The node leaders of a placement: leader 0 is the root (it leads its
 * node), the others are the lowest rank of each other node, in rank order.
 * member[first[i] .. first[i + 1]) are the other ranks of leader i's node,
 * increasing. */
typedef struct rw_leaders {
    int32_t n, m;   /* ranks, leaders */
    int32_t *rank;  /* m */
    int32_t *node;  /* m */
    int32_t *first; /* m + 1 */
    int32_t *member;/* n - m */
} rw_leaders;

rw_status rw_leaders_init(const rw_pnet *net, int32_t root, rw_leaders *L);
/* Every rank its own leader (rank[0] the root, then relative rank order;
 * no members): trees over ranks with the same constructions. */
rw_status rw_leaders_init_ranks(const rw_pnet *net, int32_t root, rw_leaders *L);
void rw_leaders_free(rw_leaders *L);

/* A tree over the leaders: lp[i] its parent leader (-1 for leader 0), lo[i]
 * its place among its siblings (smaller: sent to earlier). Expanded to the
 * communicator's ranks with each node's ranks in a binomial tree below the
 * leader, after its remote children. */
rw_status rw_leaders_expand(const rw_leaders *L, const int32_t *lp, const int32_t *lo, rw_tree **out);

/* Node-level figures between leaders i and j. */
static inline double rw_l_alpha(const rw_pnet *net, const rw_leaders *L, int32_t i, int32_t j)
{
    return net->alpha[(int64_t)L->node[i] * net->n + L->node[j]];
}
static inline double rw_l_beta(const rw_pnet *net, const rw_leaders *L, int32_t i, int32_t j)
{
    return net->beta[(int64_t)L->node[i] * net->n + L->node[j]];
}
static inline double rw_l_o(const rw_pnet *net, const rw_leaders *L, int32_t i)
{
    return net->o ? net->o[L->node[i]] : 0.0;
}

/* Predictor options of a tune. */
rw_coll_options rw_tune_coll_options(const rw_tune_options *opt);

/* Predicted time of op along t (segment as rw_predict_tree); +inf on error. */
double rw_tune_score(const rw_pnet *net, const char *op, const rw_tree *t, double bytes, int64_t segment,
                     const rw_tune_options *opt);

/* The checks of a decision's arguments (rw_coll_decide, rw_coll_ompi_choose;
 * fn names the caller): *o the options (opt or the defaults), *fixed Open
 * MPI's choice for the call (rw_coll_ompi_algorithm). */
rw_status rw_coll_check_decision(const char *fn, const rw_pnet *net, const char *op, double bytes,
                                 const rw_tune_options *opt, rw_tune_options *o, const char **fixed);

/* Predicted time of Open MPI's algorithm alg (rw_coll_ompi_algorithm's
 * names) for op at `bytes`, rooted ones from rank 0, and the segment it
 * runs in (*segment, bytes; 0 = whole); +inf where the predictor cannot
 * cost it. */
double rw_coll_ompi_time(const rw_pnet *net, const char *op, const char *alg, double bytes,
                         const rw_tune_options *opt, int64_t *segment);

/* The choice among n candidates, times[0] the MPI's own (gain.c): the
 * fastest eligible one (eligible NULL: all) at least min_gain faster than
 * times[0] whose gain also holds on net without its unconfirmed links
 * (rw_pnet_link_confirmed), where cost(i, view, ctx) prices candidate i;
 * 0 when none. */
#define RW_COLL_PICK_MAX 32
typedef struct rw_coll_gain_rule {
    const rw_pnet *net;
    int32_t n;
    const double *times;
    const uint8_t *eligible;
    double min_gain;
    double (*cost)(int32_t i, const rw_pnet *view, void *ctx);
    void *ctx;
} rw_coll_gain_rule;
rw_status rw_coll_pick(const rw_coll_gain_rule *r, int32_t *chosen);

/* rw_model_tree_eager with up to RW_EAGER_STARTS_MAX trees over the ranks
 * (from root) to search from as well; opt's own start_tree is not used. */
#define RW_EAGER_STARTS_MAX 4
rw_status rw_tree_eager_from(const rw_pnet *net, const char *op, int32_t root, double bytes,
                             const rw_tune_options *opt, const rw_tree *const *starts, int n_starts, rw_tree **out);

#endif
