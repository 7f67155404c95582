//===- runtime/local/LocalSession.h - Seed 003 over the local driver -*- C++ -*-===//

#ifndef COLLC_RUNTIME_LOCAL_LOCALSESSION_H
#define COLLC_RUNTIME_LOCAL_LOCALSESSION_H

#include "runtime/exec/Timeout.h"
#include "runtime/seeds/DistributedSession.h"

#include <chrono>
#include <memory>

namespace collc::rt {

class LocalSessionImpl;

/// A session over the local backend: this thread is rank \p Rank of \p World.
class LocalSession : public DistributedSession<HostValue> {
public:
  static llvm::Expected<std::unique_ptr<LocalSession>>
  create(llvm::StringRef Name, size_t World, size_t Rank,
         std::chrono::milliseconds Timeout = defaultTimeout());
  ~LocalSession() override;

  DistributedSessionDescriptor descriptor() const override;
  DistributedCapabilities capabilities() const override;
  llvm::Expected<Submission<HostValue>> allReduceSum(const CollectiveScope &Scope,
                                                     const HostValue &Input) override;
  llvm::Expected<Submission<HostValue>> allGather(const CollectiveScope &Scope,
                                                  const HostValue &Input) override;
  llvm::Expected<Submission<HostValue>> allToAllV(const CollectiveScope &Scope,
                                                  const HostValue &Input,
                                                  llvm::ArrayRef<size_t> SendCounts,
                                                  llvm::ArrayRef<size_t> ReceiveCounts) override;
  llvm::Expected<Submission<HostValue>> send(const CollectiveScope &Scope, size_t Peer,
                                             const HostValue &Input) override;
  llvm::Expected<Submission<HostValue>> receive(const CollectiveScope &Scope, size_t Peer,
                                                const ValueDescriptor &Desc) override;
  llvm::Expected<std::vector<uint32_t>> allGatherWords(llvm::ArrayRef<uint32_t> Local) override;

private:
  explicit LocalSession(std::unique_ptr<LocalSessionImpl> Impl);
  std::unique_ptr<LocalSessionImpl> Impl;
};

} // namespace collc::rt

#endif
