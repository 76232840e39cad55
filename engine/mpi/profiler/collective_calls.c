/* Collective calls grouped by (communicator members, op, root, bytes), for
 * the predictor, which costs a call by what its algorithm sends
 * (docs/reference/formats.md, "Collective calls"). Only the communicator's rank 0
 * counts a call (every member makes it), so no call is counted twice and
 * ranks that lead no communicator keep no table.
 *
 * Cost per call: one hash and a probe or two in a table of 2 x max_groups
 * slots (a power of two), no allocation; the first call on a communicator
 * other than the world copies its member list once. Memory: the table
 * (32 bytes a slot, allocated at the first call) and those lists. Calls of
 * new groups beyond max_groups are counted as dropped, and the file says
 * how many. */
#include "profile.h"

#include <stdlib.h>

#define DEFAULT_MAX_GROUPS 1024
#define EMPTY (-2)

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xBF58476D1CE4E5B9ull;
}

static size_t slot_of(int32_t members, int op, int root, int64_t bytes, size_t mask)
{
    uint64_t h = mix(mix(mix((uint64_t)(uint32_t)members, (uint64_t)op), (uint64_t)(uint32_t)root),
                     (uint64_t)bytes);
    return (size_t)(h >> 17) & mask;
}

/* RANKWISE_PROFILE_COLL_GROUPS, else the default (at least 1). */
static int64_t max_groups(void)
{
    const char *env = getenv("RANKWISE_PROFILE_COLL_GROUPS");
    char *end = NULL;
    long long v = env && *env ? strtoll(env, &end, 10) : 0;
    return env && *env && end && !*end && v >= 1 && v <= (1 << 24) ? v : DEFAULT_MAX_GROUPS;
}

static int setup_table(void)
{
    rwp.max_groups = max_groups();
    size_t n = 1;
    while (n < 2 * (size_t)rwp.max_groups)
        n *= 2;
    rwp.groups = malloc(n * sizeof *rwp.groups);
    if (!rwp.groups)
        return -1;
    for (size_t k = 0; k < n; k++)
        rwp.groups[k].members = EMPTY;
    rwp.n_slots = n;
    return 0;
}

/* c's member list, copied at the first call on it (-1: the world). */
static int members_of(rwp_comm *c)
{
    if (c->members != EMPTY)
        return c->members;
    if (rwp.n_lists == rwp.cap_lists) {
        int cap = rwp.cap_lists ? 2 * rwp.cap_lists : 16;
        rwp_list *a = realloc(rwp.lists, (size_t)cap * sizeof *a);
        if (!a)
            return EMPTY;
        rwp.lists = a;
        rwp.cap_lists = cap;
    }
    int *ranks = malloc((size_t)c->size * sizeof *ranks);
    if (!ranks)
        return EMPTY;
    memcpy(ranks, c->local, (size_t)c->size * sizeof *ranks);
    rwp.lists[rwp.n_lists] = (rwp_list){c->size, ranks};
    return c->members = rwp.n_lists++;
}

void rwp_coll_count(rwp_comm *c, int op, int root, int64_t bytes)
{
    rwp_lock();
    int members = members_of(c);
    if ((!rwp.groups && setup_table() != 0) || members == EMPTY) {
        rwp.coll_dropped++;
        rwp_unlock();
        return;
    }
    size_t mask = rwp.n_slots - 1;
    for (size_t k = slot_of(members, op, root, bytes, mask);; k = (k + 1) & mask) {
        rwp_group *g = &rwp.groups[k];
        if (g->members == members && g->op == op && g->root == root && g->bytes == bytes) {
            g->calls++;
            break;
        }
        if (g->members == EMPTY) {
            if (rwp.n_groups < rwp.max_groups) { /* the table stays at most half full */
                *g = (rwp_group){members, op, root, bytes, 1};
                rwp.n_groups++;
            } else {
                rwp.coll_dropped++;
            }
            break;
        }
    }
    rwp_unlock();
}

void rwp_coll_clear(void)
{
    rwp_lock();
    for (size_t k = 0; rwp.groups && k < rwp.n_slots; k++)
        rwp.groups[k].members = EMPTY;
    rwp.n_groups = rwp.coll_dropped = 0;
    rwp_unlock();
}

void rwp_coll_free(void)
{
    free(rwp.groups);
    rwp.groups = NULL;
    rwp.n_slots = 0;
    rwp.n_groups = rwp.coll_dropped = 0;
    for (int k = 0; k < rwp.n_lists; k++)
        free(rwp.lists[k].ranks);
    free(rwp.lists);
    rwp.lists = NULL;
    rwp.n_lists = rwp.cap_lists = 0;
}

/* Words: n_lists, n_groups, dropped; per list its size and members; per
 * group its list, op, root, bytes, calls. */
int64_t *rwp_coll_pack(int64_t *n)
{
    rwp_lock();
    int64_t words = 3 + 5 * rwp.n_groups;
    for (int k = 0; k < rwp.n_lists; k++)
        words += 1 + rwp.lists[k].size;
    int64_t *w = malloc((size_t)words * sizeof *w);
    if (!w) {
        rwp_unlock();
        *n = -1;
        return NULL;
    }
    int64_t at = 0;
    w[at++] = rwp.n_lists;
    w[at++] = rwp.n_groups;
    w[at++] = rwp.coll_dropped;
    for (int k = 0; k < rwp.n_lists; k++) {
        w[at++] = rwp.lists[k].size;
        for (int r = 0; r < rwp.lists[k].size; r++)
            w[at++] = rwp.lists[k].ranks[r];
    }
    for (size_t k = 0; rwp.groups && k < rwp.n_slots; k++) {
        const rwp_group *g = &rwp.groups[k];
        if (g->members == EMPTY)
            continue;
        w[at++] = g->members;
        w[at++] = g->op;
        w[at++] = g->root;
        w[at++] = g->bytes;
        w[at++] = g->calls;
    }
    rwp_unlock();
    *n = words;
    return w;
}

/* Rank 0: every rank's lists become the matrix's communicators (the
 * engine merges those with the same members, rank by rank they are
 * distinct communicators led by different ranks), its groups the calls. */
rw_status rwp_coll_unpack(rw_matrix *m, int n_ranks, const int64_t *words, const int *counts)
{
    int64_t n_comms = 0, n_members = 0, n_calls = 0, dropped = 0;
    const int64_t *w = words;
    for (int i = 0; i < n_ranks; w += counts[i], i++) {
        const int64_t *p = w + 3;
        n_comms += w[0];
        n_calls += w[1];
        dropped += w[2];
        for (int64_t k = 0; k < w[0]; k++) {
            n_members += p[0];
            p += 1 + p[0];
        }
    }
    if (n_comms > INT32_MAX)
        return rw_fail(RW_ERR_STATE, "the profile has %lld communicators, more than a matrix holds",
                       (long long)n_comms);
    int64_t *start = malloc((size_t)(n_comms + 1) * sizeof *start);
    int32_t *members = malloc((size_t)(n_members ? n_members : 1) * sizeof *members);
    rw_coll_call *calls = malloc((size_t)(n_calls ? n_calls : 1) * sizeof *calls);
    rw_status st = RW_OK;
    if (!start || !members || !calls) {
        st = rw_fail(RW_ERR_NOMEM, "out of memory for %lld collective call groups", (long long)n_calls);
        goto done;
    }
    int64_t c = 0, at = 0, k = 0;
    start[0] = 0;
    w = words;
    for (int i = 0; i < n_ranks; w += counts[i], i++) {
        const int64_t *p = w + 3;
        int64_t first = c;
        for (int64_t l = 0; l < w[0]; l++) {
            for (int64_t r = 0; r < p[0]; r++)
                members[at++] = (int32_t)p[1 + r];
            p += 1 + p[0];
            start[++c] = at;
        }
        for (int64_t g = 0; g < w[1]; g++, p += 5)
            calls[k++] = (rw_coll_call){.op = (int32_t)p[1],
                                        .comm = p[0] < 0 ? -1 : (int32_t)(first + p[0]),
                                        .root = (int32_t)p[2],
                                        .bytes = p[3],
                                        .calls = p[4]};
    }
    st = rw_matrix_set_collectives(m, (int32_t)n_comms, start, members, n_calls, calls, dropped);
done:
    free(start);
    free(members);
    free(calls);
    return st;
}
