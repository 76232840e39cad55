/* The model generation the collectives' caches compare with (coll.h):
 * raised whenever a live context publishes new figures. One live model
 * per process is published for the collectives' decisions, the latest. */
#include "coll.h"
#include "live.h"

static uint64_t generation;
static const rw_live *published;

uint64_t rwc_model_generation(void)
{
    return generation;
}

uint64_t rw_live_generation(void)
{
    return generation;
}

const rw_model *rwc_live_model(void)
{
    return published ? published->model : NULL;
}

void live_publish(const rw_live *ctx)
{
    published = ctx;
    generation++;
}

void live_withdraw(const rw_live *ctx)
{
    if (published == ctx) {
        published = NULL;
        generation++;
    }
}
