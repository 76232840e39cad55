/* rankwise — the PMPI profiler's C API (librankwise_profile).
 *
 * The profiler records, for every rank, the messages and bytes it sends to
 * every other world rank (point-to-point as sent, collectives as the
 * logical data each rank must deliver: docs/reference/formats.md, "Profile") and the
 * time spent in MPI per call class. It writes the communication matrix and
 * a summary at MPI_Finalize, to $RANKWISE_PROFILE_OUT (default
 * rankwise-profile.rwc in the working directory) and the summary beside it
 * (NAME.summary.txt for NAME.rwc).
 *
 * Nothing here needs to be called: the profiler works on an unmodified
 * program (LD_PRELOAD with a real MPI, linked in under SMPI). These calls
 * let a program cut its run into phases. To build a program that runs with
 * and without the profiler, define RW_PROFILE_OPTIONAL before including
 * this header: the functions become weak and are NULL when the profiler is
 * absent, so test them first:
 *
 *     #define RW_PROFILE_OPTIONAL
 *     #include "rankwise_profile.h"
 *     ...
 *     if (rw_profile_write) rw_profile_write("phase1.rwc");
 */
#ifndef RANKWISE_PROFILE_H
#define RANKWISE_PROFILE_H

#include "rankwise_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define RW_PROFILE_VISIBLE __attribute__((visibility("default")))
#else
#define RW_PROFILE_VISIBLE
#endif
#if defined(RW_PROFILE_OPTIONAL) && defined(__GNUC__)
#define RW_PROFILE_API RW_PROFILE_VISIBLE __attribute__((weak))
#else
#define RW_PROFILE_API RW_PROFILE_VISIBLE
#endif

/* Collective over MPI_COMM_WORLD (every rank must call it, between
 * MPI_Init and MPI_Finalize): gather every rank's counts to rank 0, which
 * writes the matrix to `path` (NULL: $RANKWISE_PROFILE_OUT or the default)
 * and the summary beside it, both atomically. Counting goes on afterwards;
 * combine with rw_profile_reset for phases. Returns 0 (RW_OK) on every rank
 * when both files were written, else the same non-zero rw_status on every
 * rank, with rw_last_error() telling why. */
RW_PROFILE_API int rw_profile_write(const char *path);

/* Local to the calling rank: forget its counts and MPI times so far. Call
 * it at the same point of the program on every rank for a consistent
 * matrix (e.g. after a barrier that ends the set-up phase). */
RW_PROFILE_API void rw_profile_reset(void);

/* Local: stop and restart recording on the calling rank (calls made while
 * paused add neither traffic nor time). Pauses do not nest. */
RW_PROFILE_API void rw_profile_pause(void);
RW_PROFILE_API void rw_profile_resume(void);

/* rw_last_error() (rankwise_status.h) says why a call failed; with
 * RW_PROFILE_OPTIONAL it is weak as well, NULL without the profiler. */
#if defined(RW_PROFILE_OPTIONAL) && defined(__GNUC__)
__attribute__((weak)) const char *rw_last_error(void);
#endif

/* rw_last_error() under its former name: the library's SONAME (0.1) still
 * promises it, and programs built with RW_PROFILE_OPTIONAL find it at run
 * time in whichever profiler is preloaded. */
RW_PROFILE_API const char *rw_profile_last_error(void) RW_DEPRECATED("use rw_last_error");

#ifdef __cplusplus
}
#endif
#endif /* RANKWISE_PROFILE_H */
