//===- runtime/shm/Transport.h - shm, engine, or auto -----------*- C++ -*-===//
//
// What carries a group's bytes on a process backend (mpi, gloo): shared
// memory among the group's processes of one host (`shm`; hierarchically
// with the engine across hosts), the engine alone (`engine`: MPI, Gloo),
// or whichever the group allows (`auto`, the default: shared memory where
// the group has processes that share a host and the hosts hold equally
// many, else the engine, saying why). `shm` where shared memory cannot
// serve the group is an error naming why; `auto` then takes the engine.
//
// The process's choice: setTransport (`collc run|bench --transport`), else
// the environment variable COLLC_TRANSPORT, else auto. Every process of a
// group must choose alike (the group's formation checks it).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_SHM_TRANSPORT_H
#define COLLC_RUNTIME_SHM_TRANSPORT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>

namespace collc::rt::shm {

enum class Transport : uint8_t { Auto, Shm, Engine };
constexpr const char *TransportVariable = "COLLC_TRANSPORT";

llvm::StringRef transportName(Transport T);
/// "auto", "shm" or "engine"; \p Origin names where the text came from.
llvm::Expected<Transport> parseTransport(llvm::StringRef Text, llvm::StringRef Origin);

/// Overrides COLLC_TRANSPORT for this process (nullopt: back to it).
void setTransport(std::optional<Transport> T);
/// setTransport's choice, else COLLC_TRANSPORT's, else auto; an error when
/// the variable is malformed.
llvm::Expected<Transport> processTransport();

} // namespace collc::rt::shm

#endif
