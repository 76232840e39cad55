/* The profiler's per-rank tables: the state, its reset, and the persistent
 * send requests (MPI_Send_init and friends), whose traffic is counted at
 * every MPI_Start. Requests are found by their handle in an open-addressing
 * table (linear probing, deletion by backward shift), grown at creation of
 * a persistent request, never per message. */
#include "profile.h"

#include <stdlib.h>

rwp_state rwp = {.keyval = MPI_KEYVAL_INVALID};

void rwp_reset_counts(void)
{
    if (!rwp.ready)
        return;
    rwp_comm_clear_all();
    rwp_coll_clear();
    memset(rwp.msgs, 0, (size_t)rwp.world_size * sizeof *rwp.msgs);
    memset(rwp.bytes, 0, (size_t)rwp.world_size * sizeof *rwp.bytes);
    memset(rwp.kind_msgs, 0, sizeof rwp.kind_msgs);
    memset(rwp.kind_bytes, 0, sizeof rwp.kind_bytes);
    memset(rwp.time_ticks, 0, sizeof rwp.time_ticks);
    memset(rwp.calls, 0, sizeof rwp.calls);
    rwp.start_ns = rwp_now_ns();
}

/* The ticks-per-ns ratio measured over the whole run so far: its error is
 * a few clock reads over the run's length. */
int64_t rwp_ticks_to_ns(int64_t ticks)
{
    if (!rwp.use_tsc)
        return ticks;
    double span_ticks = (double)(rwp_ticks() - rwp.calib_ticks);
    double span_ns = (double)(rwp_now_ns() - rwp.calib_ns);
    return span_ticks > 0 ? (int64_t)((double)ticks * (span_ns / span_ticks)) : 0;
}

/* ------------------------------------------------------ persistent sends */

typedef struct persistent {
    uint64_t key; /* the request handle's bits; 0: empty slot */
    int dest;     /* world rank, -1 for MPI_PROC_NULL */
    int64_t bytes;
} persistent;

static persistent *slots;
static size_t n_slots, n_used; /* n_slots a power of two */

static uint64_t key_of(MPI_Request req)
{
    uint64_t key = 0;
    memcpy(&key, &req, sizeof req < sizeof key ? sizeof req : sizeof key);
    return key;
}

static size_t home(uint64_t key) { return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (n_slots - 1); }

static persistent *find(uint64_t key)
{
    if (!n_slots)
        return NULL;
    for (size_t i = home(key);; i = (i + 1) & (n_slots - 1)) {
        if (slots[i].key == key)
            return &slots[i];
        if (!slots[i].key)
            return NULL;
    }
}

static void put(persistent *table, size_t size, persistent item)
{
    size_t i = (size_t)((item.key * 0x9E3779B97F4A7C15ull) >> 20) & (size - 1);
    while (table[i].key && table[i].key != item.key)
        i = (i + 1) & (size - 1);
    table[i] = item;
}

static int grow(void)
{
    size_t size = n_slots ? 2 * n_slots : 64;
    persistent *table = calloc(size, sizeof *table);
    if (!table)
        return -1;
    for (size_t i = 0; i < n_slots; i++)
        if (slots[i].key)
            put(table, size, slots[i]);
    free(slots);
    slots = table;
    n_slots = size;
    return 0;
}

void rwp_persistent_add(MPI_Request req, int world_dest, int64_t bytes)
{
    uint64_t key = key_of(req);
    if (!key)
        return;
    rwp_lock();
    persistent *p = find(key);
    if (p) {
        p->dest = world_dest;
        p->bytes = bytes;
    } else if (2 * (n_used + 1) <= n_slots || grow() == 0) {
        put(slots, n_slots, (persistent){key, world_dest, bytes});
        n_used++;
    }
    rwp_unlock();
}

void rwp_persistent_start(MPI_Request req)
{
    uint64_t key = key_of(req);
    if (!key || !n_used)
        return;
    rwp_lock();
    persistent *p = find(key);
    int dest = p ? p->dest : -1;
    int64_t bytes = p ? p->bytes : 0;
    rwp_unlock();
    if (p)
        rwp_send(dest, 1, bytes, RWP_KIND_P2P);
}

void rwp_persistent_remove(MPI_Request req)
{
    uint64_t key = key_of(req);
    if (!key || !n_used)
        return;
    rwp_lock();
    persistent *p = find(key);
    if (p) {
        /* Backward shift: pull later members of the cluster into the hole. */
        size_t hole = (size_t)(p - slots);
        for (size_t i = (hole + 1) & (n_slots - 1); slots[i].key; i = (i + 1) & (n_slots - 1)) {
            size_t h = home(slots[i].key);
            /* slots[i] may move to the hole when its home is not in (hole, i]. */
            if ((i > hole) ? (h <= hole || h > i) : (h <= hole && h > i)) {
                slots[hole] = slots[i];
                hole = i;
            }
        }
        slots[hole].key = 0;
        n_used--;
    }
    rwp_unlock();
}

void rwp_persistent_clear(void)
{
    free(slots);
    slots = NULL;
    n_slots = n_used = 0;
}
