/* The internal communication API. Arrays and operators call these and never MPI directly.
 * Today: host MPI. The communication-layer work replaces the bodies (pinned staging pools, CUDA-aware MPI,
 * NCCL) behind the same functions. */
#ifndef SL_COMM_H
#define SL_COMM_H

#include <mpi.h>

typedef enum { COMM_SUM, COMM_MAX, COMM_MIN } comm_op;

/** Collective over comm: buf[0..count-1] = op over ranks of buf (in place, doubles). Called from inside a
 *  task that holds the order token, so every rank runs these in submission order. */
int comm_allreduce_double(MPI_Comm comm, double *buf, int count, comm_op op);

#endif
