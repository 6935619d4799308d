// A variable the agent sets for every process of a job (the launcher, mpirun, the orteds and
// the ranks), unless the job's own environment names it.
//
// HWLOC_COMPONENTS=-pci,-linuxio: hwloc, which OpenMPI's mpirun, orted and MPI_Init use to learn
// the host's topology, otherwise reads the configuration space of every PCI device, the largest
// part of mpirun's start-up here: `perf stat -r 20 mpirun -np 1 /bin/true` took 35 ms of CPU,
// 23 ms without it, and 4 podtrain ranks reached their restore 70 ms sooner (docs/podworker.md).
// The agent's MPI transports are TCP (`--mca btl self,tcp`), which never ask where a PCI device
// is. A job that wants hwloc's I/O objects sets HWLOC_COMPONENTS itself (an empty value is
// hwloc's default).
#pragma once

namespace podsched::agent {

inline constexpr const char* kHwlocComponentsVariable = "HWLOC_COMPONENTS";
inline constexpr const char* kHwlocComponentsDefault = "-pci,-linuxio";

}  // namespace podsched::agent
