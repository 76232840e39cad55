/* The PMPI profiler's private state and the inline helpers every wrapper
 * uses (not installed). One instance per rank: a process per rank with a
 * real MPI; under SMPI the profiler is linked into the application, whose
 * copy per rank (smpi/privatization:dlopen) gives each rank its own.
 *
 * Per rank, recording is a dense row over world ranks (messages and bytes
 * to each destination, allocated once at MPI_Init), per-class counters and
 * MPI times; nothing is allocated per message. Ranks of other
 * communicators are translated to world ranks through a table cached on
 * the communicator (an attribute), built at its first use.
 *
 * Collective calls are also counted in groups (communicator members, op,
 * root, bytes) by the communicator's rank 0 alone, so that each call is
 * counted once: an open-addressing table of at most max_groups groups,
 * allocated at the first call, never per call (collective_calls.c). */
#ifndef RW_PROFILE_PRIVATE_H
#define RW_PROFILE_PRIVATE_H

#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#ifdef RW_SMPI
#include <simgrid/engine.h>
#endif

#include "internal.h" /* rankwise.h and rw_fail */

#define RWP_HIDDEN __attribute__((visibility("hidden")))

/* Classes of MPI calls whose time is accounted. */
enum { RWP_P2P = 0, RWP_COLL = 1, RWP_WAIT = 2, RWP_OTHER = 3, RWP_NCLASS = 4 };
/* Kinds of traffic (the matrix has both; the summary splits them). */
enum { RWP_KIND_P2P = 0, RWP_KIND_COLL = 1 };

/* What the profiler knows of one communicator (shared by its duplicates,
 * which have the same groups and topology). */
typedef struct rwp_comm rwp_comm;
struct rwp_comm {
    int size, rank;     /* local group, and this rank's place in it */
    int remote_size;    /* intercommunicator: size of the remote group; else 0 */
    int *local;         /* world rank of each local rank; NULL when the identity */
    int *remote;        /* world rank of each remote rank (intercommunicators) */
    int refs;           /* communicators holding it (MPI_Comm_dup copies it) */
    /* Collective traffic sent to every other member alike, expanded into
     * the row when flushed (keeps bcast/allreduce O(1) on large jobs). */
    int64_t u_msgs, u_bytes;
    /* Out-neighbours of a process topology as world ranks (-1 for
     * MPI_PROC_NULL), built by the first neighbourhood collective. */
    int n_out;          /* -1: not built */
    int *out;
    int members;        /* its member list in rwp.lists; -1 the world, -2 not listed yet */
    rwp_comm *prev, *next; /* every live entry, for flushing */
};

typedef struct rwp_state {
    int on;              /* recording: ready, not paused, not broken */
    int ready;           /* tables allocated at MPI_Init */
    int paused;
    int broken;          /* state found shared between ranks (SMPI without privatisation) */
    int atomic;          /* MPI_THREAD_MULTIPLE: updates are atomic */
    int world_size, world_rank;
    int64_t *msgs, *bytes;                 /* world_size each: to each world rank */
    int64_t kind_msgs[2], kind_bytes[2];   /* totals sent by kind */
    int64_t time_ticks[RWP_NCLASS];        /* time inside MPI calls per class (rwp_ticks) */
    int64_t calls[RWP_NCLASS];
    int64_t start_ns;                      /* MPI_Init or the last reset */
    int use_tsc;                           /* rwp_ticks reads the TSC (see rwp_setup) */
    int64_t calib_ticks, calib_ns;         /* both clocks at MPI_Init: ticks to ns */
    int keyval;                            /* communicator attribute: rwp_comm * */
    MPI_Group world_group;
    rwp_comm world;                        /* MPI_COMM_WORLD, head of the live list */
    /* Collective call groups (collective_calls.c). */
    struct rwp_group *groups;              /* 2 x max_groups slots, NULL until the first */
    size_t n_slots;
    int64_t n_groups, max_groups, coll_dropped;
    struct rwp_list *lists;                /* member lists of the communicators grouped */
    int n_lists, cap_lists;
    char source[256];                      /* the matrix's source line */
    volatile char lock;                    /* spin lock for lists and tables (atomic mode) */
} rwp_state;

extern rwp_state rwp RWP_HIDDEN;

/* ---------------------------------------------------------------- clock */

static inline int64_t rwp_now_ns(void)
{
#ifdef RW_SMPI
    /* Simulated time, read without injecting any (smpi/wtime). */
    return (int64_t)(simgrid_get_clock() * 1e9);
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
#endif
}

/* The clock of the per-call timers: the x86 time-stamp counter when the
 * kernel itself keeps time with it (about 8 ns a read against 25 for
 * clock_gettime, twice per call), else nanoseconds. Ticks become
 * nanoseconds at write time, by the ratio of both clocks since MPI_Init
 * (rwp_ticks_to_ns). */
static inline int64_t rwp_ticks(void)
{
#if defined(__x86_64__) && !defined(RW_SMPI)
    if (rwp.use_tsc)
        return (int64_t)__builtin_ia32_rdtsc();
#endif
    return rwp_now_ns();
}

int64_t rwp_ticks_to_ns(int64_t ticks) RWP_HIDDEN;

static inline void rwp_add64(int64_t *p, int64_t v)
{
    if (rwp.atomic)
        __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
    else
        *p += v;
}

static inline void rwp_lock(void)
{
    if (rwp.atomic)
        while (__atomic_test_and_set(&rwp.lock, __ATOMIC_ACQUIRE))
            ;
}

static inline void rwp_unlock(void)
{
    if (rwp.atomic)
        __atomic_clear(&rwp.lock, __ATOMIC_RELEASE);
}

/* Every wrapper: RWP_ENTER; rc = PMPI_...; record; RWP_LEAVE(class). */
#define RWP_ENTER                                                                                  \
    const int rwp_live_ = rwp.on;                                                                  \
    const int64_t rwp_t0_ = rwp_live_ ? rwp_ticks() : 0
#define RWP_LEAVE(cls)                                                                             \
    do {                                                                                           \
        if (rwp_live_)                                                                             \
            rwp_account((cls), rwp_t0_);                                                           \
    } while (0)

/* A collective wrapper: time the call, record its traffic if it succeeded. */
#define COLL_CALL(call, record)                                                                    \
    RWP_ENTER;                                                                                     \
    int rc = (call);                                                                               \
    RWP_LEAVE(RWP_COLL);                                                                           \
    if (rwp_live_ && rc == MPI_SUCCESS)                                                            \
        record;                                                                                    \
    return rc

static inline void rwp_account(int cls, int64_t t0)
{
    rwp_add64(&rwp.time_ticks[cls], rwp_ticks() - t0);
    rwp_add64(&rwp.calls[cls], 1);
}

/* -------------------------------------------------------------- traffic */

/* count elements of type t, in bytes (0 for an invalid type). */
static inline int64_t rwp_bytes(int64_t count, MPI_Datatype t)
{
    MPI_Count size = 0;
    if (count <= 0 || PMPI_Type_size_x(t, &size) != MPI_SUCCESS || size < 0)
        return 0;
    return count * (int64_t)size;
}

/* msgs messages of `bytes` bytes in total to world rank w (< 0: nowhere). */
static inline void rwp_send(int w, int64_t msgs, int64_t bytes, int kind)
{
    if (w < 0 || !rwp.on)
        return;
    rwp_add64(&rwp.msgs[w], msgs);
    rwp_add64(&rwp.bytes[w], bytes);
    rwp_add64(&rwp.kind_msgs[kind], msgs);
    rwp_add64(&rwp.kind_bytes[kind], bytes);
}

/* -------------------------------------------------- communicators (comms.c) */

rwp_comm *rwp_comm_build(MPI_Comm comm) RWP_HIDDEN;

/* The entry of comm, built at its first use; NULL if MPI refused. */
static inline rwp_comm *rwp_comm_of(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return &rwp.world;
    void *value = NULL;
    int found = 0;
    if (PMPI_Comm_get_attr(comm, rwp.keyval, &value, &found) != MPI_SUCCESS)
        return NULL;
    return found ? (rwp_comm *)value : rwp_comm_build(comm);
}

static inline int rwp_world_of(const rwp_comm *c, int r)
{
    return c->local ? c->local[r] : r;
}

/* Point-to-point destination `dest` of comm as a world rank (-1 for
 * MPI_PROC_NULL or a rank out of range). */
static inline int rwp_dest(MPI_Comm comm, int dest)
{
    if (dest < 0)
        return -1;
    if (comm == MPI_COMM_WORLD)
        return dest < rwp.world_size ? dest : -1;
    rwp_comm *c = rwp_comm_of(comm);
    if (!c)
        return -1;
    if (c->remote_size)
        return dest < c->remote_size ? c->remote[dest] : -1;
    return dest < c->size ? rwp_world_of(c, dest) : -1;
}

/* Collective traffic of one rank to every other member of c alike. */
static inline void rwp_send_uniform(rwp_comm *c, int64_t msgs, int64_t bytes)
{
    if (!rwp.on || (msgs == 0 && bytes == 0) || c->size < 2)
        return;
    rwp_add64(&c->u_msgs, msgs);
    rwp_add64(&c->u_bytes, bytes);
    rwp_add64(&rwp.kind_msgs[RWP_KIND_COLL], msgs * (c->size - 1));
    rwp_add64(&rwp.kind_bytes[RWP_KIND_COLL], bytes * (c->size - 1));
}

/* One logical collective message of `bytes` to rank r of c (none when
 * empty, and none to oneself). */
static inline void rwp_send_coll(const rwp_comm *c, int r, int64_t bytes)
{
    if (bytes > 0 && r != c->rank && r >= 0 && r < c->size)
        rwp_send(rwp_world_of(c, r), 1, bytes, RWP_KIND_COLL);
}

/* Expand the uniform traffic of c (or of every entry) into the row. */
void rwp_comm_flush(rwp_comm *c) RWP_HIDDEN;
void rwp_comm_flush_all(void) RWP_HIDDEN;
void rwp_comm_clear_all(void) RWP_HIDDEN;
int rwp_comm_setup(void) RWP_HIDDEN;

/* Out-neighbours of a topology communicator (neighbours.c); NULL when it
 * has none or MPI refused. */
rwp_comm *rwp_comm_with_neighbours(MPI_Comm comm) RWP_HIDDEN;

/* ------------------------------------- collective call groups (collective_calls.c) */

/* One group: `calls` calls of op with this root and size on the
 * communicator whose members are lists[members] (-1: the world). */
typedef struct rwp_group {
    int32_t members; /* -2: empty slot */
    int32_t op, root;
    int64_t bytes, calls;
} rwp_group;

typedef struct rwp_list {
    int size;
    int *ranks; /* world rank of each member */
} rwp_list;

/* Count one call of op (an rw_coll_op) on c, whose rank 0 calls this. */
void rwp_coll_count(rwp_comm *c, int op, int root, int64_t bytes) RWP_HIDDEN;
void rwp_coll_clear(void) RWP_HIDDEN;
void rwp_coll_free(void) RWP_HIDDEN;
/* This rank's groups as int64 words (rwp_coll_pack, *n words, malloc'ed;
 * NULL and *n = -1 when out of memory), and rank 0's decoding of every
 * rank's words into m (rwp_coll_unpack). */
int64_t *rwp_coll_pack(int64_t *n) RWP_HIDDEN;
rw_status rwp_coll_unpack(rw_matrix *m, int n_ranks, const int64_t *words, const int *counts) RWP_HIDDEN;

/* ------------------------------------------ persistent requests (tables.c) */

void rwp_persistent_add(MPI_Request req, int world_dest, int64_t bytes) RWP_HIDDEN;
void rwp_persistent_start(MPI_Request req) RWP_HIDDEN;
void rwp_persistent_remove(MPI_Request req) RWP_HIDDEN;
void rwp_persistent_clear(void) RWP_HIDDEN;

/* -------------------------------------------------- lifecycle and output */

void rwp_setup(int argc, char **argv, int thread_level) RWP_HIDDEN;
void rwp_finish(void) RWP_HIDDEN;
void rwp_teardown(void) RWP_HIDDEN;
void rwp_reset_counts(void) RWP_HIDDEN;
/* Collective over MPI_COMM_WORLD: gather and write (output.c). */
rw_status rwp_write(const char *path) RWP_HIDDEN;
/* Where the matrix goes: path, else $RANKWISE_PROFILE_OUT, else the default. */
const char *rwp_output_path(const char *path) RWP_HIDDEN;

#endif
