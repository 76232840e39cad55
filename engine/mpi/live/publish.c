/* A context's model for the collectives' decisions (coll.h's model
 * generation). */
#include "coll.h"
#include "decision/decision.h"
#include "live.h"

uint64_t rw_live_generation(void)
{
    return rwc_model_generation();
}

void live_publish(const rw_live *ctx)
{
    rwc_model_publish(ctx->model, ctx);
}

void live_withdraw(const rw_live *ctx)
{
    rwc_model_withdraw(ctx);
}
