/* The model generation the decisions' cache compares with (coll.h),
 * raised whenever a live model (engine/mpi/live/) is published or
 * withdrawn; one live model per process is published, the latest. Here,
 * so that the collectives build without the live code's objects. */
#include "coll.h"

static uint64_t generation;
static const rw_model *published;
static const void *owner;

uint64_t rwc_model_generation(void)
{
    return generation;
}

const rw_model *rwc_live_model(void)
{
    return published;
}

void rwc_model_publish(const rw_model *m, const void *who)
{
    published = m;
    owner = who;
    generation++;
}

void rwc_model_withdraw(const void *who)
{
    if (owner == who && published) {
        published = NULL;
        owner = NULL;
        generation++;
    }
}
