// Exact (int64 fixed-point) vs float MPI_Allreduce of a gradient-sized vector.
//
//   mpirun -np W bench_train_allreduce [--params N]... [--reps R]
//
// Prints, for each N, the median time of MPI_Allreduce(MPI_SUM) on N int64 values and on N
// float values (the collective only; int64 moves twice the bytes), plus the cost of quantizing
// N floats to fixed point, and FIGURE lines named allreduce_{int64,float}_{N}_w{W}.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename T>
double TimeAllreduce(std::vector<T>& buf, MPI_Datatype type, int reps) {
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    MPI_Allreduce(MPI_IN_PLACE, buf.data(), static_cast<int>(buf.size()), type, MPI_SUM,
                  MPI_COMM_WORLD);
    const double local =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    double slowest = 0;
    MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    ms.push_back(slowest);
  }
  return Median(ms);
}

std::string Label(long n) {
  if (n % 1000000 == 0) return std::to_string(n / 1000000) + "M";
  if (n % 1000 == 0) return std::to_string(n / 1000) + "k";
  return std::to_string(n);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  std::vector<long> sizes;
  int reps = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--params") == 0) sizes.push_back(std::atol(argv[i + 1]));
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
  }
  if (sizes.empty()) sizes = {1000000, 10000000};
  for (long n : sizes) {
    std::vector<float> f(n);
    for (long k = 0; k < n; ++k) f[k] = static_cast<float>(std::sin(k * 0.001 + rank));
    std::vector<int64_t> q(n);
    const auto t0 = std::chrono::steady_clock::now();
    for (long k = 0; k < n; ++k) q[k] = static_cast<int64_t>(std::nearbyint(f[k] * 4294967296.0));
    const double quantize_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double int_ms = TimeAllreduce(q, MPI_INT64_T, reps);
    const double float_ms = TimeAllreduce(f, MPI_FLOAT, reps);
    if (rank == 0) {
      const std::string tag = Label(n) + "_w" + std::to_string(world);
      std::printf(
          "allreduce params=%ld world=%d reps=%d int64_median_ms=%.3f float_median_ms=%.3f "
          "ratio=%.2f quantize_ms=%.3f\n",
          n, world, reps, int_ms, float_ms, float_ms > 0 ? int_ms / float_ms : 0.0, quantize_ms);
      std::printf("FIGURE allreduce_int64_%s %.3f ms\n", tag.c_str(), int_ms);
      std::printf("FIGURE allreduce_float_%s %.3f ms\n", tag.c_str(), float_ms);
    }
  }
  MPI_Finalize();
  return 0;
}
