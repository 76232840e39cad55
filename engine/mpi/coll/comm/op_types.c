/* Whether a reduction's operation is defined on its datatype, checked
 * before anything is sent: the MPI's own collective reports a bad
 * combination (MPI_LAND on MPI_FLOAT: MPI_ERR_OP on every rank, through
 * the communicator's error handler), while the library's algorithms would
 * meet it in MPI_Reduce_local on the combining ranks only, after the
 * leaves had sent (an error on some ranks, messages left for the next
 * call to receive). So a predefined operation runs in the library only on
 * the predefined types the MPI standard (4.1, section 6.9.2) defines it
 * for; any other combination passes through to the MPI, which runs or
 * refuses it itself. A user-defined operation takes any datatype. */
#include "coll.h"
#include "internal.h"

/* The standard's categories of predefined types. */
enum {
    C_INTEGER = 1,
    F_INTEGER = 2,
    FLOATING = 4,
    LOGICAL = 8,
    COMPLEX = 16,
    BYTE = 32,
    MULTI_LANGUAGE = 64, /* MPI_AINT, MPI_OFFSET, MPI_COUNT */
    PAIR = 128           /* MPI_MINLOC / MPI_MAXLOC pairs */
};

static int category(MPI_Datatype t)
{
    if (t == MPI_DATATYPE_NULL)
        return 0; /* (some MPIs alias absent optional types to it) */
    if (t == MPI_INT || t == MPI_LONG || t == MPI_SHORT || t == MPI_UNSIGNED_SHORT || t == MPI_UNSIGNED ||
        t == MPI_UNSIGNED_LONG || t == MPI_LONG_LONG_INT || t == MPI_LONG_LONG || t == MPI_UNSIGNED_LONG_LONG ||
        t == MPI_SIGNED_CHAR || t == MPI_UNSIGNED_CHAR || t == MPI_INT8_T || t == MPI_INT16_T || t == MPI_INT32_T ||
        t == MPI_INT64_T || t == MPI_UINT8_T || t == MPI_UINT16_T || t == MPI_UINT32_T || t == MPI_UINT64_T)
        return C_INTEGER;
    if (t == MPI_FLOAT || t == MPI_DOUBLE || t == MPI_LONG_DOUBLE || t == MPI_REAL || t == MPI_DOUBLE_PRECISION
#ifdef MPI_REAL2
        || t == MPI_REAL2
#endif
#ifdef MPI_REAL4
        || t == MPI_REAL4
#endif
#ifdef MPI_REAL8
        || t == MPI_REAL8
#endif
#ifdef MPI_REAL16
        || t == MPI_REAL16
#endif
    )
        return FLOATING;
    if (t == MPI_C_BOOL || t == MPI_LOGICAL
#ifdef MPI_CXX_BOOL
        || t == MPI_CXX_BOOL
#endif
    )
        return LOGICAL; /* (SMPI: MPI_LOGICAL is MPI_INT, a C integer above) */
    if (t == MPI_INTEGER
#ifdef MPI_INTEGER1
        || t == MPI_INTEGER1
#endif
#ifdef MPI_INTEGER2
        || t == MPI_INTEGER2
#endif
#ifdef MPI_INTEGER4
        || t == MPI_INTEGER4
#endif
#ifdef MPI_INTEGER8
        || t == MPI_INTEGER8
#endif
#ifdef MPI_INTEGER16
        || t == MPI_INTEGER16
#endif
    )
        return F_INTEGER;
    if (t == MPI_C_COMPLEX || t == MPI_C_FLOAT_COMPLEX || t == MPI_C_DOUBLE_COMPLEX ||
        t == MPI_C_LONG_DOUBLE_COMPLEX || t == MPI_COMPLEX || t == MPI_DOUBLE_COMPLEX
#ifdef MPI_CXX_FLOAT_COMPLEX
        || t == MPI_CXX_FLOAT_COMPLEX || t == MPI_CXX_DOUBLE_COMPLEX || t == MPI_CXX_LONG_DOUBLE_COMPLEX
#endif
#ifdef MPI_COMPLEX8
        || t == MPI_COMPLEX8
#endif
#ifdef MPI_COMPLEX16
        || t == MPI_COMPLEX16
#endif
#ifdef MPI_COMPLEX32
        || t == MPI_COMPLEX32
#endif
    )
        return COMPLEX;
    if (t == MPI_BYTE)
        return BYTE;
    if (t == MPI_AINT || t == MPI_OFFSET || t == MPI_COUNT)
        return MULTI_LANGUAGE;
    if (t == MPI_FLOAT_INT || t == MPI_DOUBLE_INT || t == MPI_LONG_INT || t == MPI_2INT || t == MPI_SHORT_INT ||
        t == MPI_LONG_DOUBLE_INT || t == MPI_2REAL || t == MPI_2DOUBLE_PRECISION || t == MPI_2INTEGER)
        return PAIR;
    return 0; /* MPI_CHAR, MPI_WCHAR, MPI_PACKED, derived types: the MPI decides */
}

/* The categories a predefined operation is defined on; -1 for a
 * user-defined operation, 0 for one no collective takes. */
static int allowed(MPI_Op op)
{
    if (op == MPI_MAX || op == MPI_MIN)
        return C_INTEGER | F_INTEGER | FLOATING | MULTI_LANGUAGE;
    if (op == MPI_SUM || op == MPI_PROD)
        return C_INTEGER | F_INTEGER | FLOATING | COMPLEX | MULTI_LANGUAGE;
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
        return C_INTEGER | LOGICAL;
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR)
        return C_INTEGER | F_INTEGER | BYTE | MULTI_LANGUAGE;
    if (op == MPI_MAXLOC || op == MPI_MINLOC)
        return PAIR;
    if (op == MPI_OP_NULL || op == MPI_REPLACE || op == MPI_NO_OP)
        return 0; /* (the last two are for one-sided communication) */
    return -1;
}

rw_status rwc_op_fits(MPI_Op op, MPI_Datatype type)
{
    int ok = allowed(op);
    if (ok < 0 || (ok & category(type)))
        return RW_OK;
    return rw_fail(RW_ERR_ARG, "the reduction's operation is not one the library runs on its datatype "
                               "(the MPI's own checks it)");
}
