/* The protocol knee in the predictor: a message of at least `knee` bytes
 * travels with the MPI library's large-message protocol (rendezvous), so
 * it costs the pair's large-message fit (alpha_large, beta_large) rather
 * than the eager fit below the knee (model format 2, "Structure"). */
#include "predict_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

rw_status rw_pnet_set_protocol(rw_pnet *net, int64_t knee, const double *alpha_large,
                               const double *beta_large)
{
    if (!net)
        return rw_fail(RW_ERR_ARG, "rw_pnet_set_protocol: net is NULL");
    if (knee < 0)
        return rw_fail(RW_ERR_ARG, "network: protocol knee %lld bytes (>= 0 needed)", (long long)knee);
    size_t nn = (size_t)net->n * (size_t)net->n;
    double *a = NULL, *b = NULL;
    if (knee > 0 && alpha_large && beta_large) {
        for (size_t p = 0; p < nn; p++) {
            int unknown = isnan(alpha_large[p]) && isnan(beta_large[p]);
            int known = isfinite(alpha_large[p]) && alpha_large[p] >= 0 && isfinite(beta_large[p]) &&
                        beta_large[p] >= 0;
            if (!unknown && !known)
                return rw_fail(RW_ERR_ARG,
                               "network: pair %zu -> %zu has large-message alpha %g, beta %g "
                               "(both finite and >= 0, or both NaN)",
                               p / (size_t)net->n, p % (size_t)net->n, alpha_large[p], beta_large[p]);
        }
        a = malloc(nn * sizeof *a);
        b = malloc(nn * sizeof *b);
        if (!a || !b) {
            free(a);
            free(b);
            return rw_fail(RW_ERR_NOMEM, "network: out of memory");
        }
        memcpy(a, alpha_large, nn * sizeof *a);
        memcpy(b, beta_large, nn * sizeof *b);
    }
    free(net->alpha_large);
    free(net->beta_large);
    net->alpha_large = a;
    net->beta_large = b;
    net->knee = a ? knee : 0;
    return RW_OK;
}

void rw_pnet_message_cost(const rw_pnet *net, int32_t a, int32_t b, double message_bytes,
                          double *alpha, double *beta)
{
    size_t p = (size_t)a * (size_t)net->n + (size_t)b;
    if (net->knee > 0 && message_bytes >= (double)net->knee && !isnan(net->alpha_large[p])) {
        *alpha = net->alpha_large[p];
        *beta = net->beta_large[p];
        return;
    }
    *alpha = net->alpha[p];
    *beta = net->beta[p];
}
