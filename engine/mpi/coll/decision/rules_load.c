/* The rules file of `rankwise coll tune` (RANKWISE_COLL_RULES,
 * docs/concepts/collectives.md): read once per process, looked up per
 * call. Its trees are over the ranks of MPI_COMM_WORLD of the allocation
 * it was made for, so it applies only to communicators holding the
 * world's group in the world's order; on any other communicator a rank
 * number would name another process. */
#include "decision.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int loaded, broken;
static rw_coll_rules *rules;

void rwc_rules_load(void)
{
    if (loaded)
        return;
    loaded = 1;
    const char *path = getenv("RANKWISE_COLL_RULES");
    if (!path || !*path)
        return;
    char *mem = NULL, shown[RWC_SHOWN_BUF];
    rw_status st = RW_OK;
    FILE *f = rwc_input_file(path, "a rules file", RWC_RULES_MAX_BYTES, &mem, &st);
    if (f) {
        st = rw_coll_rules_read_stream(f, rwc_shown(path, RWC_SHOWN_PATH, shown), &rules);
        fclose(f);
    }
    free(mem);
    if (st) {
        rules = NULL;
        broken = 1;
        rwc_say("error", "%s (collectives pass through to the MPI)", rw_last_error());
        return;
    }
    int size = 0;
    if (rwc_world_rank0() && !PMPI_Comm_size(MPI_COMM_WORLD, &size) && size != rw_coll_rules_comm_size(rules))
        rwc_say("warning", "%s is for %d ranks, MPI_COMM_WORLD has %d: no call will match it",
                rwc_shown(path, RWC_SHOWN_PATH, shown),
                (int)rw_coll_rules_comm_size(rules), size);
}

const rw_coll_rules *rwc_rules(int *is_broken)
{
    rwc_rules_load();
    *is_broken = broken;
    return rules;
}

/* MPI_Comm_compare is local and gives every rank of c the same answer. */
static int has_world_order(rwc_comm *c)
{
    if (c->world_order < 0) {
        int cmp = MPI_UNEQUAL;
        c->world_order = PMPI_Comm_compare(c->dup, MPI_COMM_WORLD, &cmp) == MPI_SUCCESS &&
                         (cmp == MPI_IDENT || cmp == MPI_CONGRUENT);
    }
    return c->world_order;
}

int rwc_rules_choice(rwc_comm *c, rw_coll_op op, int root, size_t bytes, rwc_choice *out)
{
    rw_coll_choice rc;
    if (!rules || !has_world_order(c) || bytes > INT64_MAX ||
        rw_coll_rules_lookup(rules, rw_op_name(op), c->size, root, (int64_t)bytes, &rc) != RW_OK)
        return 0;
    *out = (rwc_choice){RW_COLL_PASSTHROUGH, NULL, 0, "rules"};
    if (!strcmp(rc.algorithm, "tree")) {
        out->tree = rc.tree;
        out->segment = (size_t)rc.segment;
    } else if (rw_coll_alg_parse(rc.algorithm, &out->alg) != RW_OK) {
        out->alg = RW_COLL_PASSTHROUGH; /* the reader takes only the library's names */
    } else {
        out->segment = (size_t)rc.segment;
    }
    return 1;
}

const int32_t *rwc_rules_trinary_order(rwc_comm *c)
{
    int failed;
    const rw_coll_rules *r = rwc_rules(&failed);
    return r && rw_coll_rules_comm_size(r) == c->size && has_world_order(c) ? rw_coll_rules_trinary_order(r)
                                                                             : NULL;
}

const int32_t *rwc_rules_ring_order(rwc_comm *c)
{
    int failed;
    const rw_coll_rules *r = rwc_rules(&failed);
    return r && rw_coll_rules_comm_size(r) == c->size && has_world_order(c) ? rw_coll_rules_ring_order(r) : NULL;
}
