// podtrain's exit codes (also in docs/podtrain.md). mpirun exits with the code of the first rank
// that exits non-zero; every rank exits with the same code for the outcomes below.
#pragma once

namespace podsched::train {

inline constexpr int kExitOk = 0;                // trained to --steps; printed params_sha256=
inline constexpr int kExitError = 1;             // unexpected failure (MPI, internal)
inline constexpr int kExitUsage = 2;             // bad flags/environment, B % W != 0, or a
                                                 // checkpoint of another model/optimizer/seed
inline constexpr int kExitStorage = 3;           // checkpoint store unreadable/unwritable
inline constexpr int kExitFenced = 4;            // a newer epoch committed: this run is stale
inline constexpr int kExitOverflow = 5;          // fixed-point overflow in the exact all-reduce
inline constexpr int kExitPreempted = 75;        // SIGTERM: checkpoint committed, then exited
inline constexpr int kExitPreemptedNoCkpt = 76;  // SIGTERM without a checkpoint URL: nothing saved

}  // namespace podsched::train
