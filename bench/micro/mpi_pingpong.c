/* The same ping-pong and streaming test with MPI_Send/MPI_Recv, for the MPI library beside
 * fabcoll:  mpirun -n 2 --bind-to core fabcoll-mpi-pingpong */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  size_t max_bytes = (size_t)16 << 20;
  if (argc > 2 && strcmp(argv[1], "--max") == 0) max_bytes = strtoull(argv[2], NULL, 10);
  char* buf = malloc(max_bytes);
  memset(buf, 1, max_bytes);
  if (me == 0)
    printf("# MPI point-to-point (MPI_Send/MPI_Recv), rank 0 <-> 1\n%-10s %14s %16s\n", "# Size",
           "Latency(us)", "Bandwidth(MB/s)");
  MPI_Request reqs[64];
  char ack = 0;
  for (size_t n = 8; n <= max_bytes; n *= 2) {
    const int iters = n <= 65536 ? 2000 : n <= (1u << 20) ? 200 : 40;
    double lat[5];
    for (int batch = 0; batch < 6; ++batch) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int i = 0; i < iters; ++i) {
        if (me == 0) {
          MPI_Send(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
          MPI_Recv(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (me == 1) {
          MPI_Recv(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
      }
      const double us = (MPI_Wtime() - t0) * 1e6;
      if (batch > 0) lat[batch - 1] = us / iters / 2;
    }
    qsort(lat, 5, sizeof lat[0], cmp);
    const int windows = n <= 65536 ? 100 : n <= (1u << 20) ? 10 : 3;
    double mbs = 0;
    for (int rep = 0; rep < 2; ++rep) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int w = 0; w < windows; ++w) {
        for (int i = 0; i < 64; ++i) {
          if (me == 0)
            MPI_Isend(buf, (int)n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &reqs[i]);
          else
            MPI_Irecv(buf, (int)n, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &reqs[i]);
        }
        MPI_Waitall(64, reqs, MPI_STATUSES_IGNORE);
        if (me == 1)
          MPI_Send(&ack, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        else
          MPI_Recv(&ack, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      mbs = (double)n * 64 * windows / (MPI_Wtime() - t0) / 1e6;
    }
    if (me == 0) printf("%-10zu %14.2f %16.1f\n", n, lat[2], mbs);
    fflush(stdout);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
