//===- runtime/exec/DriverExecutor.h - The executor over any host driver -*- C++ -*-===//
//
// Private to the runtime: the Executor over a driver whose memory the host
// can read and write (it packs buckets with memcpy): the local, mpi and gloo
// backends. Everything an executor shares with the NCCL backend's (binding,
// split sizes, the step walk, the digest handshake) lives beside it in
// runtime/exec/, and the functions it calls are the ExecutorDriver concept.
// See runtime/exec/Executor.h.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_DRIVEREXECUTOR_H
#define COLLC_RUNTIME_EXEC_DRIVEREXECUTOR_H

#include "runtime/exec/CollectiveDriver.h"
#include "runtime/exec/CommFacts.h"
#include "runtime/exec/DigestHandshake.h"
#include "runtime/exec/Executor.h"
#include "runtime/exec/GroupJoin.h"
#include "runtime/exec/HostArena.h"
#include "runtime/exec/HostPages.h"
#include "runtime/exec/SplitSizes.h"
#include "runtime/exec/StepWalk.h"
#include "runtime/exec/TensorBindings.h"

#include "llvm/ADT/FunctionExtras.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>

namespace collc::rt {

namespace detail {

struct CopyOp {
  char *Dst;
  const char *Src;
  uint64_t Bytes;
};

/// Wraps an error with where it happened, keeping its kind and peer.
inline llvm::Error inContext(llvm::Error E, const llvm::Twine &Where) {
  ErrorKind Kind = ErrorKind::Backend;
  int64_t Peer = -1;
  std::string Msg;
  llvm::handleAllErrors(
      std::move(E),
      [&](const RuntimeError &R) {
        Kind = R.kind();
        Peer = R.peer();
        Msg = R.text();
      },
      [&](const llvm::ErrorInfoBase &B) { Msg = B.message(); });
  return makeError(Kind, Where + ": " + Msg, Peer);
}

inline double microsSince(std::chrono::steady_clock::time_point Origin) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - Origin)
      .count();
}

} // namespace detail

template <ExecutorDriver D> class DriverExecutor : public Executor {
public:
  DriverExecutor(const plan::Plan &P, int64_t Rank, ExecutorOptions Opts)
      : P(P), Rank(Rank), Opts(std::move(Opts)), Bindings(P, Rank),
        Stream(D::createStream("executor.comm")),
        Origin(std::chrono::steady_clock::now()) {
    startRecord(std::make_unique<FlightRecorder>(P, Rank, D::name(), this->Opts.Record));
  }

  /// Joins the communicators and allocates the buffers.
  llvm::Error init() {
    if (Opts.Device != -1)
      return makeError(ErrorKind::InvalidArgument,
                       llvm::formatv("device {0}: the {1} backend runs on the host, on no "
                                     "device (expected -1)",
                                     Opts.Device, D::name()));
    if (Rank < 0 || Rank >= P.World)
      return makeError(
          ErrorKind::InvalidArgument,
          llvm::formatv("rank {0} is not in 0..{1} of plan @{2}", Rank, P.World - 1, P.Program));
    // A comm stream whose thread could not start (HostStream.h) says so
    // before any group is joined.
    if (llvm::Error E = D::synchronize(D::streamOf(Stream)))
      return E;
    auto WorldComm = join(Opts.CommPrefix + "/#world", P.World, Rank);
    if (!WorldComm)
      return WorldComm.takeError();
    World = *WorldComm;
    for (size_t G = 0; G != P.Groups.size(); ++G) {
      const plan::Group &Grp = P.Groups[G];
      typename D::Communicator C{};
      if constexpr (requires { D::GroupsBySplit; }) {
        // A backend that cannot join by name (MPI) splits the world: a
        // collective of every rank, in plan group order (the same on every
        // rank); ranks outside the group take part with no color.
        int Sub = int(Grp.SubgroupOf[Rank]);
        auto J = D::split(World, Sub >= 0 ? Sub : -1, Sub >= 0 ? int(Grp.LocalRank[Rank]) : 0);
        if (!J)
          return J.takeError();
        C = *J;
        if (C)
          D::setTimeout(C, Opts.Timeout);
      } else if (Grp.SubgroupOf[Rank] >= 0) {
        auto J = joinGroupOf<D>(
            World, Grp.Subgroups[Grp.SubgroupOf[Rank]],
            llvm::formatv("{0}/@{1}/{2}", Opts.CommPrefix, Grp.Name, Grp.SubgroupOf[Rank]).str(),
            Grp.LocalRank[Rank], Opts.Timeout);
        if (!J)
          return J.takeError();
        C = *J;
      }
      GroupComms.push_back(C);
    }
    uint64_t Align = std::max<uint64_t>(64, P.Alignment);
    // Where the driver shares memory among a host's processes, the buffers
    // and the tensors bindOwnMemory may own live there (every member of
    // the world asks, at the same point).
    if constexpr (requires { D::shareHostMemory(World, uint64_t()); }) {
      uint64_t Need = 0;
      for (const plan::Buffer &B : P.Buffers)
        Need += HostBlock::footprint(B.Bytes, Align);
      for (const std::string &Name : Bindings.unbound())
        Need += HostBlock::footprint(bytes(*Bindings.indexOf(Name)), 64);
      llvm::Expected<std::shared_ptr<HostArena>> A = D::shareHostMemory(World, Need);
      if (!A)
        return A.takeError();
      Arena = std::move(*A);
    }
    for (size_t B = 0; B != P.Buffers.size(); ++B) {
      // Zeroed: the pages are touched now, not during a step.
      Buffers.emplace_back(Arena.get(), P.Buffers[B].Bytes, Align);
      if (!Buffers.back().data())
        return makeError(ErrorKind::InvalidArgument,
                         llvm::formatv("buffer #{0} of plan @{1}: cannot allocate {2} bytes on "
                                       "this host",
                                       B, P.Program, P.Buffers[B].Bytes));
    }
    for (size_t B = 0; B != P.Buffers.size(); ++B)
      for (const plan::Slot &S : P.Buffers[B].Slots)
        if (S.Mode == plan::SlotMode::View && P.Buffers[B].Segments == 1)
          Bindings.setView(S.Tensor, Buffers[B].data() + S.Offset);
    return llvm::Error::success();
  }

  int64_t rank() const override { return Rank; }
  const plan::Plan &plan() const override { return P; }
  llvm::StringRef backend() const override { return D::name(); }
  /// LLVM-style RTTI: an executor of this class runs on driver D.
  static bool classof(const Executor *X) { return X->driverTag() == tag(); }
  const void *driverTag() const override { return tag(); }

  /// The path of the world's and each of this rank's groups' bytes, where
  /// the driver chooses one (D::pathOf).
  std::vector<GroupPath> paths() const override {
    std::vector<GroupPath> Paths;
    if constexpr (requires { D::pathOf(World); }) {
      Paths.push_back(pathEntry("the world", P.World, Rank == 0, World));
      for (size_t G = 0; G != P.Groups.size(); ++G) {
        const plan::Group &Grp = P.Groups[G];
        int64_t Sub = Grp.SubgroupOf[Rank];
        if (Sub < 0 || !GroupComms[G])
          continue;
        std::string Name = "@" + Grp.Name;
        if (Grp.Subgroups.size() > 1)
          Name += llvm::formatv("#{0}", Sub).str();
        Paths.push_back(pathEntry(Name, int64_t(Grp.Subgroups[Sub].size()),
                                  Grp.LocalRank[Rank] == 0, GroupComms[G]));
      }
    }
    return Paths;
  }

  /// The communicator on which this rank runs comm #\p Comm of the plan
  /// (its group's, or the world's). For a backend's own accessors, which
  /// tests and `collc bench` use (runtime/gloo/GlooCommContext.h); the
  /// replay itself resolves each launch's at capture.
  llvm::Expected<typename D::Communicator> communicatorOf(uint32_t Comm) const {
    if (Comm >= P.Comms.size())
      return makeError(ErrorKind::InvalidArgument,
                       llvm::formatv("comm #{0} is not in 0..{1} of plan @{2}", Comm,
                                     int64_t(P.Comms.size()) - 1, P.Program));
    const plan::Comm &C = P.Comms[Comm];
    if (C.Group >= 0 && !GroupComms[C.Group])
      return makeError(ErrorKind::InvalidArgument,
                       llvm::formatv("rank {0} takes no part in comm #{1} {2} in @{3}", Rank,
                                     Comm, commKindName(C.Kind), P.Groups[C.Group].Name));
    return commFor(C);
  }

  llvm::Error bind(llvm::StringRef Name, void *Data, uint64_t Bytes) override {
    if (llvm::Error E = Bindings.bind(Name, Data, Bytes))
      return E;
    Captured = false; // pointers are resolved at capture
    return llvm::Error::success();
  }

  llvm::Expected<llvm::MutableArrayRef<char>> tensor(llvm::StringRef Name) override {
    llvm::Expected<uint32_t> T = Bindings.indexOf(Name);
    if (!T)
      return T.takeError();
    llvm::Expected<char *> Home = Bindings.lookup(Name);
    if (!Home)
      return Home.takeError();
    return llvm::MutableArrayRef<char>(*Home, P.Tensors[*T].Type.bytes());
  }

  llvm::Error bindOwnMemory() override {
    for (const std::string &Name : Bindings.unbound()) {
      uint32_t T = *Bindings.indexOf(Name);
      Owned.emplace_back(Arena.get(), bytes(T), 64);
      if (!Owned.back().data())
        return makeError(ErrorKind::InvalidArgument,
                         llvm::formatv("%{0} of plan @{1}: cannot allocate {2} bytes on this host",
                                       Name, P.Program, bytes(T)));
      if (llvm::Error E = bind(Name, Owned.back().data(), bytes(T)))
        return E;
    }
    return llvm::Error::success();
  }

  std::vector<std::string> unboundTensors() const override { return Bindings.unbound(); }
  std::vector<uint32_t> touchedTensors() const override { return Bindings.touched(); }

  llvm::Error capture() override { return failed(captureSteps(), std::nullopt); }

  llvm::Error replay(ComputeCallback RunCompute) override {
    record().beginReplay();
    llvm::Error E = replaySteps(RunCompute, FailedBlames);
    record().endReplay();
    return failed(std::move(E), std::exchange(FailedBlames, -1));
  }

private:
  llvm::Error captureSteps() {
    // Where capture sets calls up it is collective throughout: an unbound
    // tensor (or two that overlap) fails this rank's capture only after the
    // digests and the agreement, which tells the other ranks at once
    // instead of leaving them to wait for this one. Elsewhere it fails here.
    constexpr bool SetsUp = requires { typename D::PreparedAllReduce; };
    llvm::Error BadBindings = Bindings.checkBindings("capture");
    if (!SetsUp && BadBindings)
      return BadBindings;
    if (Opts.DigestHandshake && !DigestChecked) {
      if (llvm::Error E = checkDigests())
        return llvm::joinErrors(std::move(BadBindings), std::move(E));
      DigestChecked = true;
    }
    Captured = false; // until every launch is resolved (and set up)
    Instrs.clear();
    Tickets.assign(P.Comms.size(), 0);
    InPlaceOf.assign(P.Comms.size(), NoInPlace);
    if constexpr (SetsUp) {
      if (llvm::Error E = resolveAndSetUp(std::move(BadBindings)))
        return E;
    } else if (llvm::Error E = resolveSteps()) {
      return E;
    }
    Captured = true;
    return llvm::Error::success();
  }

  /// One step; \p Blamed becomes the world rank a failed comm's error
  /// blames.
  llvm::Error replaySteps(ComputeCallback RunCompute, int64_t &Blamed) {
    if (!Captured)
      return makeError(ErrorKind::InvalidArgument,
                       "replay before capture (or after a new binding): call capture() first");
    FlightRecorder &Rec = record();
    // Streams with async launches since their last flush, in launch order.
    llvm::SmallVector<typename D::CommStream, 4> Unflushed;
    for (Instr &I : Instrs) {
      double Start = Opts.Trace ? detail::microsSince(Origin) : 0;
      switch (I.K) {
      case plan::StepKind::Compute:
        // Async launches progress while the model computes: the stream is
        // flushed here rather than at the launch, so a wait that follows a
        // launch at once is run by the waiter alone (on a host stream, a
        // flush may wake a thread, which cost more than a small collective).
        for (typename D::CommStream S : Unflushed)
          D::flush(S);
        Unflushed.clear();
        Rec.atCompute(uint32_t(I.Step));
        if (llvm::Error E = RunCompute(P.Computes[I.Index], I.Index))
          return detail::inContext(std::move(E), where(I));
        break;
      case plan::StepKind::Launch:
        for (const detail::CopyOp &C : I.Copies)
          std::memcpy(C.Dst, C.Src, C.Bytes);
        Rec.issued(uint32_t(I.Step), I.Index, /*Waiting=*/I.Adjacent);
        if (llvm::Error E = I.Issue())
          return commFailed(I, std::move(E), Blamed);
        Tickets[I.Index] = D::record(I.On);
        // Async: progress while the model computes (flushed before the next
        // compute or wait). A blocking comm is waited for next, and the
        // waiting thread runs it.
        if (P.Comms[I.Index].Async && !llvm::is_contained(Unflushed, I.On))
          Unflushed.push_back(I.On);
        break;
      case plan::StepKind::Wait:
        // The waiter runs its own stream; the others' async work (the
        // other half of a p2p batch, a recv posted before this send) must
        // progress meanwhile.
        llvm::erase_if(Unflushed, [&](typename D::CommStream S) {
          if (S == I.On)
            return false;
          D::flush(S);
          return true;
        });
        if (!I.Adjacent)
          Rec.started(uint32_t(I.Step), I.Index);
        if (llvm::Error E = D::waitFor(I.On, Tickets[I.Index]))
          return commFailed(I, std::move(E), Blamed);
        Rec.completed(I.Index);
        for (const detail::CopyOp &C : I.Copies)
          std::memcpy(C.Dst, C.Src, C.Bytes);
        break;
      }
      if (Opts.Trace)
        Events.push_back({eventName(I), category(I), Start, detail::microsSince(Origin) - Start});
    }
    for (auto &[Key, Owner] : PeerStreams)
      if (llvm::Error E = D::synchronize(D::streamOf(Owner)))
        return E;
    return D::synchronize(D::streamOf(Stream));
  }

public:
  /// The world's health and every group's of this rank: a step that broke
  /// a group (its peer lost) is reported by the next health check too.
  llvm::Error health() const override {
    if (llvm::Error E = D::health(World))
      return E;
    for (const typename D::Communicator &C : GroupComms)
      if (C)
        if (llvm::Error E = D::health(C))
          return E;
    return llvm::Error::success();
  }
  llvm::Expected<std::vector<uint32_t>> allGatherWords(llvm::ArrayRef<uint32_t> Mine) override {
    return D::allGatherWords(World, Mine, D::streamOf(Stream));
  }
  const std::vector<TraceEvent> &trace() const override { return Events; }
  void clearTrace() override { Events.clear(); }

private:
  /// \p C's path as the driver reports it (D::pathOf: its name and why).
  static GroupPath pathEntry(std::string Group, int64_t Processes, bool Leads,
                             const typename D::Communicator &C) {
    auto [Path, Why] = D::pathOf(C);
    return {std::move(Group), Processes, std::move(Path), std::move(Why), Leads};
  }

  /// An address unique to this instantiation (classof).
  static const void *tag() {
    static const char Tag = 0;
    return &Tag;
  }

  struct Instr {
    plan::StepKind K;
    uint32_t Index;
    size_t Step;
    std::vector<detail::CopyOp> Copies; ///< packs before a launch, unpacks after a wait
    llvm::unique_function<llvm::Error()> Issue;
    /// Where the driver sets the call up at capture (after every rank
    /// resolved): the launch that replaces Issue, or none (Issue serves).
    llvm::unique_function<llvm::Expected<llvm::unique_function<llvm::Error()>>()> SetUp;
    typename D::CommStream On{}; ///< the comm's stream (streamFor)
    /// A launch waited for by the very next step (a blocking comm), and
    /// that wait: the record starts it as it is issued (one stamp, not two).
    bool Adjacent = false;
  };

  /// Comm \p I's error: recorded as its failure, blaming the world rank of
  /// the peer its backend names (\p Blamed), and said where it happened.
  llvm::Error commFailed(const Instr &I, llvm::Error E, int64_t &Blamed) {
    ErrorKind Kind = ErrorKind::Backend;
    int64_t Peer = -1;
    E = llvm::handleErrors(std::move(E), [&](std::unique_ptr<RuntimeError> R) -> llvm::Error {
      Kind = R->kind();
      Peer = R->peer();
      return llvm::Error(std::move(R));
    });
    Blamed = worldRankOf(P, P.Comms[I.Index].Group, Rank, Peer);
    record().failed(I.Index, Kind, Blamed);
    return detail::inContext(std::move(E), where(I));
  }

  /// Where comm \p C runs on this rank. Collectives share one stream, in
  /// plan order, as every member issues them. A send or recv runs on a
  /// stream of its own peer and direction (and group), so an async one
  /// progresses while later ones are issued (a recv posted before a send,
  /// a ring in one p2p batch) and yet sends to one peer stay in order, as
  /// the peer's recvs match them. A CPU backend's nonblocking pairs, each
  /// completing at its wait.
  typename D::CommStream streamFor(const plan::Comm &C) {
    if (C.Kind != plan::CommKind::Send && C.Kind != plan::CommKind::Recv)
      return D::streamOf(Stream);
    std::tuple<int32_t, int32_t, bool> Key{C.Group, C.Peers[Rank], C.Kind == plan::CommKind::Send};
    auto It = PeerStreams.find(Key);
    if (It == PeerStreams.end())
      It = PeerStreams
               .emplace(Key, D::createStream(llvm::formatv("executor.{0}.{1}",
                                                           std::get<2>(Key) ? "send" : "recv",
                                                           std::get<1>(Key))
                                                 .str()))
               .first;
    return D::streamOf(It->second);
  }

  llvm::Expected<typename D::Communicator> join(const std::string &Name, size_t Size, size_t R) {
    return joinGroup<D>(Name, Size, R, Opts.Timeout);
  }

  std::string where(const Instr &I) const {
    if (I.K == plan::StepKind::Compute)
      return llvm::formatv("rank {0}, step {1} (compute @{2})", Rank, I.Step,
                           P.Computes[I.Index].Name);
    const plan::Comm &C = P.Comms[I.Index];
    std::string G = C.Group >= 0 ? " in @" + P.Groups[C.Group].Name : "";
    return llvm::formatv("rank {0}, step {1} ({2} comm #{3} {4}{5})", Rank, I.Step,
                         stepKindName(I.K), I.Index, commKindName(C.Kind), G);
  }
  std::string eventName(const Instr &I) const {
    if (I.K == plan::StepKind::Compute)
      return "@" + P.Computes[I.Index].Name;
    return llvm::formatv("{0} #{1} {2}", stepKindName(I.K), I.Index,
                         commKindName(P.Comms[I.Index].Kind));
  }
  static const char *category(const Instr &I) {
    switch (I.K) {
    case plan::StepKind::Compute:
      return "compute";
    case plan::StepKind::Launch:
      return "launch";
    case plan::StepKind::Wait:
      return "wait";
    }
    return "";
  }

  /// This rank's steps, each launch resolved (its pointers, its checks).
  llvm::Error resolveSteps() {
    for (size_t S : stepsOfRank(P, Rank)) {
      const plan::Step &St = P.Steps[S];
      Instr I;
      I.K = St.Kind;
      I.Index = St.Index;
      I.Step = S;
      I.On = St.Kind == plan::StepKind::Compute ? nullptr : streamFor(P.Comms[St.Index]);
      if (St.Kind == plan::StepKind::Launch) {
        if (llvm::Error E = resolveLaunch(I))
          return detail::inContext(std::move(E), where(I));
      } else if (St.Kind == plan::StepKind::Wait) {
        addCopies(I, sideOf(P.Comms[I.Index]).OutBuffer, plan::SlotMode::Unpack);
      }
      Instrs.push_back(std::move(I));
    }
    for (size_t K = 1; K < Instrs.size(); ++K)
      if (Instrs[K - 1].K == plan::StepKind::Launch && Instrs[K].K == plan::StepKind::Wait &&
          Instrs[K - 1].Index == Instrs[K].Index)
        Instrs[K - 1].Adjacent = Instrs[K].Adjacent = true;
    return llvm::Error::success();
  }

  /// resolveSteps for a driver that sets calls up. Setting a call up is
  /// collective (mpi: libnbc takes its tag from a counter every member must
  /// advance alike), so nothing queued by an earlier replay may run between
  /// the ranks' set-ups, and a group broken on one rank must not stop its
  /// set-ups half way: the ranks first agree that each is ready and
  /// resolved this capture, then set up in plan order. \p Before: why this
  /// rank cannot capture, found before (the others are told it failed).
  llvm::Error resolveAndSetUp(llvm::Error Before) {
    llvm::Error Resolved = Before ? std::move(Before) : readyToSetUp();
    if (!Resolved)
      Resolved = resolveSteps();
    bool Failed = bool(Resolved);
    if (llvm::Error E = agreeOnCapture(!Failed))
      return llvm::joinErrors(std::move(Resolved), std::move(E));
    if (Failed)
      return Resolved;
    for (Instr &I : Instrs) {
      if (!I.SetUp)
        continue;
      auto Issue = I.SetUp();
      if (!Issue)
        return detail::inContext(Issue.takeError(), where(I));
      if (*Issue)
        I.Issue = std::move(*Issue);
      I.SetUp = nullptr;
    }
    return llvm::Error::success();
  }

  /// Every stream drained (an earlier replay's work done) and every group
  /// of this rank healthy.
  llvm::Error readyToSetUp() {
    for (auto &[Key, Owner] : PeerStreams)
      if (llvm::Error E = D::synchronize(D::streamOf(Owner)))
        return E;
    if (llvm::Error E = D::synchronize(D::streamOf(Stream)))
      return E;
    return health();
  }

  /// Every rank's capture count, whether it resolved (\p Resolved) and
  /// which all_reduces it passes in place, so that all set up or none: a
  /// rank that captures alone (after a bind the others did not make) waits
  /// here until its timeout, naming who did not come, instead of taking
  /// tags the others never take; and an all_reduce that some members pass
  /// in place and others not (MPI asks it of all or none: their calls would
  /// differ) is refused by every rank, naming two of them.
  llvm::Error agreeOnCapture(bool Resolved) {
    ++Captures;
    // Two words, then 2 bits a comm (InPlaceOf), 16 comms a word.
    size_t Stride = 2 + (P.Comms.size() + 15) / 16;
    std::vector<uint32_t> Mine(Stride, 0);
    Mine[0] = Captures;
    Mine[1] = Resolved ? 1u : 0u;
    for (size_t K = 0; K != P.Comms.size() && Resolved; ++K)
      Mine[2 + K / 16] |= uint32_t(InPlaceOf[K]) << (2 * (K % 16));
    auto All = D::allGatherWords(World, Mine, D::streamOf(Stream));
    if (!All)
      return All.takeError();
    auto InPlaceOfRank = [&](int64_t R, size_t K) {
      return ((*All)[size_t(R) * Stride + 2 + K / 16] >> (2 * (K % 16))) & 3;
    };
    for (int64_t R = 0; R != P.World; ++R) {
      uint32_t TheirCaptures = (*All)[size_t(R) * Stride],
               TheyResolved = (*All)[size_t(R) * Stride + 1];
      if (TheirCaptures != Captures)
        return makeError(ErrorKind::InvalidArgument,
                         llvm::formatv("rank {0}: this is its capture #{1} of @{2}, rank {3}'s "
                                       "#{4}: on the {5} backend every rank captures together "
                                       "(after a bind, every rank captures again)",
                                       Rank, Captures, P.Program, R, TheirCaptures, D::name()),
                         R);
      if (!TheyResolved && R != Rank)
        return makeError(ErrorKind::InvalidArgument,
                         llvm::formatv("rank {0}: capture #{1} of @{2} failed on rank {3} (its "
                                       "own error says why), so no rank sets its calls up",
                                       Rank, Captures, P.Program, R),
                         R);
    }
    for (size_t K = 0; K != P.Comms.size(); ++K) {
      int64_t Seen = -1;
      for (int64_t R = 0; R != P.World; ++R) {
        if (InPlaceOfRank(R, K) == NoInPlace)
          continue;
        if (Seen < 0) {
          Seen = R;
          continue;
        }
        if (InPlaceOfRank(R, K) == InPlaceOfRank(Seen, K))
          continue;
        int64_t In = InPlaceOfRank(R, K) == InPlace ? R : Seen, Out = In == R ? Seen : R;
        return makeError(ErrorKind::InvalidArgument,
                         llvm::formatv("rank {0}: all_reduce comm #{1} of @{2}: rank {3} passes it "
                                       "in place (its input and output are the same memory) and "
                                       "rank {4} does not; {5} asks it of every member or none "
                                       "(bind them alike on every rank)",
                                       Rank, K, P.Program, In, Out, D::name()),
                         Rank == In ? Out : In);
      }
    }
    return llvm::Error::success();
  }

  llvm::Error checkDigests() {
    return exchangeDigests(P, Rank, [&](llvm::ArrayRef<uint32_t> Words) {
      return D::allGatherWords(World, Words, D::streamOf(Stream));
    });
  }

  typename D::Resource res(char *Data, uint64_t Bytes) const { return D::resource(Data, Bytes); }

  /// The communicator \p C runs on: its group's (none where this rank is
  /// not in the group), or the world's.
  typename D::Communicator commFor(const plan::Comm &C) const {
    return C.Group >= 0 ? GroupComms[C.Group] : World;
  }

  /// The copies between a bucket buffer and its \p Mode slots' tensors,
  /// segment by segment: into the buffer before a launch (Pack), out of it
  /// after a wait (Unpack).
  void addCopies(Instr &I, int32_t BufIndex, plan::SlotMode Mode) {
    if (BufIndex < 0)
      return;
    const plan::Buffer &B = P.Buffers[BufIndex];
    uint64_t Segment = B.Bytes / B.Segments;
    for (const plan::Slot &S : B.Slots) {
      if (S.Mode != Mode)
        continue;
      uint64_t Chunk = S.Bytes / B.Segments;
      for (int64_t Sg = 0; Sg != B.Segments; ++Sg) {
        char *InBuffer = Buffers[BufIndex].data() + Sg * Segment + S.Offset;
        char *InTensor = Bindings.home(S.Tensor) + Sg * Chunk;
        if (Mode == plan::SlotMode::Pack)
          I.Copies.push_back({InBuffer, InTensor, Chunk});
        else
          I.Copies.push_back({InTensor, InBuffer, Chunk});
      }
    }
  }

  /// What this rank issues \p C with: its tensors and buffers (a joint
  /// comm's are per side). Only asked of comms whose steps run here.
  const plan::CommSide &sideOf(const plan::Comm &C) const {
    const plan::CommSide *Side = C.sideOn(Rank);
    assert(Side && "a validated plan runs a comm's steps on its ranks only");
    return *Side;
  }

  uint64_t elems(uint32_t T) const { return uint64_t(P.Tensors[T].Type.numElements()); }
  uint64_t bytes(uint32_t T) const { return uint64_t(P.Tensors[T].Type.bytes()); }

  llvm::Error resolveLaunch(Instr &I) {
    const plan::Comm &C = P.Comms[I.Index];
    const plan::CommSide &Side = sideOf(C);
    addCopies(I, Side.InBuffer, plan::SlotMode::Pack);
    typename D::Communicator Comm = commFor(C);
    auto S = I.On;
    unsigned ES = elemTypeBytes(C.Elem);
    int64_t N = P.groupSize(C, Rank);
    bool Fused = Side.InBuffer >= 0;
    char *InBuf = Fused ? Buffers[Side.InBuffer].data() : nullptr;
    char *OutBuf = Side.OutBuffer >= 0 ? Buffers[Side.OutBuffer].data() : nullptr;
    uint64_t InBytes = Fused ? P.Buffers[Side.InBuffer].Bytes : 0;
    uint64_t OutBytes = Side.OutBuffer >= 0 ? P.Buffers[Side.OutBuffer].Bytes : 0;
    // The collective's input and output: its bucket buffers when fused,
    // else its one tensor each (none for a barrier).
    auto Operand = [&](char *Buf, uint64_t BufBytes, const std::vector<uint32_t> &Ts) {
      if (Fused)
        return res(Buf, BufBytes);
      return Ts.empty() ? res(nullptr, 0) : res(Bindings.home(Ts[0]), bytes(Ts[0]));
    };
    typename D::Resource Src = Operand(InBuf, InBytes, Side.Inputs);
    typename D::Resource Dst = Operand(OutBuf, OutBytes, Side.Outputs);
    ElemType T = C.Elem;
    ReduceOp Op = C.Reduce;
    double Scale = C.Scale;
    switch (C.Kind) {
    case plan::CommKind::AllReduce: {
      Elements<typename D::DataType> E{T, Src.Bytes / ES};
      I.Issue = [=] { return D::allReduceScaled(Comm, Src, Dst, E, Op, T, Scale, S); };
      // A driver that can set the call up once does it at the end of
      // capture, every rank in plan order (mpi: Open MPI's persistent
      // collectives).
      if constexpr (requires { typename D::PreparedAllReduce; }) {
        // Whether it passes MPI's in place, which the members must agree on
        // (agreeOnCapture).
        if (std::optional<bool> In = D::passesInPlace(Comm, Src, Dst, T, Op))
          InPlaceOf[I.Index] = *In ? InPlace : OutOfPlace;
        I.SetUp = [=]() -> llvm::Expected<llvm::unique_function<llvm::Error()>> {
          auto Prepared = D::prepareAllReduce(Comm, Src, Dst, E, Op, T, Scale);
          if (!Prepared)
            return Prepared.takeError();
          if (!*Prepared)
            return nullptr;
          return [=, Call = std::move(*Prepared)] { return D::allReduce(Call, S); };
        };
      }
      return llvm::Error::success();
    }
    case plan::CommKind::ReduceScatter: {
      Elements<typename D::DataType> E{T, Dst.Bytes / ES};
      I.Issue = [=] { return D::reduceScatterScaled(Comm, Src, Dst, E, Op, T, Scale, S); };
      return llvm::Error::success();
    }
    case plan::CommKind::AllGather: {
      Elements<typename D::DataType> E{T, Src.Bytes / ES};
      I.Issue = [=] { return D::allGather(Comm, Src, Dst, E, S); };
      return llvm::Error::success();
    }
    case plan::CommKind::AllToAll: {
      Elements<typename D::DataType> E{T, Src.Bytes / ES / N};
      I.Issue = [=] { return D::allToAll(Comm, Src, Dst, E, size_t(N), S); };
      return llvm::Error::success();
    }
    case plan::CommKind::Broadcast: {
      size_t Root = size_t(C.Peers[Rank]);
      bool IsRoot = Root == size_t(P.Groups[C.Group].LocalRank[Rank]);
      Elements<typename D::DataType> E{T, Src.Bytes / ES};
      I.Issue = [=] { return D::broadcast(Comm, IsRoot ? &Src : nullptr, Dst, E, Root, S); };
      return llvm::Error::success();
    }
    case plan::CommKind::Send:
    case plan::CommKind::Recv: {
      int64_t Peer = C.Peers[Rank];
      if (C.Group >= 0)
        Peer = P.Groups[C.Group].LocalRank[Peer];
      bool IsSend = C.Kind == plan::CommKind::Send;
      uint32_t Tensor = IsSend ? Side.Inputs[0] : Side.Outputs[0];
      typename D::Resource R = res(Bindings.home(Tensor), bytes(Tensor));
      Elements<typename D::DataType> E{T, elems(Tensor)};
      if (IsSend)
        I.Issue = [=] { return D::send(Comm, R, E, size_t(Peer), S); };
      else
        I.Issue = [=] { return D::recv(Comm, R, E, size_t(Peer), S); };
      return llvm::Error::success();
    }
    case plan::CommKind::Barrier:
      I.Issue = [=] { return D::barrier(Comm, S); };
      return llvm::Error::success();
    case plan::CommKind::AllToAllV:
      return resolveAllToAllV(I, Comm, N);
    }
    return llvm::Error::success();
  }

  /// all_to_all_v moves rows of dimension 0. Static split sizes are known
  /// now; runtime ones are read from the counts tensor at launch and shared
  /// with every rank (all_gather), so that every rank checks every
  /// receiver's capacity and they refuse together.
  llvm::Error resolveAllToAllV(Instr &I, typename D::Communicator Comm, int64_t N) {
    const plan::Comm &C = P.Comms[I.Index];
    const plan::CommSide &Side = sideOf(C);
    auto S = D::streamOf(Stream);
    int64_t Local = P.Groups[C.Group].LocalRank[Rank];
    struct Part {
      typename D::Resource Src, Dst;
      uint64_t RowElems;
    };
    std::vector<Part> Parts;
    int64_t InRows = P.Tensors[Side.Inputs[0]].Type.Shape[0];
    int64_t OutRows = P.Tensors[Side.Outputs[0]].Type.Shape[0];
    for (size_t K = 0; K != Side.Inputs.size(); ++K) {
      uint32_t In = Side.Inputs[K], Out = Side.Outputs[K];
      Parts.push_back({res(Bindings.home(In), bytes(In)), res(Bindings.home(Out), bytes(Out)),
                       elems(In) / std::max<uint64_t>(1, uint64_t(InRows))});
    }
    ElemType T = C.Elem;
    uint32_t Index = I.Index;
    if (Side.Counts < 0) {
      // Static: checked once here, like a runtime matrix at every step.
      llvm::Expected<SplitRows> Rows = checkSplitMatrix(Index, C.Splits, N, Local, InRows, OutRows);
      if (!Rows)
        return Rows.takeError();
      I.Issue = [=, Rows = std::move(*Rows)] {
        return issueParts(Comm, Parts, T, Rows.Send, Rows.Recv, S);
      };
      return llvm::Error::success();
    }
    ElemType CountsType = P.Tensors[Side.Counts].Type.Elem;
    char *CountsData = Bindings.home(Side.Counts);
    FlightRecorder *Rec = &record();
    I.Issue = [=]() -> llvm::Error {
      std::vector<int64_t> Row;
      for (int64_t J = 0; J != N; ++J) {
        llvm::Expected<int64_t> V = readSplitSize(CountsType, CountsData, uint64_t(J));
        if (!V)
          return V.takeError();
        Row.push_back(*V);
      }
      // What this rank says, recorded before anyone can refuse it.
      Rec->splitRow(Index, Row);
      // The row travels as 32-bit words: refuse what does not fit before
      // anything is exchanged (every entry is at most the input).
      std::vector<uint32_t> Mine;
      for (int64_t J = 0; J != N; ++J) {
        if (Row[J] < 0 || Row[J] > InRows || Row[J] > int64_t(UINT32_MAX))
          return makeError(ErrorKind::InvalidArgument,
                           llvm::formatv("all_to_all_v comm #{0}: rank {1} would send {2} rows "
                                         "to rank {3} (the input has {4})",
                                         Index, Local, Row[J], J, InRows));
        Mine.push_back(uint32_t(Row[J]));
      }
      // Everyone's split sizes: a collective of the group, on this thread.
      if (llvm::Error E = D::synchronize(S))
        return E;
      auto All = D::allGatherWords(Comm, Mine, S);
      if (!All)
        return All.takeError();
      std::vector<int64_t> Matrix(All->begin(), All->end());
      llvm::Expected<SplitRows> Rows = checkSplitMatrix(Index, Matrix, N, Local, InRows, OutRows);
      if (!Rows)
        return Rows.takeError();
      return issueParts(Comm, Parts, T, Rows->Send, Rows->Recv, S);
    };
    return llvm::Error::success();
  }

  template <typename PartT>
  static llvm::Error issueParts(const typename D::Communicator &Comm,
                                const std::vector<PartT> &Parts, ElemType T,
                                const std::vector<uint64_t> &SendRows,
                                const std::vector<uint64_t> &RecvRows, typename D::CommStream S) {
    for (const PartT &Pt : Parts) {
      std::vector<uint64_t> Send, Recv;
      for (uint64_t X : SendRows)
        Send.push_back(X * Pt.RowElems);
      for (uint64_t X : RecvRows)
        Recv.push_back(X * Pt.RowElems);
      if (llvm::Error E = D::allToAllV(Comm, Pt.Src, Pt.Dst, T, Send, Recv, S))
        return E;
    }
    return llvm::Error::success();
  }

  const plan::Plan &P;
  int64_t Rank;
  ExecutorOptions Opts;
  TensorBindings Bindings;
  typename D::Communicator World{};
  std::vector<typename D::Communicator> GroupComms;
  /// The driver's shared memory, where it gives some (before the buffers
  /// in it, so it goes after them).
  std::shared_ptr<HostArena> Arena;
  /// Before the streams, so destroyed after them: a stream runs what is
  /// still queued (after a replay that failed half way) before it goes.
  std::vector<HostBlock> Buffers;
  /// The tensors bound by bindOwnMemory().
  std::vector<HostBlock> Owned;
  typename D::StreamOwner Stream;
  /// Point-to-point streams by (group, peer, is send); ordered, so they are
  /// synchronized in one order.
  std::map<std::tuple<int32_t, int32_t, bool>, typename D::StreamOwner> PeerStreams;
  std::vector<Instr> Instrs;
  std::vector<uint64_t> Tickets;
  bool Captured = false;
  bool DigestChecked = false;
  /// Captures so far (agreeOnCapture).
  uint32_t Captures = 0;
  /// Per comm, whether this rank passes it in place, where the driver says
  /// that must be alike on every member (agreeOnCapture).
  enum : uint8_t { NoInPlace, InPlace, OutOfPlace };
  std::vector<uint8_t> InPlaceOf;
  std::chrono::steady_clock::time_point Origin;
  std::vector<TraceEvent> Events;
  /// The world rank the failing comm of the last replay blamed.
  int64_t FailedBlames = -1;
};

/// The executor of rank \p Rank of \p P on driver \p D, initialized (the
/// digest handshake included): what every host backend's factory returns.
template <typename D>
llvm::Expected<std::unique_ptr<Executor>> startDriverExecutor(const plan::Plan &P, int64_t Rank,
                                                              ExecutorOptions Opts) {
  auto E = std::make_unique<DriverExecutor<D>>(P, Rank, std::move(Opts));
  if (llvm::Error Err = E->init())
    return Err;
  return std::unique_ptr<Executor>(std::move(E));
}

} // namespace collc::rt

#endif
