/* rankwise — inside the node: the structure of a compute node (packages,
 * NUMA memory domains, shared caches, cores, PUs) read with hwloc, and the
 * placement of a node's ranks on its cores so that the pairs that exchange
 * most share a domain.
 *
 * Cui et al. 2020, §4 ①, describe the inside of a node by the distances
 * between its memories; Getmansky et al. 2015 map onto the cores of
 * multi-socket nodes, where shared memory and the network differ by a
 * factor of two or more. This header is the level below rankwise_map.h:
 * rw_map chooses each rank's node, rw_node_place its core there.
 *
 * MPI-free. Like the rest of the engine, functions return an rw_status,
 * leave a one-line message in rw_last_error() and never exit.
 */
#ifndef RANKWISE_NODE_H
#define RANKWISE_NODE_H

#include "rankwise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Cores a topology may hold: beyond any node built today. */
#define RW_NODE_MAX_CORES 65536

/* A GPU or coprocessor of the node (an hwloc OS device), with where it
 * attaches: the package and NUMA domain whose cores are closest to it. */
typedef struct rw_node_device {
    char name[64];   /* the OS device's name: cuda0, card0, opencl0d0, mic0, ... */
    char kind[16];   /* "gpu" or "coproc" */
    char pci[32];    /* its PCI bus id (0000:3b:00.0), "" when none */
    int32_t package; /* logical index, -1 when it hangs off the whole machine */
    int32_t domain;  /* logical index, -1 when no one domain is local to it */
} rw_node_device;

/* What a node looks like, by core. Cores are numbered by hwloc's logical
 * index (tree order: package by package, domain by domain); every array
 * indexed by core has n_cores entries. */
typedef struct rw_node_topology {
    int32_t n_packages; /* >= 1 (a machine that reports none counts as one) */
    int32_t n_domains;  /* NUMA memory domains, >= 1 */
    int32_t n_caches;   /* caches shared by more than one core (see cache_of) */
    int32_t n_cores;
    int32_t n_pus;       /* hardware threads */
    int32_t *package_of; /* core -> package (logical index) */
    int32_t *domain_of;  /* core -> NUMA domain (logical index) whose local memory it uses */
    int32_t *cache_of;   /* core -> the closest cache it shares with other cores, -1 none */
    int32_t *core_in_package; /* core -> its rank among its package's cores (Open MPI slot=P:C) */
    int32_t *cpu_of;     /* core -> OS index of its first PU (what launchers bind to) */
    int32_t *pus_of;     /* core -> hardware threads on it */
    int32_t *cache_level; /* shared cache -> level (2 for L2, 3 for L3, ...) */
    int32_t *cache_cores; /* shared cache -> cores sharing it */
    int64_t *cache_bytes; /* shared cache -> size in bytes (0 unknown) */
    int64_t *domain_bytes; /* domain -> local memory in bytes (0 unknown) */
    char source[256];    /* "this machine", "synthetic: ...", or the XML file */
    int32_t n_devices;   /* GPUs and coprocessors, one per PCI device (hwloc I/O
                            discovery: this machine or an XML export holding it) */
    rw_node_device *devices;
} rw_node_topology;

/* Read a topology: from the synthetic description `synthetic` (hwloc's
 * HWLOC_SYNTHETIC syntax, e.g. "pack:2 numa:2 core:4 pu:1") when not NULL,
 * else from the hwloc XML file `xml_path` (lstopo --of xml) when not NULL,
 * else from the machine this runs on. Errors: RW_ERR_ARG a synthetic
 * description hwloc refuses; RW_ERR_IO an XML file that cannot be opened;
 * RW_ERR_PARSE one hwloc cannot read; RW_ERR_STATE a build without hwloc.
 * Free with rw_node_topology_free. */
RW_API rw_status rw_node_topology_load(const char *synthetic, const char *xml_path, rw_node_topology **out);
RW_API void rw_node_topology_free(rw_node_topology *t);

/* Write the topology read as rw_node_topology_load reads it (same three
 * sources) to the hwloc XML file out_path, which lstopo and
 * rw_node_topology_load read back: how a compute node's structure reaches
 * the machine that maps. out_path is written whole or not at all. */
RW_API rw_status rw_node_topology_export(const char *synthetic, const char *xml_path, const char *out_path);

/* What two cores share, closest first: a cache, a NUMA domain, a package,
 * or only the node (different packages). */
typedef enum rw_node_level {
    RW_LEVEL_CACHE = 0,
    RW_LEVEL_DOMAIN = 1,
    RW_LEVEL_PACKAGE = 2,
    RW_LEVEL_NODE = 3,
    RW_NODE_LEVELS = 4
} rw_node_level;

/* "cache", "domain", "package", "node" (NULL out of range) and back (-1). */
RW_API const char *rw_node_level_name(int level);
RW_API int rw_node_level_from_name(const char *name);

/* The level cores a and b share (a == b counts as RW_LEVEL_CACHE); -1
 * when either is out of range. Different packages give RW_LEVEL_NODE even
 * when a domain spans them: crossing sockets is what costs. */
RW_API int rw_node_core_level(const rw_node_topology *t, int32_t a, int32_t b);

/* Cost of a message between two ranks of one node by the level their cores
 * share: alpha[level] + bytes * beta[level] (seconds, seconds per byte),
 * non-decreasing from cache to node. */
typedef struct rw_node_costs {
    double alpha[RW_NODE_LEVELS];
    double beta[RW_NODE_LEVELS];
} rw_node_costs;

/* Typical shared-memory figures of a two-socket server (about 0.3-1 us and
 * 20-5 GB/s from cache to across sockets): what the mapper uses when the
 * model holds no measured figures for the inside of the node. */
RW_API rw_node_costs rw_node_costs_default(void);

/* RW_OK when the table is finite, >= 0 and non-decreasing by level. */
RW_API rw_status rw_node_costs_check(const rw_node_costs *c);

/* Place the n ranks ranks[0..n) of traffic, all on one node of topology t,
 * on distinct cores: core_of[k] receives the core (logical index) of
 * ranks[k]. The node is split as its tree is (packages, then domains,
 * then shared caches), each split a partition of the ranks that keeps the
 * heavy pairs together (graph growing from several seeds, then swaps),
 * and the whole is refined by swaps and moves on the cost table c (NULL:
 * the default). Ranks fill as few packages and domains as they can.
 * Deterministic. Refused (RW_ERR_ARG): n > t->n_cores, a rank out of
 * range or given twice, a bad cost table. */
RW_API rw_status rw_node_place(const rw_matrix *traffic, int32_t n, const int32_t *ranks,
                               const rw_node_topology *t, const rw_node_costs *c, int32_t *core_of);

/* Cost of a placement of ranks[0..n) on cores core_of[0..n) under c
 * (NULL: the default): sum over ordered rank pairs of msgs * alpha[level]
 * + bytes * beta[level]. */
RW_API rw_status rw_node_place_cost(const rw_matrix *traffic, int32_t n, const int32_t *ranks,
                                    const rw_node_topology *t, const rw_node_costs *c,
                                    const int32_t *core_of, double *cost);

/* Bytes exchanged (both directions) between ranks of ranks[0..n) whose
 * cores lie in different NUMA domains (level RW_LEVEL_PACKAGE or above) —
 * the domain cut — and the bytes between all of them. */
RW_API rw_status rw_node_domain_cut(const rw_matrix *traffic, int32_t n, const int32_t *ranks,
                                    const rw_node_topology *t, const int32_t *core_of, int64_t *cut,
                                    int64_t *total);

#ifdef __cplusplus
}
#endif
#endif /* RANKWISE_NODE_H */
