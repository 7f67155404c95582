//===- runtime/mpi/ArrivalBoard.cpp - Who has arrived where, readable by all -===//

#include "runtime/mpi/ArrivalBoard.h"

#include "runtime/mpi/AbandonedMemory.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <atomic>
#include <sched.h>

using namespace llvm;

namespace collc::rt::mpi {

namespace {
std::atomic<ArrivalBoard *> Current{nullptr};

uint64_t load(const uint64_t *Word) { return __atomic_load_n(Word, __ATOMIC_ACQUIRE); }

/// Word offsets in a record.
constexpr unsigned LastGroup = 0, LastSeq = 1;
constexpr unsigned entryKey(unsigned E) { return 2 + 4 * E; }
constexpr unsigned entrySeq(unsigned E) { return 3 + 4 * E; }
constexpr unsigned entryVerdict(unsigned E) { return 4 + 4 * E; }
constexpr unsigned entryGated(unsigned E) { return 5 + 4 * E; }
/// Of an entry's words, from its key.
constexpr unsigned SeqOffset = 1, VerdictOffset = 2, GatedOffset = 3;

/// A verdict word: the collective's number, whether it passed, by whom
/// (0: none yet).
constexpr unsigned ByBits = 23;
uint64_t verdictWord(uint64_t Seq, ArrivalBoard::Verdict V) {
  return Seq << (ByBits + 1) | uint64_t(V.Passed) << ByBits |
         (uint64_t(V.By) & ((1u << ByBits) - 1));
}
uint64_t verdictSeq(uint64_t Word) { return Word >> (ByBits + 1); }
ArrivalBoard::Verdict verdictOf(uint64_t Word) {
  return {bool(Word >> ByBits & 1), int(Word & ((1u << ByBits) - 1))};
}

ArrivalBoard::Record recordOf(const uint64_t *W) {
  ArrivalBoard::Record R;
  R.Last = {W[LastGroup], W[LastSeq]};
  for (unsigned E = 0; E != ArrivalBoard::GroupEntries; ++E)
    R.Groups[E] = {W[entryKey(E)], W[entrySeq(E)]};
  return R;
}

Error boardError(StringRef Call) {
  return makeError(ErrorKind::Backend, formatv("{0} of the arrival board failed", Call));
}
} // namespace

ArrivalBoard *arrivalBoard() { return Current.load(std::memory_order_acquire); }
void setArrivalBoard(ArrivalBoard *B) { Current.store(B, std::memory_order_release); }

std::optional<uint64_t> ArrivalBoard::Record::seqOf(uint64_t Key) const {
  for (const Slot &S : Groups)
    if (S.Group == Key)
      return S.Seq;
  return std::nullopt;
}

Expected<std::unique_ptr<ArrivalBoard>> ArrivalBoard::create() {
  std::unique_ptr<ArrivalBoard> B(new ArrivalBoard());
  if (Error E = B->allocate())
    return E;
  return B;
}

Error ArrivalBoard::allocate() {
  MPI_Comm_dup(MPI_COMM_WORLD, &World);
  MPI_Comm_set_errhandler(World, MPI_ERRORS_RETURN);
  if (MPI_Comm_split_type(World, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &Host) != MPI_SUCCESS) {
    Host = MPI_COMM_NULL;
    return boardError("MPI_Comm_split_type");
  }
  void *Base = nullptr;
  if (MPI_Win_allocate(Words * sizeof(uint64_t), sizeof(uint64_t), MPI_INFO_NULL, World, &Base,
                       &Win) != MPI_SUCCESS) {
    Win = MPI_WIN_NULL;
    return boardError("MPI_Win_allocate");
  }
  Mine = static_cast<uint64_t *>(Base);
  if (MPI_Win_allocate_shared(Words * sizeof(uint64_t), sizeof(uint64_t), MPI_INFO_NULL, Host,
                              &Base, &HostWin) != MPI_SUCCESS) {
    HostWin = MPI_WIN_NULL;
    return boardError("MPI_Win_allocate_shared");
  }
  MineShared = static_cast<uint64_t *>(Base);
  for (unsigned W = 0; W != Words; ++W)
    Mine[W] = MineShared[W] = 0;
  MPI_Win_set_errhandler(Win, MPI_ERRORS_RETURN);
  MPI_Win_set_errhandler(HostWin, MPI_ERRORS_RETURN);

  // Where each process of this host keeps its record, by world rank.
  int WorldSize = 0, HostSize = 0;
  MPI_Comm_size(World, &WorldSize);
  MPI_Comm_size(Host, &HostSize);
  Direct.assign(size_t(WorldSize), nullptr);
  MPI_Group WorldGroup = MPI_GROUP_NULL, HostGroup = MPI_GROUP_NULL;
  MPI_Comm_group(World, &WorldGroup);
  MPI_Comm_group(Host, &HostGroup);
  std::vector<int> HostRanks(static_cast<size_t>(HostSize)),
      WorldRanks(static_cast<size_t>(HostSize));
  for (int H = 0; H != HostSize; ++H)
    HostRanks[size_t(H)] = H;
  MPI_Group_translate_ranks(HostGroup, HostSize, HostRanks.data(), WorldGroup, WorldRanks.data());
  MPI_Group_free(&HostGroup);
  MPI_Group_free(&WorldGroup);
  for (int H = 0; H != HostSize; ++H) {
    MPI_Aint Size = 0;
    int Unit = 0;
    void *Ptr = nullptr;
    if (MPI_Win_shared_query(HostWin, H, &Size, &Unit, &Ptr) != MPI_SUCCESS)
      return boardError("MPI_Win_shared_query");
    int W = WorldRanks[size_t(H)];
    if (W >= 0 && W < WorldSize && Size >= MPI_Aint(Words * sizeof(uint64_t)))
      Direct[size_t(W)] = static_cast<uint64_t *>(Ptr);
  }
  // One passive epoch per window for the board's life: reads need no other
  // call.
  if (MPI_Win_lock_all(MPI_MODE_NOCHECK, Win) != MPI_SUCCESS ||
      MPI_Win_lock_all(MPI_MODE_NOCHECK, HostWin) != MPI_SUCCESS)
    return boardError("MPI_Win_lock_all");
  // No one reads a record before its owner zeroed it.
  if (MPI_Barrier(World) != MPI_SUCCESS)
    return boardError("MPI_Barrier");
  return Error::success();
}

ArrivalBoard::~ArrivalBoard() {
  for (MPI_Win *W : {&HostWin, &Win})
    if (*W != MPI_WIN_NULL) {
      MPI_Win_unlock_all(*W);
      MPI_Win_free(W);
    }
  for (MPI_Comm *C : {&Host, &World})
    if (*C != MPI_COMM_NULL)
      MPI_Comm_free(C);
}

uint64_t ArrivalBoard::nextOrdinal(StringRef Name) {
  std::lock_guard<std::mutex> L(M);
  return Adopted.lookup(Name);
}

uint64_t ArrivalBoard::settle(StringRef Name, uint64_t Ordinal) {
  std::lock_guard<std::mutex> L(M);
  uint64_t &Next = Adopted[Name];
  Next = std::max(Next, Ordinal + 1);
  return xxHash64(formatv("{0}#{1}", Name, Ordinal).str()) | 1;
}

void ArrivalBoard::store(unsigned Word, uint64_t Value) {
  __atomic_store_n(&Mine[Word], Value, __ATOMIC_RELEASE);
  __atomic_store_n(&MineShared[Word], Value, __ATOMIC_RELEASE);
}

int ArrivalBoard::reserve() {
  std::lock_guard<std::mutex> L(M);
  for (unsigned E = 0; E != GroupEntries; ++E)
    if (!Taken[E]) {
      Taken[E] = true;
      return int(E);
    }
  return -1;
}

void ArrivalBoard::assign(int Entry, uint64_t Key) {
  // The number first: a reader that finds the key finds this group's.
  store(entrySeq(unsigned(Entry)), 0);
  store(entryVerdict(unsigned(Entry)), 0);
  store(entryGated(unsigned(Entry)), 0);
  store(entryKey(unsigned(Entry)), Key);
}

void ArrivalBoard::release(int Entry) {
  if (Entry < 0)
    return;
  std::lock_guard<std::mutex> L(M);
  store(entryKey(unsigned(Entry)), 0);
  Taken[unsigned(Entry)] = false;
}

void ArrivalBoard::publish(uint64_t Key, int Entry, uint64_t Seq, bool Gated) {
  // Gated before the number: a reader that finds the number finds it.
  if (Entry >= 0 && Gated)
    store(entryGated(unsigned(Entry)), Seq);
  if (Entry >= 0)
    store(entrySeq(unsigned(Entry)), Seq);
  store(LastGroup, Key);
  store(LastSeq, Seq);
}

bool ArrivalBoard::readsDirectly(int WorldRank) const {
  return WorldRank >= 0 && size_t(WorldRank) < Direct.size() && Direct[size_t(WorldRank)];
}

uint64_t *ArrivalBoard::directEntry(int WorldRank, uint64_t Key) const {
  uint64_t *W = Direct[size_t(WorldRank)];
  for (unsigned E = 0; E != GroupEntries; ++E)
    if (load(&W[entryKey(E)]) == Key)
      return &W[entryKey(E)];
  return nullptr;
}

std::optional<ArrivalBoard::Arrival> ArrivalBoard::directArrival(int WorldRank,
                                                                 uint64_t Key) const {
  uint64_t *E = directEntry(WorldRank, Key);
  if (!E)
    return std::nullopt;
  Arrival A;
  A.Seq = load(&E[SeqOffset]);
  A.Gated = load(&E[GatedOffset]);
  // Still the key: the entry was not given to another group meanwhile.
  if (load(&E[0]) != Key)
    return std::nullopt;
  return A;
}

std::optional<ArrivalBoard::Verdict> ArrivalBoard::verdict(int RootWorldRank, uint64_t Key,
                                                           uint64_t Seq) const {
  uint64_t *E = directEntry(RootWorldRank, Key);
  if (!E)
    return std::nullopt;
  uint64_t Word = load(&E[VerdictOffset]);
  if (verdictSeq(Word) != Seq || load(&E[0]) != Key)
    return std::nullopt;
  return verdictOf(Word);
}

std::optional<ArrivalBoard::Verdict> ArrivalBoard::decide(int RootWorldRank, uint64_t Key,
                                                          uint64_t Seq, Verdict Mine) {
  uint64_t *E = directEntry(RootWorldRank, Key);
  if (!E)
    return std::nullopt;
  uint64_t Word = load(&E[VerdictOffset]);
  // Verdicts only move forward: an earlier collective's may be replaced.
  while (verdictSeq(Word) < Seq)
    if (__atomic_compare_exchange_n(&E[VerdictOffset], &Word, verdictWord(Seq, Mine),
                                    /*weak=*/false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return Mine;
  if (verdictSeq(Word) != Seq || load(&E[0]) != Key)
    return std::nullopt;
  return verdictOf(Word);
}

std::vector<std::optional<ArrivalBoard::Record>>
ArrivalBoard::read(ArrayRef<int> WorldRanks, std::chrono::milliseconds Bound) {
  size_t N = WorldRanks.size();
  std::vector<std::optional<Record>> Out(N);
  auto Values = std::make_unique<std::vector<uint64_t>>(Words * N, 0);
  std::vector<MPI_Request> Reqs(N, MPI_REQUEST_NULL);
  for (size_t I = 0; I != N; ++I) {
    uint64_t *Into = Values->data() + Words * I;
    if (readsDirectly(WorldRanks[I])) {
      const uint64_t *W = Direct[size_t(WorldRanks[I])];
      for (unsigned K = 0; K != Words; ++K)
        Into[K] = load(&W[K]);
      Out[I] = recordOf(Into);
    } else if (MPI_Rget(Into, Words, MPI_UINT64_T, WorldRanks[I], 0, Words, MPI_UINT64_T, Win,
                        &Reqs[I]) != MPI_SUCCESS) {
      Reqs[I] = MPI_REQUEST_NULL;
    }
  }
  auto Deadline = std::chrono::steady_clock::now() + Bound;
  for (bool Waiting = true; Waiting && std::chrono::steady_clock::now() < Deadline;) {
    Waiting = false;
    for (size_t I = 0; I != N; ++I) {
      if (Reqs[I] == MPI_REQUEST_NULL)
        continue;
      int Flag = 0;
      if (MPI_Test(&Reqs[I], &Flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        Reqs[I] = MPI_REQUEST_NULL;
      else if (Flag)
        Out[I] = recordOf(Values->data() + Words * I); // MPI_Test nulled the request
      else
        Waiting = true;
    }
    if (Waiting)
      sched_yield();
  }
  // Reads that did not finish in time write there later.
  if (llvm::any_of(Reqs, [](MPI_Request R) { return R != MPI_REQUEST_NULL; }))
    keepForAbandonedRequest(std::shared_ptr<std::vector<uint64_t>>(std::move(Values)));
  return Out;
}

} // namespace collc::rt::mpi
