/* Allreduce on host buffers through MPI. */
#include "internal.h"
#include "comm/comm.h"

int comm_allreduce_double(MPI_Comm comm, double *buf, int count, comm_op op)
{
  MPI_Op mop = op == COMM_MAX ? MPI_MAX : (op == COMM_MIN ? MPI_MIN : MPI_SUM);
  SL_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, buf, count, MPI_DOUBLE, mop, comm));
  return SL_SUCCESS;
}
