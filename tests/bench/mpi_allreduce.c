/*===- tests/bench/mpi_allreduce.c - Open MPI's all_reduce, for comparison ===*
 *
 * Run by `collc bench` under mpirun: MPI_Allreduce (float sum, out of place)
 * for sizes 8 B to the limit, doubling. Rank 0 prints one line per size:
 * "<bytes> <microseconds per operation>", the slowest rank's time.
 *
 *===----------------------------------------------------------------------===*/
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { Batches = 5 };

static int compareDoubles(const void *A, const void *B) {
  double X = *(const double *)A, Y = *(const double *)B;
  return (X > Y) - (X < Y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int Rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &Rank);
  size_t MaxBytes = argc > 1 ? strtoull(argv[1], 0, 10) : (64u << 20);
  double BudgetSec = argc > 2 ? atof(argv[2]) : 0.05;
  float *Src = malloc(MaxBytes), *Dst = malloc(MaxBytes);
  memset(Src, 1, MaxBytes);
  memset(Dst, 0, MaxBytes);
  for (size_t Bytes = 8; Bytes <= MaxBytes; Bytes *= 2) {
    int Count = (int)(Bytes / sizeof(float));
    /* Warm up, then pick an iteration count that fills the time budget. */
    MPI_Allreduce(Src, Dst, Count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double T0 = MPI_Wtime();
    MPI_Allreduce(Src, Dst, Count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double One = MPI_Wtime() - T0;
    MPI_Allreduce(MPI_IN_PLACE, &One, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    /* Five batches; each counts as its slowest rank's mean, and the median
       batch is reported: the same statistic collc bench uses for itself. */
    int Iters = (int)(BudgetSec / Batches / (One > 1e-7 ? One : 1e-7));
    if (Iters < 3)
      Iters = 3;
    if (Iters > 100000)
      Iters = 100000;
    double Slowest[Batches];
    for (int B = 0; B < Batches; ++B) {
      MPI_Barrier(MPI_COMM_WORLD);
      T0 = MPI_Wtime();
      for (int I = 0; I < Iters; ++I)
        MPI_Allreduce(Src, Dst, Count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      double Mean = (MPI_Wtime() - T0) / Iters * 1e6;
      MPI_Allreduce(&Mean, &Slowest[B], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    qsort(Slowest, Batches, sizeof(double), compareDoubles);
    double Us = Slowest[Batches / 2];
    if (Rank == 0)
      printf("%zu %.3f\n", Bytes, Us);
    fflush(stdout);
  }
  free(Src);
  free(Dst);
  MPI_Finalize();
  return 0;
}
