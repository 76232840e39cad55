/* Message buffers of the probe's timed transfers (payload.h). */
#include "payload.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

char *rw_payload_alloc(size_t bytes)
{
#ifdef RW_SMPI
    return SMPI_SHARED_MALLOC(bytes);
#else
    char *b = malloc(bytes);
    if (b)
        memset(b, 1, bytes);
    return b;
#endif
}

void rw_payload_free(char *b)
{
#ifdef RW_SMPI
    if (b)
        SMPI_SHARED_FREE(b);
#else
    free(b);
#endif
}
