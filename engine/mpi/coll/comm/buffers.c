/* Typed buffers as bytes, temporary typed buffers, typed copies. */
#include "coll.h"
#include "internal.h"

#include <stdlib.h>

static _Thread_local int last_code = MPI_ERR_OTHER;

int rwc_mpi_code(void)
{
    return last_code;
}

rw_status rwc_mpi(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return RW_OK;
    last_code = rc;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (PMPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        len = 0;
    text[len] = '\0';
    return rw_fail(RW_ERR_MPI, "%s failed: %s", what, len ? text : "MPI error");
}

rw_status rwc_type_bytes(int count, MPI_Datatype type, size_t *out)
{
    int size = 0;
    rw_status st = rwc_mpi(PMPI_Type_size(type, &size), "MPI_Type_size");
    *out = st ? 0 : (size_t)count * (size_t)size;
    return st;
}

/* A predefined type whose elements abut with no gap: its bytes in memory
 * are its bytes in pack order. Derived types are packed even when dense,
 * since their type map may list the bytes in another order. */
static int dense_predefined(MPI_Datatype type)
{
    int ni, na, nt, combiner, size;
    MPI_Aint lb, extent, tlb, textent;
    if (PMPI_Type_get_envelope(type, &ni, &na, &nt, &combiner) != MPI_SUCCESS || combiner != MPI_COMBINER_NAMED)
        return 0;
    if (PMPI_Type_size(type, &size) || PMPI_Type_get_extent(type, &lb, &extent) ||
        PMPI_Type_get_true_extent(type, &tlb, &textent))
        return 0;
    return lb == 0 && tlb == 0 && extent == size && textent == size;
}

rw_status rwc_bytes_open(rwc_bytes *b, const void *buf, int count, MPI_Datatype type, MPI_Comm comm, int pack)
{
    b->data = NULL;
    b->packed = 0;
    rw_status st = rwc_type_bytes(count, type, &b->len);
    if (st || b->len == 0)
        return st;
    if (dense_predefined(type)) {
        b->data = (char *)buf;
        return RW_OK;
    }
    int room = 0;
    if ((st = rwc_mpi(PMPI_Pack_size(count, type, comm, &room), "MPI_Pack_size")))
        return st;
    if (!(b->data = malloc((size_t)room > b->len ? (size_t)room : b->len)))
        return rw_fail(RW_ERR_NOMEM, "out of memory for %zu bytes", b->len);
    b->packed = 1;
    if (pack) {
        int pos = 0;
        if ((st = rwc_mpi(PMPI_Pack(buf, count, type, b->data, room, &pos, comm), "MPI_Pack"))) {
            free(b->data);
            b->data = NULL;
            return st;
        }
        if ((size_t)pos != b->len) {
            free(b->data);
            b->data = NULL;
            return rw_fail(RW_ERR_STATE, "MPI_Pack gave %d bytes for %zu bytes of data (not a homogeneous job)",
                           pos, b->len);
        }
    }
    return RW_OK;
}

rw_status rwc_bytes_close(rwc_bytes *b, void *buf, int count, MPI_Datatype type, MPI_Comm comm, int unpack)
{
    rw_status st = RW_OK;
    if (b->packed) {
        int pos = 0;
        if (unpack)
            st = rwc_mpi(PMPI_Unpack(b->data, (int)b->len, &pos, buf, count, type, comm), "MPI_Unpack");
        free(b->data);
    }
    b->data = NULL;
    b->packed = 0;
    return st;
}

rw_status rwc_typed_alloc(int count, MPI_Datatype type, void **mem, char **base)
{
    MPI_Aint lb, extent, tlb, textent;
    *mem = NULL;
    *base = NULL;
    rw_status st = rwc_mpi(PMPI_Type_get_extent(type, &lb, &extent), "MPI_Type_get_extent");
    if (!st)
        st = rwc_mpi(PMPI_Type_get_true_extent(type, &tlb, &textent), "MPI_Type_get_true_extent");
    if (st)
        return st;
    /* element i occupies [i extent + tlb, i extent + tlb + textent) */
    MPI_Aint span = count > 0 ? textent + (MPI_Aint)(count - 1) * (extent > 0 ? extent : 0) : 1;
    MPI_Aint low = count > 1 && extent < 0 ? (MPI_Aint)(count - 1) * extent : 0;
    span -= low;
    if (!(*mem = malloc((size_t)(span > 0 ? span : 1))))
        return rw_fail(RW_ERR_NOMEM, "out of memory for %ld bytes", (long)span);
    *base = (char *)*mem - tlb - low;
    return RW_OK;
}

rw_status rwc_copy(const void *src, int sc, MPI_Datatype st, void *dst, int rc, MPI_Datatype rt, MPI_Comm comm)
{
    int me;
    PMPI_Comm_rank(comm, &me);
    return rwc_mpi(PMPI_Sendrecv(src, sc, st, me, RWC_TAG_COPY, dst, rc, rt, me, RWC_TAG_COPY, comm,
                                 MPI_STATUS_IGNORE),
                   "MPI_Sendrecv (local copy)");
}
