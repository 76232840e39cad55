/* A node's structure read with hwloc's C API: packages, NUMA domains,
 * shared caches, cores and PUs, flattened into arrays by core so that the
 * placement code (place.c) and the bindings never see an hwloc object;
 * and the GPUs and coprocessors with the package and domain they attach to. */
#include "../internal.h"
#include "rankwise_node.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef RW_HAVE_HWLOC
#include <hwloc.h>
#endif

void rw_node_topology_free(rw_node_topology *t)
{
    if (!t)
        return;
    free(t->package_of);
    free(t->domain_of);
    free(t->cache_of);
    free(t->core_in_package);
    free(t->cpu_of);
    free(t->pus_of);
    free(t->cache_level);
    free(t->cache_cores);
    free(t->cache_bytes);
    free(t->domain_bytes);
    free(t->devices);
    free(t);
}

static const char *LEVEL_NAMES[RW_NODE_LEVELS] = {"cache", "domain", "package", "node"};

const char *rw_node_level_name(int level)
{
    return level >= 0 && level < RW_NODE_LEVELS ? LEVEL_NAMES[level] : NULL;
}

int rw_node_level_from_name(const char *name)
{
    for (int i = 0; name && i < RW_NODE_LEVELS; i++)
        if (strcmp(name, LEVEL_NAMES[i]) == 0)
            return i;
    return -1;
}

int rw_node_core_level(const rw_node_topology *t, int32_t a, int32_t b)
{
    if (!t || a < 0 || b < 0 || a >= t->n_cores || b >= t->n_cores)
        return -1;
    if (a == b)
        return RW_LEVEL_CACHE;
    if (t->package_of[a] != t->package_of[b])
        return RW_LEVEL_NODE;
    if (t->domain_of[a] != t->domain_of[b])
        return RW_LEVEL_PACKAGE;
    if (t->cache_of[a] < 0 || t->cache_of[a] != t->cache_of[b])
        return RW_LEVEL_DOMAIN;
    return RW_LEVEL_CACHE;
}

#ifndef RW_HAVE_HWLOC

static rw_status no_hwloc(void)
{
    return rw_fail(RW_ERR_STATE, "this rankwise was built without hwloc: install it (Debian: "
                                 "libhwloc-dev) and rebuild to read a node's structure");
}

rw_status rw_node_topology_load(const char *synthetic, const char *xml_path, rw_node_topology **out)
{
    if (out)
        *out = NULL;
    return no_hwloc();
}

rw_status rw_node_topology_export(const char *synthetic, const char *xml_path, const char *out_path)
{
    return no_hwloc();
}

#else

static rw_status alloc_arrays(rw_node_topology *t, int32_t n_cores, int32_t n_caches, int32_t n_domains)
{
    size_t c = (size_t)n_cores, k = (size_t)(n_caches > 0 ? n_caches : 1);
    t->package_of = calloc(c, sizeof(int32_t));
    t->domain_of = calloc(c, sizeof(int32_t));
    t->cache_of = calloc(c, sizeof(int32_t));
    t->core_in_package = calloc(c, sizeof(int32_t));
    t->cpu_of = calloc(c, sizeof(int32_t));
    t->pus_of = calloc(c, sizeof(int32_t));
    t->cache_level = calloc(k, sizeof(int32_t));
    t->cache_cores = calloc(k, sizeof(int32_t));
    t->cache_bytes = calloc(k, sizeof(int64_t));
    t->domain_bytes = calloc((size_t)n_domains, sizeof(int64_t));
    if (!t->package_of || !t->domain_of || !t->cache_of || !t->core_in_package || !t->cpu_of ||
        !t->pus_of || !t->cache_level || !t->cache_cores || !t->cache_bytes || !t->domain_bytes)
        return rw_fail(RW_ERR_NOMEM, "out of memory reading a topology of %d cores", (int)n_cores);
    return RW_OK;
}

/* Cores as hwloc reports them; a machine that reports no core (some
 * virtual machines, some XML exports) gets one core per PU. */
static hwloc_obj_type_t core_type(hwloc_topology_t h)
{
    return hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
}

/* The closest cache above `core` shared with another core, or NULL. */
static hwloc_obj_t shared_cache(hwloc_obj_t core)
{
    for (hwloc_obj_t o = core->parent; o; o = o->parent) {
        if (hwloc_obj_type_is_cache(o->type) && o->cpuset && o->cpuset != core->cpuset &&
            !hwloc_bitmap_isequal(o->cpuset, core->cpuset))
            return o;
        if (!hwloc_obj_type_is_cache(o->type) && o->type != HWLOC_OBJ_GROUP &&
            o->type != HWLOC_OBJ_DIE)
            return NULL; /* a cache above the package or machine is not "shared" */
    }
    return NULL;
}

static rw_status flatten(hwloc_topology_t h, rw_node_topology *t)
{
    hwloc_obj_type_t ct = core_type(h);
    int n_cores = hwloc_get_nbobjs_by_type(h, ct);
    int n_pkg = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PACKAGE);
    int n_numa = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE);
    int n_pus = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU);
    if (n_cores <= 0 || n_pus <= 0)
        return rw_fail(RW_ERR_PARSE, "the topology holds no core");
    if (n_cores > RW_NODE_MAX_CORES)
        return rw_fail(RW_ERR_ARG, "the topology holds %d cores, more than %d", n_cores,
                       RW_NODE_MAX_CORES);
    t->n_cores = n_cores;
    t->n_pus = n_pus;
    t->n_packages = n_pkg > 0 ? n_pkg : 1;
    t->n_domains = n_numa > 0 ? n_numa : 1;

    /* Shared caches, numbered in order of first appearance by core. */
    hwloc_obj_t *caches = calloc((size_t)n_cores, sizeof *caches);
    if (!caches)
        return rw_fail(RW_ERR_NOMEM, "out of memory reading a topology");
    int n_caches = 0;
    for (int c = 0; c < n_cores; c++) {
        hwloc_obj_t sc = shared_cache(hwloc_get_obj_by_type(h, ct, (unsigned)c));
        int k = 0;
        while (sc && k < n_caches && caches[k] != sc)
            k++;
        if (sc && k == n_caches)
            caches[n_caches++] = sc;
    }
    rw_status st = alloc_arrays(t, n_cores, n_caches, t->n_domains);
    if (st != RW_OK) {
        free(caches);
        return st;
    }
    t->n_caches = n_caches;
    for (int k = 0; k < n_caches; k++) {
        t->cache_level[k] = (int32_t)caches[k]->attr->cache.depth;
        t->cache_bytes[k] = (int64_t)caches[k]->attr->cache.size;
    }
    for (int d = 0; d < n_numa; d++) {
        hwloc_obj_t numa = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, (unsigned)d);
        t->domain_bytes[d] = (int64_t)numa->attr->numanode.local_memory;
    }

    int32_t *in_pkg = calloc((size_t)t->n_packages, sizeof(int32_t));
    if (!in_pkg) {
        free(caches);
        return rw_fail(RW_ERR_NOMEM, "out of memory reading a topology");
    }
    for (int c = 0; c < n_cores; c++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(h, ct, (unsigned)c);
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_PACKAGE, core);
        int p = pkg ? (int)pkg->logical_index : 0;
        t->package_of[c] = p;
        t->core_in_package[c] = in_pkg[p]++;
        /* The domain whose CPUs include the core's: its local memory. */
        t->domain_of[c] = 0;
        for (int d = 0; d < n_numa; d++) {
            hwloc_obj_t numa = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, (unsigned)d);
            if (numa->cpuset && hwloc_bitmap_isincluded(core->cpuset, numa->cpuset)) {
                t->domain_of[c] = d;
                break;
            }
        }
        hwloc_obj_t sc = shared_cache(core);
        t->cache_of[c] = -1;
        for (int k = 0; sc && k < n_caches; k++)
            if (caches[k] == sc) {
                t->cache_of[c] = k;
                t->cache_cores[k]++;
            }
        t->pus_of[c] = hwloc_get_nbobjs_inside_cpuset_by_type(h, core->cpuset, HWLOC_OBJ_PU);
        hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(h, core->cpuset, HWLOC_OBJ_PU, 0);
        t->cpu_of[c] = pu ? (int32_t)pu->os_index : c;
    }
    free(in_pkg);
    free(caches);
    return RW_OK;
}

/* The OS device's kind: "gpu", "coproc", or NULL for the others. */
static const char *device_kind(hwloc_obj_t o)
{
    if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU)
        return "gpu";
    if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC)
        return "coproc";
    return NULL;
}

static hwloc_obj_t pci_parent(hwloc_obj_t o)
{
    while (o && o->type != HWLOC_OBJ_PCI_DEVICE)
        o = o->parent;
    return o;
}

/* Where the device attaches: the package and the NUMA domain of its
 * closest non-I/O ancestor; -1 where that spans several. */
static void device_locality(hwloc_topology_t h, hwloc_obj_t o, rw_node_device *d)
{
    int n_pkg = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PACKAGE), n_numa = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE);
    d->package = n_pkg <= 1 ? 0 : -1;
    d->domain = n_numa <= 1 ? 0 : -1;
    hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(h, o);
    if (!a || !a->cpuset)
        return;
    hwloc_obj_t pkg = a->type == HWLOC_OBJ_PACKAGE ? a : hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_PACKAGE, a);
    if (pkg && n_pkg > 1)
        d->package = (int32_t)pkg->logical_index;
    int found = -1, count = 0;
    for (int k = 0; k < n_numa; k++) {
        hwloc_obj_t numa = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, (unsigned)k);
        if (numa->cpuset && hwloc_bitmap_intersects(numa->cpuset, a->cpuset)) {
            found = k;
            count++;
        }
    }
    if (n_numa > 1 && count == 1)
        d->domain = found;
}

/* The GPUs and coprocessors, one per PCI device (a GPU shows as several OS
 * devices: card0, renderD128, cuda0, nvml0, ...; the first names it). */
static rw_status read_devices(hwloc_topology_t h, rw_node_topology *t)
{
    int n = 0;
    for (hwloc_obj_t o = hwloc_get_next_osdev(h, NULL); o; o = hwloc_get_next_osdev(h, o))
        n += device_kind(o) != NULL;
    if (n == 0)
        return RW_OK;
    hwloc_obj_t *seen = calloc((size_t)n, sizeof *seen);
    t->devices = calloc((size_t)n, sizeof *t->devices);
    if (!seen || !t->devices) {
        free(seen);
        return rw_fail(RW_ERR_NOMEM, "out of memory reading a topology's devices");
    }
    for (hwloc_obj_t o = hwloc_get_next_osdev(h, NULL); o; o = hwloc_get_next_osdev(h, o)) {
        const char *kind = device_kind(o);
        if (!kind)
            continue;
        hwloc_obj_t pci = pci_parent(o);
        int dup = 0;
        for (int k = 0; pci && k < t->n_devices; k++)
            dup |= seen[k] == pci;
        if (dup)
            continue;
        rw_node_device *d = &t->devices[t->n_devices];
        seen[t->n_devices++] = pci;
        snprintf(d->name, sizeof d->name, "%s", o->name ? o->name : "?");
        snprintf(d->kind, sizeof d->kind, "%s", kind);
        if (pci)
            snprintf(d->pci, sizeof d->pci, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
                     pci->attr->pcidev.dev, pci->attr->pcidev.func);
        device_locality(h, o, d);
    }
    free(seen);
    return RW_OK;
}

/* An hwloc topology loaded from one of the three sources. */
static rw_status open_hwloc(const char *synthetic, const char *xml_path, hwloc_topology_t *out)
{
    if (xml_path && !synthetic) {
        /* hwloc says only "failed"; open it first to name the real cause. */
        rw_status st;
        FILE *f = rw_open_text(xml_path, &st);
        if (!f)
            return st;
        fclose(f);
    }
    hwloc_topology_t h;
    if (hwloc_topology_init(&h) != 0)
        return rw_fail(RW_ERR_NOMEM, "hwloc could not start: %s", strerror(errno));
    rw_status st = RW_OK;
    if (synthetic) {
        if (hwloc_topology_set_synthetic(h, synthetic) != 0)
            st = rw_fail(RW_ERR_ARG,
                         "synthetic topology '%s' is not valid (hwloc syntax, e.g. "
                         "'pack:2 numa:2 core:4 pu:1')",
                         synthetic);
    } else if (xml_path) {
        /* GPUs and coprocessors, where the file or the machine has them */
        hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
        if (hwloc_topology_set_xml(h, xml_path) != 0)
            st = rw_fail(RW_ERR_PARSE, "%s: not a topology hwloc can read (hwloc XML, lstopo --of xml)",
                         xml_path);
    } else {
        hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    }
    if (st == RW_OK && hwloc_topology_load(h) != 0)
        st = xml_path && !synthetic
                 ? rw_fail(RW_ERR_PARSE, "%s: not a topology hwloc can read (hwloc XML, lstopo --of xml)",
                           xml_path)
                 : rw_fail(RW_ERR_STATE, "hwloc could not read this machine's topology: %s",
                           strerror(errno));
    if (st != RW_OK) {
        hwloc_topology_destroy(h);
        return st;
    }
    *out = h;
    return RW_OK;
}

rw_status rw_node_topology_load(const char *synthetic, const char *xml_path, rw_node_topology **out)
{
    if (!out)
        return rw_fail(RW_ERR_ARG, "rw_node_topology_load: no output");
    *out = NULL;
    hwloc_topology_t h;
    rw_status st = open_hwloc(synthetic, xml_path, &h);
    if (st != RW_OK)
        return st;
    rw_node_topology *t = calloc(1, sizeof *t);
    st = t ? flatten(h, t) : rw_fail(RW_ERR_NOMEM, "out of memory reading a topology");
    if (st == RW_OK)
        st = read_devices(h, t);
    if (st == RW_OK && synthetic)
        snprintf(t->source, sizeof t->source, "synthetic: %s", synthetic);
    else if (st == RW_OK && xml_path)
        snprintf(t->source, sizeof t->source, "%s", xml_path);
    else if (st == RW_OK)
        snprintf(t->source, sizeof t->source, "this machine");
    hwloc_topology_destroy(h);
    if (st != RW_OK) {
        rw_node_topology_free(t);
        return st;
    }
    *out = t;
    return RW_OK;
}

typedef struct xml_buffer {
    const char *text;
    int len;
} xml_buffer;

static int write_xml(const void *obj, FILE *f)
{
    const xml_buffer *b = obj;
    return fwrite(b->text, 1, (size_t)b->len, f) == (size_t)b->len ? 0 : -1;
}

rw_status rw_node_topology_export(const char *synthetic, const char *xml_path, const char *out_path)
{
    if (!out_path || !out_path[0])
        return rw_fail(RW_ERR_ARG, "rw_node_topology_export: no output file");
    hwloc_topology_t h;
    rw_status st = open_hwloc(synthetic, xml_path, &h);
    if (st != RW_OK)
        return st;
    xml_buffer b = {NULL, 0};
    char *text = NULL;
    if (hwloc_topology_export_xmlbuffer(h, &text, &b.len, 0) != 0) {
        st = rw_fail(RW_ERR_STATE, "hwloc could not write the topology as XML: %s", strerror(errno));
    } else {
        b.text = text;
        /* hwloc counts the final NUL in the length; the file ends before it. */
        if (b.len > 0 && text[b.len - 1] == '\0')
            b.len--;
        st = rw_write_atomic(out_path, write_xml, &b);
        hwloc_free_xmlbuffer(h, text);
    }
    hwloc_topology_destroy(h);
    return st;
}

#endif /* RW_HAVE_HWLOC */
