/* fabcoll — collectives engine for HPC codes. C API.
 *
 * Argument order follows MPI so MPI users feel at home. Counts are size_t and in elements.
 * Every function returns FC_SUCCESS or an FC_ERR_* code; fc_strerror() names the code and
 * fc_last_error_message() gives the detailed message of the last failure on this thread.
 */
#ifndef FABCOLL_FABCOLL_H
#define FABCOLL_FABCOLL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FABCOLL_VERSION_MAJOR 0
#define FABCOLL_VERSION_MINOR 1
#define FABCOLL_VERSION_PATCH 0

/** Error codes. */
enum {
  FC_SUCCESS = 0,
  FC_ERR_INVALID_ARG = 1,      /**< null pointer, overlapping buffers, bad handle */
  FC_ERR_INVALID_DATATYPE = 2, /**< unknown datatype */
  FC_ERR_INVALID_OP = 3,       /**< unknown op or op not defined for the datatype */
  FC_ERR_INVALID_ROOT = 4,     /**< root outside 0..size-1 */
  FC_ERR_INVALID_COUNT = 5,    /**< count overflow or mismatched counts */
  FC_ERR_TRUNCATE = 6,         /**< a message was longer than its receive buffer */
  FC_ERR_TRANSPORT = 7,        /**< the transport reported an error */
  FC_ERR_PEER = 8,             /**< a peer failed or went away */
  FC_ERR_TIMEOUT = 9,          /**< a wait passed its deadline (FABCOLL_TIMEOUT) */
  FC_ERR_BROKEN = 10,          /**< the communicator failed earlier and is unusable */
  FC_ERR_NO_MEMORY = 11,
  FC_ERR_UNSUPPORTED = 12, /**< valid request this build or transport cannot serve */
  FC_ERR_INTERNAL = 13
};

/** Datatypes. Pair types hold {value, int index} laid out as the C struct. */
typedef enum fc_datatype_e {
  FC_INT8 = 0,
  FC_INT16,
  FC_INT32,
  FC_INT64,
  FC_UINT8,
  FC_UINT16,
  FC_UINT32,
  FC_UINT64,
  FC_FLOAT16,
  FC_BFLOAT16,
  FC_FLOAT,
  FC_DOUBLE,
  FC_FLOAT_INT,
  FC_DOUBLE_INT,
  FC_BYTE,
  FC_DATATYPE_COUNT_
} fc_datatype_t;

/** Reduction operators. User operators are created with fc_op_create. */
typedef int fc_op_t;
enum {
  FC_SUM = 0,
  FC_PROD,
  FC_MIN,
  FC_MAX,
  FC_LAND,
  FC_LOR,
  FC_LXOR,
  FC_BAND,
  FC_BOR,
  FC_BXOR,
  FC_MINLOC,
  FC_MAXLOC,
  FC_OP_BUILTIN_COUNT_
};
#define FC_OP_NULL (-1)

/** A user operator: inout[i] = in[i] (op) inout[i] for i < count (MPI's convention). */
typedef void (*fc_user_fn)(const void* in, void* inout, size_t count, fc_datatype_t dt);

/** Pass as sendbuf for the in-place form (data taken from and left in recvbuf). */
#define FC_IN_PLACE ((void*)1)
/** color for fc_comm_split: the caller joins no new communicator. */
#define FC_UNDEFINED (-32766)

typedef struct fc_context_s* fc_context_t;
typedef struct fc_comm_s* fc_comm_t;
typedef struct fc_request_s* fc_request_t;
typedef struct fc_mem_s* fc_mem_t;
typedef struct fc_thread_world_s* fc_thread_world_t;

#define FC_COMM_NULL ((fc_comm_t)0)
#define FC_REQUEST_NULL ((fc_request_t)0)

/* ---- context and communicators ------------------------------------------------------------ */

/** Bootstrap from the environment: ranks started by fabcoll-run use its store; ranks started by
 *  a PMIx launcher (Open MPI's mpirun, srun --mpi=pmix) bootstrap through PMIx; a lone process
 *  (no launcher) is rank 0 of 1. */
int fc_init(fc_context_t* ctx);
/** Bootstrap over the caller's own collective: bcast(buf, len, arg) must broadcast len bytes
 *  from rank 0 to every rank and return 0 (e.g. a wrapper of MPI_Bcast). Rank 0 then serves
 *  the bootstrap store until fc_finalize. single_node != 0 when all ranks share this machine
 *  (the store then listens on a private Unix socket, else on TCP). */
typedef int (*fc_bcast_fn)(void* buf, int len, void* arg);
int fc_init_bcast(int rank, int size, int single_node, fc_bcast_fn bcast, void* arg,
                  fc_context_t* ctx);
int fc_finalize(fc_context_t ctx);
/** A world of `size` ranks inside one process, one thread per rank (real time, in-process
 *  transport). Create it once, then each thread calls fc_init_thread with its rank. */
int fc_thread_world_create(int size, fc_thread_world_t* world);
int fc_thread_world_free(fc_thread_world_t* world);
int fc_init_thread(fc_thread_world_t world, int rank, fc_context_t* ctx);

int fc_comm_world(fc_context_t ctx, fc_comm_t* comm);
int fc_comm_rank(fc_comm_t comm, int* rank);
int fc_comm_size(fc_comm_t comm, int* size);
/** Collective over comm. Ranks with the same color form a new communicator, ordered by
 *  (key, old rank). color == FC_UNDEFINED yields *newcomm == FC_COMM_NULL. */
int fc_comm_split(fc_comm_t comm, int color, int key, fc_comm_t* newcomm);
/** Frees a communicator made by fc_comm_split (the world communicator is freed by finalize). */
int fc_comm_free(fc_comm_t* comm);

/* ---- collectives (blocking) ----------------------------------------------------------------- */

int fc_bcast(void* buf, size_t count, fc_datatype_t dt, int root, fc_comm_t comm);
int fc_reduce(const void* sendbuf, void* recvbuf, size_t count, fc_datatype_t dt, fc_op_t op,
              int root, fc_comm_t comm);
int fc_allreduce(const void* sendbuf, void* recvbuf, size_t count, fc_datatype_t dt, fc_op_t op,
                 fc_comm_t comm);
int fc_scan(const void* sendbuf, void* recvbuf, size_t count, fc_datatype_t dt, fc_op_t op,
            fc_comm_t comm);
int fc_exscan(const void* sendbuf, void* recvbuf, size_t count, fc_datatype_t dt, fc_op_t op,
              fc_comm_t comm);
int fc_barrier(fc_comm_t comm);
int fc_gather(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
              size_t recvcount, fc_datatype_t recvtype, int root, fc_comm_t comm);
int fc_scatter(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
               size_t recvcount, fc_datatype_t recvtype, int root, fc_comm_t comm);
int fc_allgather(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
                 size_t recvcount, fc_datatype_t recvtype, fc_comm_t comm);
int fc_allgatherv(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
                  const size_t* recvcounts, const size_t* displs, fc_datatype_t recvtype,
                  fc_comm_t comm);
int fc_alltoall(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
                size_t recvcount, fc_datatype_t recvtype, fc_comm_t comm);
int fc_alltoallv(const void* sendbuf, const size_t* sendcounts, const size_t* sdispls,
                 fc_datatype_t sendtype, void* recvbuf, const size_t* recvcounts,
                 const size_t* rdispls, fc_datatype_t recvtype, fc_comm_t comm);
int fc_reduce_scatter_block(const void* sendbuf, void* recvbuf, size_t recvcount, fc_datatype_t dt,
                            fc_op_t op, fc_comm_t comm);

/* ---- collectives (nonblocking): same arguments plus a request ------------------------------ */

int fc_ibcast(void* buf, size_t count, fc_datatype_t dt, int root, fc_comm_t comm,
              fc_request_t* req);
int fc_ireduce(const void* sendbuf, void* recvbuf, size_t count, fc_datatype_t dt, fc_op_t op,
               int root, fc_comm_t comm, fc_request_t* req);
int fc_iallreduce(const void* sendbuf, void* recvbuf, size_t count, fc_datatype_t dt, fc_op_t op,
                  fc_comm_t comm, fc_request_t* req);
int fc_iscan(const void* sendbuf, void* recvbuf, size_t count, fc_datatype_t dt, fc_op_t op,
             fc_comm_t comm, fc_request_t* req);
int fc_iexscan(const void* sendbuf, void* recvbuf, size_t count, fc_datatype_t dt, fc_op_t op,
               fc_comm_t comm, fc_request_t* req);
int fc_ibarrier(fc_comm_t comm, fc_request_t* req);
int fc_igather(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
               size_t recvcount, fc_datatype_t recvtype, int root, fc_comm_t comm,
               fc_request_t* req);
int fc_iscatter(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
                size_t recvcount, fc_datatype_t recvtype, int root, fc_comm_t comm,
                fc_request_t* req);
int fc_iallgather(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
                  size_t recvcount, fc_datatype_t recvtype, fc_comm_t comm, fc_request_t* req);
int fc_iallgatherv(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
                   const size_t* recvcounts, const size_t* displs, fc_datatype_t recvtype,
                   fc_comm_t comm, fc_request_t* req);
int fc_ialltoall(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
                 size_t recvcount, fc_datatype_t recvtype, fc_comm_t comm, fc_request_t* req);
int fc_ialltoallv(const void* sendbuf, const size_t* sendcounts, const size_t* sdispls,
                  fc_datatype_t sendtype, void* recvbuf, const size_t* recvcounts,
                  const size_t* rdispls, fc_datatype_t recvtype, fc_comm_t comm, fc_request_t* req);
int fc_ireduce_scatter_block(const void* sendbuf, void* recvbuf, size_t recvcount, fc_datatype_t dt,
                             fc_op_t op, fc_comm_t comm, fc_request_t* req);

/** Waits for completion (bounded by FABCOLL_TIMEOUT) and frees the request; *req becomes NULL. */
int fc_wait(fc_request_t* req);
/** Drives progress once; *done = 1 when complete (the request is then freed, *req = NULL). */
int fc_test(fc_request_t* req, int* done);

/* ---- memory registration, operators, errors ------------------------------------------------ */

int fc_mem_register(fc_context_t ctx, void* buf, size_t len, fc_mem_t* mem);
int fc_mem_deregister(fc_mem_t* mem);

/* fn runs inside fabcoll's progress (while a collective combines): it must not call fabcoll. */
int fc_op_create(fc_user_fn fn, int commutative, fc_op_t* op);
int fc_op_free(fc_op_t* op);

/** Size in bytes of one element of dt, or 0 for an unknown datatype. */
size_t fc_datatype_size(fc_datatype_t dt);
/** Static text naming an error code. */
const char* fc_strerror(int err);
/** Detailed message of the last error returned on this thread ("" if none). */
const char* fc_last_error_message(void);

#ifdef __cplusplus
}
#endif

#endif /* FABCOLL_FABCOLL_H */
