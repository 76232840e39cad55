/* Point-to-point wrappers. Traffic is counted on the send side only, one
 * message of count x size(type) bytes to the destination's world rank, when
 * the call succeeds: blocking and nonblocking sends at the call, persistent
 * sends at every MPI_Start/MPI_Startall, the send half of
 * MPI_Sendrecv(_replace). Receives, probes and matched receives add no
 * traffic (their sender counted it) but their time is accounted. */
#include "profile.h"

static inline void sent(MPI_Comm comm, int dest, int count, MPI_Datatype type)
{
    rwp_send(rwp_dest(comm, dest), 1, rwp_bytes(count, type), RWP_KIND_P2P);
}

/* A send-like call: time it, then count it. */
#define SEND_CALL(call, comm, dest, count, type)                                                   \
    RWP_ENTER;                                                                                     \
    int rc = (call);                                                                               \
    RWP_LEAVE(RWP_P2P);                                                                            \
    if (rwp_live_ && rc == MPI_SUCCESS)                                                            \
        sent((comm), (dest), (count), (type));                                                     \
    return rc

/* A call that is only timed. */
#define TIMED_CALL(cls, call)                                                                      \
    RWP_ENTER;                                                                                     \
    int rc = (call);                                                                               \
    RWP_LEAVE(cls);                                                                                \
    return rc

/* ------------------------------------------------------------ blocking */

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    SEND_CALL(PMPI_Send(buf, count, type, dest, tag, comm), comm, dest, count, type);
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    SEND_CALL(PMPI_Bsend(buf, count, type, dest, tag, comm), comm, dest, count, type);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    SEND_CALL(PMPI_Ssend(buf, count, type, dest, tag, comm), comm, dest, count, type);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    SEND_CALL(PMPI_Rsend(buf, count, type, dest, tag, comm), comm, dest, count, type);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status)
{
    SEND_CALL(PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                            source, recvtag, comm, status),
              comm, dest, sendcount, sendtype);
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                         int recvtag, MPI_Comm comm, MPI_Status *status)
{
    SEND_CALL(PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status),
              comm, dest, count, type);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    TIMED_CALL(RWP_P2P, PMPI_Recv(buf, count, type, source, tag, comm, status));
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    TIMED_CALL(RWP_P2P, PMPI_Probe(source, tag, comm, status));
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    TIMED_CALL(RWP_P2P, PMPI_Iprobe(source, tag, comm, flag, status));
}

#ifndef RW_SMPI /* SMPI 3.32 has no matched probes */
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    TIMED_CALL(RWP_P2P, PMPI_Mprobe(source, tag, comm, message, status));
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    TIMED_CALL(RWP_P2P, PMPI_Improbe(source, tag, comm, flag, message, status));
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    TIMED_CALL(RWP_P2P, PMPI_Mrecv(buf, count, type, message, status));
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request)
{
    TIMED_CALL(RWP_P2P, PMPI_Imrecv(buf, count, type, message, request));
}
#endif

/* ---------------------------------------------------------- nonblocking */

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    SEND_CALL(PMPI_Isend(buf, count, type, dest, tag, comm, request), comm, dest, count, type);
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    SEND_CALL(PMPI_Ibsend(buf, count, type, dest, tag, comm, request), comm, dest, count, type);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    SEND_CALL(PMPI_Issend(buf, count, type, dest, tag, comm, request), comm, dest, count, type);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    SEND_CALL(PMPI_Irsend(buf, count, type, dest, tag, comm, request), comm, dest, count, type);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    TIMED_CALL(RWP_P2P, PMPI_Irecv(buf, count, type, source, tag, comm, request));
}

/* ----------------------------------------------------------- persistent */

/* A persistent send is remembered (even while paused: it may be started
 * later) and counted at each start. */
#define SEND_INIT_CALL(call)                                                                       \
    RWP_ENTER;                                                                                     \
    int rc = (call);                                                                               \
    RWP_LEAVE(RWP_P2P);                                                                            \
    if (rwp.ready && rc == MPI_SUCCESS)                                                            \
        rwp_persistent_add(*request, rwp_dest(comm, dest), rwp_bytes(count, type));                \
    return rc

int MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request *request)
{
    SEND_INIT_CALL(PMPI_Send_init(buf, count, type, dest, tag, comm, request));
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    SEND_INIT_CALL(PMPI_Bsend_init(buf, count, type, dest, tag, comm, request));
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    SEND_INIT_CALL(PMPI_Ssend_init(buf, count, type, dest, tag, comm, request));
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    SEND_INIT_CALL(PMPI_Rsend_init(buf, count, type, dest, tag, comm, request));
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request *request)
{
    TIMED_CALL(RWP_P2P, PMPI_Recv_init(buf, count, type, source, tag, comm, request));
}

int MPI_Start(MPI_Request *request)
{
    RWP_ENTER;
    MPI_Request req = *request;
    int rc = PMPI_Start(request);
    RWP_LEAVE(RWP_P2P);
    if (rwp_live_ && rc == MPI_SUCCESS)
        rwp_persistent_start(req);
    return rc;
}

int MPI_Startall(int count, MPI_Request requests[])
{
    RWP_ENTER;
    int rc = PMPI_Startall(count, requests);
    RWP_LEAVE(RWP_P2P);
    if (rwp_live_ && rc == MPI_SUCCESS)
        for (int i = 0; i < count; i++)
            rwp_persistent_start(requests[i]);
    return rc;
}

int MPI_Request_free(MPI_Request *request)
{
    RWP_ENTER;
    if (rwp.ready)
        rwp_persistent_remove(*request);
    int rc = PMPI_Request_free(request);
    RWP_LEAVE(RWP_OTHER);
    return rc;
}

/* ------------------------------------------------------------ wait/test */

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    TIMED_CALL(RWP_WAIT, PMPI_Wait(request, status));
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    TIMED_CALL(RWP_WAIT, PMPI_Waitall(count, requests, statuses));
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    TIMED_CALL(RWP_WAIT, PMPI_Waitany(count, requests, index, status));
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    TIMED_CALL(RWP_WAIT, PMPI_Waitsome(incount, requests, outcount, indices, statuses));
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    TIMED_CALL(RWP_WAIT, PMPI_Test(request, flag, status));
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    TIMED_CALL(RWP_WAIT, PMPI_Testall(count, requests, flag, statuses));
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    TIMED_CALL(RWP_WAIT, PMPI_Testany(count, requests, index, flag, status));
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    TIMED_CALL(RWP_WAIT, PMPI_Testsome(incount, requests, outcount, indices, statuses));
}
