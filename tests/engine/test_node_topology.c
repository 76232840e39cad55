/* rw_node_topology_load: synthetic descriptions flattened by core, the
 * level two cores share, and every bad input refused with its cause. */
#include <stdio.h>
#include <string.h>

#include "rankwise_node.h"
#include "check.h"

static void two_packages_four_domains(void)
{
    rw_node_topology *t = NULL;
    CHECK(rw_node_topology_load("pack:2 numa:2 core:4 pu:2", NULL, &t) == RW_OK);
    if (!t)
        return;
    CHECK(t->n_packages == 2);
    CHECK(t->n_domains == 4);
    CHECK(t->n_cores == 16);
    CHECK(t->n_pus == 32);
    for (int c = 0; c < 16; c++) {
        CHECK(t->package_of[c] == c / 8);
        CHECK(t->domain_of[c] == c / 4);
        CHECK(t->core_in_package[c] == c % 8);
        CHECK(t->pus_of[c] == 2);
        CHECK(t->cpu_of[c] == 2 * c); /* the first PU of each core */
    }
    CHECK(rw_node_core_level(t, 0, 1) == RW_LEVEL_DOMAIN); /* no shared cache described */
    CHECK(rw_node_core_level(t, 0, 4) == RW_LEVEL_PACKAGE);
    CHECK(rw_node_core_level(t, 0, 8) == RW_LEVEL_NODE);
    CHECK(rw_node_core_level(t, 3, 3) == RW_LEVEL_CACHE);
    CHECK(rw_node_core_level(t, 0, 16) == -1);
    CHECK(strstr(t->source, "synthetic") != NULL);
    rw_node_topology_free(t);
}

static void shared_caches(void)
{
    rw_node_topology *t = NULL;
    CHECK(rw_node_topology_load("pack:2 numa:2 l3:2 core:2 pu:1", NULL, &t) == RW_OK);
    if (!t)
        return;
    CHECK(t->n_cores == 16);
    CHECK(t->n_caches == 8);
    for (int k = 0; k < t->n_caches; k++) {
        CHECK(t->cache_cores[k] == 2);
        CHECK(t->cache_level[k] == 3);
    }
    CHECK(rw_node_core_level(t, 0, 1) == RW_LEVEL_CACHE);
    CHECK(rw_node_core_level(t, 0, 2) == RW_LEVEL_DOMAIN);
    CHECK(rw_node_core_level(t, 0, 4) == RW_LEVEL_PACKAGE);
    rw_node_topology_free(t);
}

static void this_machine(void)
{
    rw_node_topology *t = NULL;
    CHECK(rw_node_topology_load(NULL, NULL, &t) == RW_OK);
    if (!t)
        return;
    CHECK(t->n_cores >= 1 && t->n_pus >= t->n_cores);
    CHECK(t->n_packages >= 1 && t->n_domains >= 1);
    CHECK(strcmp(t->source, "this machine") == 0);
    rw_node_topology_free(t);
}

static void bad_inputs(void)
{
    rw_node_topology *t = (rw_node_topology *)1;
    CHECK(rw_node_topology_load("pack:2 banana:3", NULL, &t) == RW_ERR_ARG);
    CHECK(t == NULL);
    CHECK(strstr(rw_last_error(), "banana") != NULL);

    CHECK(rw_node_topology_load(NULL, "/nonexistent/node.xml", &t) == RW_ERR_IO);
    CHECK(strstr(rw_last_error(), "/nonexistent/node.xml") != NULL);

    const char *path = "test_node_topology_bad.xml";
    FILE *f = fopen(path, "w");
    fputs("<?xml version=\"1.0\"?>\n<topology><object type=\"Banana\"", f);
    fclose(f);
    CHECK(rw_node_topology_load(NULL, path, &t) == RW_ERR_PARSE);
    CHECK(t == NULL);
    CHECK(strstr(rw_last_error(), path) != NULL);
    remove(path);
}

/* The XML written for a synthetic node reads back as the same node. */
static void xml_round_trip(void)
{
    const char *path = "test_node_topology_rt.xml";
    CHECK(rw_node_topology_export("pack:2 numa:2 l3:2 core:2 pu:1", NULL, path) == RW_OK);
    rw_node_topology *a = NULL, *b = NULL;
    CHECK(rw_node_topology_load("pack:2 numa:2 l3:2 core:2 pu:1", NULL, &a) == RW_OK);
    CHECK(rw_node_topology_load(NULL, path, &b) == RW_OK);
    if (a && b) {
        CHECK(b->n_cores == a->n_cores && b->n_domains == a->n_domains && b->n_caches == a->n_caches);
        for (int c = 0; c < a->n_cores; c++) {
            CHECK(a->package_of[c] == b->package_of[c]);
            CHECK(a->domain_of[c] == b->domain_of[c]);
            CHECK(a->cache_of[c] == b->cache_of[c]);
            CHECK(a->cpu_of[c] == b->cpu_of[c]);
        }
        CHECK(strcmp(b->source, path) == 0);
    }
    rw_node_topology_free(a);
    rw_node_topology_free(b);
    remove(path);
    CHECK(rw_node_topology_export("pack:2 banana", NULL, path) == RW_ERR_ARG);
    FILE *f = fopen(path, "r");
    CHECK(f == NULL); /* nothing written on failure */
    if (f)
        fclose(f);
}

int main(void)
{
    xml_round_trip();
    two_packages_four_domains();
    shared_caches();
    this_machine();
    bad_inputs();
    CHECK(strcmp(rw_node_level_name(RW_LEVEL_PACKAGE), "package") == 0);
    CHECK(rw_node_level_from_name("domain") == RW_LEVEL_DOMAIN);
    CHECK(rw_node_level_from_name("socket") == -1);
    CHECK_DONE();
}
