//===- runtime/shm/HostIdentity.h - Which host a process is on -*- C++ -*-===//
//
// Processes that share a host share memory: the shared-memory transport
// groups a communicator's processes by this identity. Two processes are on
// one host when they see the same kernel (its host name and boot id) in the
// same network, pid and IPC namespaces: the segment is handed out over an
// abstract Unix socket (the network namespace's), peers are watched by pid
// (the pid namespace's), and futexes on shared memory need one kernel.
//
// COLLC_PSEUDO_HOST=NAME (any text) splits one machine into pseudo-hosts:
// processes that set different names (or one sets it and the other not) act
// as on different hosts, and share no memory. It is for testing the
// hierarchical path (2 pseudo-hosts x 2 processes on one machine), and
// for measuring the engine between processes of one machine.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_SHM_HOSTIDENTITY_H
#define COLLC_RUNTIME_SHM_HOSTIDENTITY_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace collc::rt::shm {

constexpr const char *PseudoHostVariable = "COLLC_PSEUDO_HOST";

struct HostIdentity {
  /// Equal for processes that can share memory (see above).
  uint64_t Key = 0;
  /// For messages: the host name, with the pseudo-host when one is set
  /// ("node7", "node7 (pseudo-host b)").
  std::string Name;
};

/// Reads a variable of the environment (nullopt when unset).
using HostEnvironment = llvm::function_ref<std::optional<std::string>(llvm::StringRef)>;
std::optional<std::string> hostEnvironment(llvm::StringRef Name);

/// This process's host, read once per call (a few small files of /proc).
HostIdentity thisHost(HostEnvironment Env = hostEnvironment);

/// While it lives, this thread is on pseudo-host \p Name, whatever
/// COLLC_PSEUDO_HOST says: for tests whose ranks are threads of one process
/// (tests/conformance/ShmConformanceTest.cpp runs the hierarchical path
/// so), never for a process backend's ranks.
class PseudoHostScope {
public:
  explicit PseudoHostScope(std::string Name);
  ~PseudoHostScope();
  PseudoHostScope(const PseudoHostScope &) = delete;
  PseudoHostScope &operator=(const PseudoHostScope &) = delete;

private:
  std::optional<std::string> Saved;
};

} // namespace collc::rt::shm

#endif
