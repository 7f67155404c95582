//===- runtime/launch/ExternalStore.h - A store the program brings -*- C++ -*-===//
//
// The processes of a run may already share a key-value store of their own:
// torch's TCPStore under torchrun (MASTER_ADDR:MASTER_PORT), or a process
// group's store. Rather than ask for a second meeting place (a shared
// directory, a Redis server), collc meets in that one: the program
// registers it under a name (the C API's collcStoreRegister: callbacks over
// the program's store) and gives rendezvous "store:NAME"
// (RendezvousAddress.h). Its four operations are what every torch store
// offers (set, get, check, add), so any of them serves.
//
// A name may be registered again, by a program that made a new store (a
// process group made again): the groups formed after meet in the new one;
// groups formed before are already connected and never read the store again.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_LAUNCH_EXTERNALSTORE_H
#define COLLC_RUNTIME_LAUNCH_EXTERNALSTORE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace collc::rt {

class ExternalStore {
public:
  virtual ~ExternalStore();
  /// Sets \p Key to \p Value (every process may read it after).
  virtual llvm::Error set(llvm::StringRef Key, llvm::ArrayRef<char> Value) = 0;
  /// The value of \p Key, waiting for it as long as the store itself waits.
  virtual llvm::Expected<std::vector<char>> get(llvm::StringRef Key) = 0;
  /// Whether every key of \p Keys is set now; never waits.
  virtual llvm::Expected<bool> check(llvm::ArrayRef<std::string> Keys) = 0;
  /// Adds \p Delta to the integer \p Key holds (0 when unset), atomically
  /// across processes, and returns the sum.
  virtual llvm::Expected<int64_t> add(llvm::StringRef Key, int64_t Delta) = 0;
  /// Whether the program said that every process of the run is on this
  /// host (torchrun's LOCAL_WORLD_SIZE == WORLD_SIZE): then the gloo
  /// backend listens on the loopback address, else on this host's name.
  virtual bool oneHost() const = 0;
};

/// Registers \p Store as "store:\p Name" for this process, in place of the
/// one registered before under that name, if any.
void registerExternalStore(llvm::StringRef Name, std::shared_ptr<ExternalStore> Store);

/// The store registered as \p Name, or an error saying none is.
llvm::Expected<std::shared_ptr<ExternalStore>> externalStore(llvm::StringRef Name);

/// Why \p Name cannot name a store (empty, or a character other than
/// letters, digits, '_', '-' and '.'), if it cannot.
std::optional<std::string> badStoreName(llvm::StringRef Name);

} // namespace collc::rt

#endif
