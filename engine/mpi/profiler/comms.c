/* World ranks of every communicator: built once per communicator with
 * MPI_Group_translate_ranks and cached as an attribute, so a call on it
 * costs one attribute lookup afterwards. MPI_Comm_dup shares the entry
 * (same groups, same topology); freeing a communicator flushes its uniform
 * collective traffic into the row and drops the entry with its last user.
 * Memory: one int per member of each communicator used (none for
 * duplicates of MPI_COMM_WORLD, whose translation is the identity). */
#include "profile.h"

#include <stdlib.h>

static void link_entry(rwp_comm *c)
{
    rwp_lock();
    c->prev = &rwp.world;
    c->next = rwp.world.next;
    if (c->next)
        c->next->prev = c;
    rwp.world.next = c;
    rwp_unlock();
}

static void unlink_entry(rwp_comm *c)
{
    rwp_lock();
    if (c->prev)
        c->prev->next = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    rwp_unlock();
}

static void free_entry(rwp_comm *c)
{
    free(c->local);
    free(c->remote);
    free(c->out);
    free(c);
}

void rwp_comm_flush(rwp_comm *c)
{
    int64_t m = __atomic_exchange_n(&c->u_msgs, 0, __ATOMIC_RELAXED);
    int64_t b = __atomic_exchange_n(&c->u_bytes, 0, __ATOMIC_RELAXED);
    if ((!m && !b) || !rwp.msgs)
        return;
    for (int r = 0; r < c->size; r++)
        if (r != c->rank) {
            int w = rwp_world_of(c, r);
            rwp_add64(&rwp.msgs[w], m);
            rwp_add64(&rwp.bytes[w], b);
        }
}

void rwp_comm_flush_all(void)
{
    rwp_lock();
    for (rwp_comm *c = &rwp.world; c; c = c->next)
        rwp_comm_flush(c);
    rwp_unlock();
}

void rwp_comm_clear_all(void)
{
    rwp_lock();
    for (rwp_comm *c = &rwp.world; c; c = c->next)
        c->u_msgs = c->u_bytes = 0;
    rwp_unlock();
}

static int copy_entry(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    rwp_comm *c = in;
    __atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
    *(void **)out = c;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_entry(MPI_Comm comm, int keyval, void *value, void *extra)
{
    rwp_comm *c = value;
    rwp_lock();
    rwp_comm_flush(c);
    rwp_unlock();
    if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        unlink_entry(c);
        free_entry(c);
    }
    return MPI_SUCCESS;
}

int rwp_comm_setup(void)
{
    rwp.world = (rwp_comm){.size = rwp.world_size, .rank = rwp.world_rank, .refs = 1, .n_out = -1,
                           .members = -1};
    if (PMPI_Comm_group(MPI_COMM_WORLD, &rwp.world_group) != MPI_SUCCESS)
        return -1;
    return PMPI_Comm_create_keyval(copy_entry, delete_entry, &rwp.keyval, NULL) == MPI_SUCCESS ? 0 : -1;
}

/* World ranks of the n members of group g; NULL when MPI refuses. */
static int *translate(MPI_Group g, int n)
{
    int *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
    if (in && out) {
        for (int i = 0; i < n; i++)
            in[i] = i;
        if (PMPI_Group_translate_ranks(g, n, in, rwp.world_group, out) == MPI_SUCCESS) {
            free(in);
            return out;
        }
    }
    free(in);
    free(out);
    return NULL;
}

static int *translate_comm(MPI_Comm comm, int n, int remote)
{
    MPI_Group g;
    if ((remote ? PMPI_Comm_remote_group(comm, &g) : PMPI_Comm_group(comm, &g)) != MPI_SUCCESS)
        return NULL;
    int *t = translate(g, n);
    PMPI_Group_free(&g);
    return t;
}

/* Threads that meet a new communicator at once build its entry one at a
 * time (a second entry set as the attribute would free the first). */
static volatile char build_lock;

static rwp_comm *build(MPI_Comm comm);

rwp_comm *rwp_comm_build(MPI_Comm comm)
{
    if (!rwp.ready || comm == MPI_COMM_NULL)
        return NULL;
    if (!rwp.atomic)
        return build(comm);
    while (__atomic_test_and_set(&build_lock, __ATOMIC_ACQUIRE))
        ;
    void *value = NULL;
    int found = 0;
    rwp_comm *c = NULL;
    if (PMPI_Comm_get_attr(comm, rwp.keyval, &value, &found) == MPI_SUCCESS)
        c = found ? value : build(comm);
    __atomic_clear(&build_lock, __ATOMIC_RELEASE);
    return c;
}

static rwp_comm *build(MPI_Comm comm)
{
    rwp_comm *c = calloc(1, sizeof *c);
    int inter = 0;
    if (!c || PMPI_Comm_size(comm, &c->size) != MPI_SUCCESS ||
        PMPI_Comm_rank(comm, &c->rank) != MPI_SUCCESS ||
        PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        goto fail;
    c->refs = 1;
    c->n_out = -1;
    if (!(c->local = translate_comm(comm, c->size, 0)))
        goto fail;
    int identity = c->size == rwp.world_size;
    for (int i = 0; identity && i < c->size; i++)
        identity = c->local[i] == i;
    if (identity) {
        free(c->local);
        c->local = NULL;
    }
    c->members = c->local ? -2 : -1; /* the world's members in order: the world */
    if (inter) {
        if (PMPI_Comm_remote_size(comm, &c->remote_size) != MPI_SUCCESS || c->remote_size < 1 ||
            !(c->remote = translate_comm(comm, c->remote_size, 1)))
            goto fail;
    }
    if (PMPI_Comm_set_attr(comm, rwp.keyval, c) != MPI_SUCCESS)
        goto fail;
    link_entry(c);
    return c;
fail:
    if (c)
        free_entry(c);
    return NULL;
}
