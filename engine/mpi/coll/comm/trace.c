/* RANKWISE_COLL_TRACE=1: one line per handled call on stderr (rank 0 of
 * the call's communicator), shared by every layer. */
#include "coll.h"

#include <string.h>

static int trace = -1;

int rwc_tracing(void)
{
    if (trace < 0)
        trace = rwc_env_bool("RANKWISE_COLL_TRACE");
    return trace;
}

static const char *trace_src;

void rwc_trace_source(const char *source)
{
    trace_src = source && strcmp(source, "env") ? source : NULL;
}

static void trace_line(rw_coll_op op, const char *alg, MPI_Comm comm, size_t bytes)
{
    int rank = 0;
    if (!rwc_tracing() || PMPI_Comm_rank(comm, &rank) || rank != 0)
        return;
    if (trace_src)
        fprintf(stderr, "rankwise-coll: %s %s %zu bytes (%s)\n", rw_op_name(op), alg, bytes, trace_src);
    else
        fprintf(stderr, "rankwise-coll: %s %s %zu bytes\n", rw_op_name(op), alg, bytes);
}

void rwc_trace(rw_coll_op op, rw_coll_alg alg, MPI_Comm comm, size_t bytes)
{
    trace_line(op, rw_coll_alg_name(alg), comm, bytes);
}

void rwc_trace_choice(rw_coll_op op, const rwc_choice *ch, MPI_Comm comm, size_t bytes)
{
    trace_line(op, ch->tree ? "tree" : rw_coll_alg_name(ch->alg), comm, bytes);
}
