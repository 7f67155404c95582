//===- tests/conformance/ConformanceSuite.h - Every op, type, world, size -*- C++ -*-===//
//
// The driver conformance suite: each collective x each element type x each
// world size the harness offers, and within one test every size {0, 1, odd,
// 1 MiB + 3 elements}, in place and out of place where the op has both, and
// every reduce op. Results must equal runtime/verify's reference bit for bit,
// except float reductions on a backend whose harness declares
// `RankOrderedReductions = false`: those are accepted within the bound of
// runtime/verify/ReductionBound.h. Inputs are chosen to make float sums
// order-sensitive (mixed magnitudes, full mantissas) and integer sums wrap,
// so a rank-ordered backend that reorders is caught.
//
// A backend instantiates it with COLLC_CONFORMANCE_SUITE(Harness, Name).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TESTS_CONFORMANCE_CONFORMANCESUITE_H
#define COLLC_TESTS_CONFORMANCE_CONFORMANCESUITE_H

#include "tests/conformance/DriverHarness.h"

#include "plan/Plan.h"
#include "runtime/exec/ElementConversion.h"
#include "runtime/exec/PremulFactor.h"
#include "runtime/verify/PlanChecker.h"
#include "runtime/verify/ReductionBound.h"

#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>

namespace collc::test {

/// The collective under test, one of ir/Collectives.def's communication
/// kinds: Send stands for a send/recv pair, and barrier has nothing to
/// compare (collsUnderTest leaves it and Recv out).
using Coll = plan::CommKind;

inline std::vector<Coll> collsUnderTest() {
  std::vector<Coll> Cs;
  for (unsigned I = 0; I != plan::NumCommKinds; ++I)
    if (Coll(I) != Coll::Recv && Coll(I) != Coll::Barrier)
      Cs.push_back(Coll(I));
  return Cs;
}

inline std::string collName(Coll C) {
  return C == Coll::Send ? "send_recv" : plan::commKindName(C).str();
}

inline uint64_t mix(uint64_t X) {
  X += 0x9e3779b97f4a7c15ull;
  X = (X ^ (X >> 30)) * 0xbf58476d1ce4e5b9ull;
  X = (X ^ (X >> 27)) * 0x94d049bb133111ebull;
  return X ^ (X >> 31);
}

/// Element \p I of the f16, bf16, f32 or f64 input seeded \p Seed (a rank
/// and an input number): values of mixed magnitude with full mantissas
/// (their sums depend on order), small enough that a product over eight
/// ranks stays finite in f32.
inline void conformanceValue(ElemType T, uint64_t Seed, uint64_t I, char *Out) {
  uint64_t H = mix(Seed ^ I);
  float F = float(int64_t(H % 4001) - 2000) / 64.0f * ((H >> 40) & 1 ? 17.0f : 0.03125f);
  switch (T) {
  case ElemType::F32:
    std::memcpy(Out, &F, 4);
    return;
  case ElemType::F64: {
    double D = double(int64_t(H % 400001) - 200000) / 3.0 * ((H >> 40) & 1 ? 1e6 : 1e-3);
    std::memcpy(Out, &D, 8);
    return;
  }
  case ElemType::F16: {
    uint16_t V = rt::floatToHalf(F);
    std::memcpy(Out, &V, 2);
    return;
  }
  case ElemType::BF16: {
    uint16_t V = rt::floatToBf16(F);
    std::memcpy(Out, &V, 2);
    return;
  }
  default:
    std::memcpy(Out, &H, elemTypeBytes(T));
    return;
  }
}

/// \p B made finite: e4m3's NaNs are 0x7f and 0xff; an all-ones exponent
/// is infinity or NaN in e5m2.
inline uint8_t finiteFp8(ElemType T, uint8_t B) {
  if (T == ElemType::F8E4M3)
    return (B & 0x7f) == 0x7f ? uint8_t(B ^ 1) : B;
  return (B & 0x7c) == 0x7c ? uint8_t(B & ~0x40) : B;
}

inline std::vector<char> conformanceInput(ElemType T, int Rank, uint32_t Salt, uint64_t Count) {
  unsigned Size = elemTypeBytes(T);
  std::vector<char> V(Count * Size);
  uint64_t Seed = mix(uint64_t(Rank) * 1000003 + Salt);
  if (isFloatType(T) && Size > 1) {
    for (uint64_t I = 0; I != Count; ++I)
      conformanceValue(T, Seed, I, V.data() + I * Size);
    return V;
  }
  // Integers and fp8: random bits, eight bytes per hash.
  for (uint64_t B = 0; B < V.size(); B += 8) {
    uint64_t H = mix(Seed ^ B);
    std::memcpy(V.data() + B, &H, std::min<uint64_t>(8, V.size() - B));
  }
  if (isFloatType(T))
    for (char &C : V)
      C = char(finiteFp8(T, uint8_t(C)));
  return V;
}

/// Test parameters: the collective, the element type, the world size.
using ConformanceParam = std::tuple<Coll, ElemType, int>;

inline std::string conformanceParamName(const testing::TestParamInfo<ConformanceParam> &Info) {
  auto [C, T, W] = Info.param;
  return llvm::formatv("{0}_{1}_world{2}", collName(C), elemTypeName(T), W).str();
}

inline std::vector<ElemType> allElemTypes() {
  std::vector<ElemType> Ts;
  for (unsigned I = 0; I != NumElemTypes; ++I)
    Ts.push_back(ElemType(I));
  return Ts;
}

/// Whether this process runs rank \p R: every rank for backends whose ranks
/// are threads of one process; only its own for one process per rank
/// (mpi, gloo), whose harness says so with `runsRank`.
template <typename H> bool runsHere(int R) {
  if constexpr (requires { H::runsRank(R); })
    return H::runsRank(R);
  else
    return true;
}

/// What backend \p H promises about reductions: its harness's
/// `static constexpr bool RankOrderedReductions` (absent: true, bit-exact)
/// and `NarrowAccumulatesInF32` (absent: true).
template <typename H> rt::ReductionOrder reductionOrderOf() {
  rt::ReductionOrder O;
  if constexpr (requires { H::RankOrderedReductions; })
    O.RankOrdered = H::RankOrderedReductions;
  if constexpr (requires { H::NarrowAccumulatesInF32; })
    O.NarrowInF32 = H::NarrowAccumulatesInF32;
  return O;
}

/// Compares \p Got with \p Want, the reference's result of \p Reduction
/// (or a copy, when null), from byte \p Offset of \p Got. Returns "" when
/// acceptable, else the first bad element with both values in hex and the
/// bound that was exceeded.
inline std::string compareResult(ElemType T, const std::vector<char> &Got, uint64_t Offset,
                                 const std::vector<char> &Want,
                                 const rt::ReductionSources *Reduction, rt::ReductionOrder Order) {
  unsigned Size = elemTypeBytes(T);
  if (Want.empty())
    return "";
  llvm::ArrayRef<char> G(Got.data() + Offset, Want.size());
  uint64_t I = 0;
  std::string Allowed;
  if (Reduction) {
    llvm::Optional<rt::UnacceptableElement> U = rt::firstUnacceptable(*Reduction, G, Want, Order);
    if (!U)
      return "";
    I = U->Index;
    Allowed = ", allowed " + rt::describeBound(U->Verdict);
  } else {
    if (std::memcmp(G.data(), Want.data(), Want.size()) == 0)
      return "";
    while (std::memcmp(G.data() + I * Size, Want.data() + I * Size, Size) == 0)
      ++I;
  }
  auto Hex = [&](const char *P) {
    std::string S;
    for (unsigned B = Size; B-- > 0;)
      S += llvm::formatv("{0:x-2}", uint8_t(P[B])).str();
    return S;
  };
  return llvm::formatv("element {0} is 0x{1}, the reference 0x{2}{3}", I, Hex(G.data() + I * Size),
                       Hex(Want.data() + I * Size), Allowed)
      .str();
}

/// Whether backend \p H keeps one communicator per world for the whole
/// suite: its harness's `static constexpr bool ShareCommunicators` (absent:
/// false, each case joins its own). NCCL's say so: each of its inits
/// searches the topology, which would cost more than the case.
template <typename H> constexpr bool sharesCommunicators() {
  if constexpr (requires { H::ShareCommunicators; })
    return H::ShareCommunicators;
  else
    return false;
}

template <typename H> class ConformanceTest : public testing::TestWithParam<ConformanceParam> {
protected:
  using D = typename H::Driver;
  using Buffer = typename H::Buffer;

  void SetUp() override {
    if (std::string Why = H::unavailable(); !Why.empty())
      GTEST_SKIP() << Why;
    std::tie(Op, T, World) = GetParam();
    Size = elemTypeBytes(T);
    Comms.resize(World);
    Streams.resize(World);
    if constexpr (sharesCommunicators<H>())
      if (auto It = shared().find(World); It != shared().end()) {
        Comms = It->second;
        H::runRanks(World, [&](int R) { Streams[R] = D::createStream("conformance"); });
        return;
      }
    static std::atomic<unsigned> Counter{0};
    std::string Name = llvm::formatv("conformance.{0}.{1}", H::name(), Counter++).str();
    std::vector<std::string> Errors(World);
    H::runRanks(World, [&](int R) {
      llvm::Expected<typename D::UniqueId> Id = D::groupId({Name});
      if (!Id) {
        Errors[R] = llvm::toString(Id.takeError());
        return;
      }
      llvm::Expected<typename D::Communicator> C = D::join(*Id, World, R);
      if (!C) {
        Errors[R] = llvm::toString(C.takeError());
        return;
      }
      Comms[R] = std::move(*C);
      Streams[R] = D::createStream("conformance");
    });
    for (int R = 0; R != World; ++R)
      ASSERT_EQ(Errors[R], "") << "rank " << R << " could not join";
    if constexpr (sharesCommunicators<H>())
      shared()[World] = Comms;
  }

  /// The communicators of each world, where the harness shares them: made
  /// once and kept to the process's end (never freed: a communicator torn
  /// down while the process exits may wait on a runtime already gone).
  static std::map<int, std::vector<typename D::Communicator>> &shared() {
    static auto *Shared = new std::map<int, std::vector<typename D::Communicator>>();
    return *Shared;
  }

  /// Sizes in elements: empty, one, odd, and 1 MiB plus three elements (per
  /// rank's buffer: ops whose buffers hold a chunk per rank get 1 MiB over
  /// the world size, plus three). COLLC_CONFORMANCE_BIG_BYTES shrinks the
  /// large size for the slow sanitizer builds.
  std::vector<uint64_t> counts() const {
    static const uint64_t Big = [] {
      const char *Env = getenv("COLLC_CONFORMANCE_BIG_BYTES");
      return Env ? std::max<uint64_t>(64, strtoull(Env, nullptr, 10)) : uint64_t(1) << 20;
    }();
    bool Chunked = Op == Coll::ReduceScatter || Op == Coll::AllGather || Op == Coll::AllToAll ||
                   Op == Coll::AllToAllV;
    return {0, 1, 37, Big / Size / (Chunked ? World : 1) + 3};
  }

  /// \p Count elements of the test's type, as the driver names types.
  rt::Elements<typename D::DataType> elems(uint64_t Count) const {
    llvm::Expected<rt::Elements<typename D::DataType>> E = D::elements(T, Count * Size);
    if (!E) {
      ADD_FAILURE() << H::name() << " refuses " << elemTypeName(T).str() << ": "
                    << llvm::toString(E.takeError());
      return {};
    }
    return *E;
  }

  /// Issues one operation on every rank (\p Issue enqueues rank R's part),
  /// synchronizes, and fails the test on any error.
  void onEveryRank(const std::string &What,
                   llvm::function_ref<llvm::Error(int R, const typename D::Communicator &,
                                                  typename D::CommStream)>
                       Issue) {
    std::vector<std::string> Errors(World);
    H::runRanks(World, [&](int R) {
      typename D::CommStream S = D::streamOf(Streams[R]);
      llvm::Error E = Issue(R, Comms[R], S);
      if (!E)
        E = D::synchronize(S);
      if (E)
        Errors[R] = llvm::toString(std::move(E));
    });
    for (int R = 0; R != World; ++R)
      EXPECT_EQ(Errors[R], "") << What << " failed on rank " << R;
  }

  /// Compares rank \p R's result bytes [Offset, Offset + Want.size()) of
  /// \p Got with \p Want (the reference's result of \p Reduction, if any),
  /// naming the first unacceptable element.
  void expectBytes(const std::string &What, int R, const std::vector<char> &Got, uint64_t Offset,
                   const std::vector<char> &Want, const rt::ReductionSources *Reduction = nullptr) {
    if (!runsHere<H>(R))
      return; // another process ran rank R and checks it there
    ASSERT_GE(Got.size(), Offset + Want.size());
    std::string Bad = compareResult(T, Got, Offset, Want, Reduction, reductionOrderOf<H>());
    if (!Bad.empty())
      ADD_FAILURE() << What << ": rank " << R << " " << Bad;
  }

  /// \p In reduced with \p RO from element \p First on, as
  /// ReductionBound.h describes it; \p Srcs holds the pointers.
  rt::ReductionSources sources(const std::vector<std::vector<char>> &In,
                               std::vector<const char *> &Srcs, ReduceOp RO, double Scale,
                               uint64_t First) const {
    Srcs.clear();
    for (const auto &V : In)
      Srcs.push_back(V.data());
    return {T, RO, Scale, Srcs.data(), unsigned(World), First};
  }

  std::vector<std::vector<char>> inputs(uint32_t Salt, uint64_t Count) const {
    std::vector<std::vector<char>> In;
    for (int R = 0; R != World; ++R)
      In.push_back(conformanceInput(T, R, Salt, Count));
    return In;
  }

  std::vector<char> reduced(const std::vector<std::vector<char>> &In, ReduceOp RO, double Scale,
                            uint64_t First, uint64_t Count) const {
    std::vector<const char *> Srcs;
    rt::ReductionSources Red = sources(In, Srcs, RO, Scale, First);
    std::vector<char> Out(Count * Size);
    for (uint64_t I = 0; I != Count; ++I)
      rt::referenceReduce(T, RO, Scale, Red.Srcs, Red.N, First + I, Out.data() + I * Size);
    return Out;
  }

  /// The reduce ops with the factor each uses (premul_sum scales).
  std::vector<std::pair<ReduceOp, double>> reduceOps() const {
    double Factor = isFloatType(T) ? 0.5 : 3.0;
    return {{ReduceOp::Sum, 1.0}, {ReduceOp::Prod, 1.0}, {ReduceOp::Min, 1.0},
            {ReduceOp::Max, 1.0}, {ReduceOp::Avg, 1.0},  {ReduceOp::PremulSum, Factor}};
  }

  void run() {
    uint32_t Salt = 0;
    for (uint64_t Count : counts()) {
      switch (Op) {
      case Coll::AllReduce:
        for (auto [RO, Scale] : reduceOps())
          checkAllReduce(Count, RO, Scale, ++Salt);
        if (Count == 37)
          checkPremulFactor(Count);
        break;
      case Coll::ReduceScatter:
        for (auto [RO, Scale] : reduceOps())
          checkReduceScatter(Count, RO, Scale, ++Salt);
        break;
      case Coll::AllGather:
        for (bool InPlace : {false, true})
          checkAllGather(Count, InPlace, ++Salt);
        break;
      case Coll::Broadcast:
        for (bool InPlace : {false, true})
          checkBroadcast(Count, InPlace, ++Salt);
        break;
      case Coll::AllToAll:
        checkAllToAll(Count, ++Salt);
        break;
      case Coll::AllToAllV:
        checkAllToAllV(Count, ++Salt);
        break;
      case Coll::Send:
        checkSendRecv(Count, ++Salt);
        break;
      case Coll::Recv:
      case Coll::Barrier:
        FAIL() << "not under test: " << collName(Op);
      }
      if (HasFailure())
        return; // the first failing size says enough
    }
  }

  std::string label(uint64_t Count, const char *Extra = "") const {
    return llvm::formatv("{0} {1}[{2}] over {3} ranks{4}", collName(Op), elemTypeName(T), Count,
                         World, Extra)
        .str();
  }

  /// Out of place, then in place, on the same inputs.
  void checkAllReduce(uint64_t Count, ReduceOp RO, double Scale, uint32_t Salt) {
    auto In = inputs(Salt, Count);
    std::vector<char> Want = reduced(In, RO, Scale, 0, Count);
    std::vector<const char *> Srcs;
    rt::ReductionSources Red = sources(In, Srcs, RO, Scale, 0);
    for (bool InPlace : {false, true}) {
      std::vector<std::optional<Buffer>> Src(World), Dst(World);
      for (int R = 0; R != World; ++R) {
        Src[R].emplace(Count * Size);
        Src[R]->write(In[R]);
        if (!InPlace)
          Dst[R].emplace(Count * Size);
      }
      std::string What = label(
          Count,
          llvm::formatv(" {0}{1}", reduceOpName(RO), InPlace ? " in place" : "").str().c_str());
      onEveryRank(What, [&](int R, const auto &C, auto S) {
        Buffer &Out = InPlace ? *Src[R] : *Dst[R];
        return D::allReduceScaled(C, Src[R]->resource(), Out.resource(), elems(Count), RO, T, Scale, S);
      });
      for (int R = 0; R != World; ++R)
        expectBytes(What, R, (InPlace ? *Src[R] : *Dst[R]).read(), 0, Want, &Red);
    }
  }

  /// premul_sum multiplies by the factor as a value of the element type
  /// (ir/PremulFactor.h), on every backend alike (NCCL reads it so): 0.3 is
  /// 0.30078125 over bf16 and 0.3125 over f8e4m3, and 3 over u8 wraps 96 * 3
  /// to 32. Rank 0 gives 96 (a value of every type) and the others 0, so the
  /// result is exact whatever the order: 96 times the factor, rounded once
  /// (integers: wrapped).
  void checkPremulFactor(uint64_t Count) {
    double Factor = isFloatType(T) ? 0.3 : 3.0;
    double Value = rt::premulFactorValue(T, Factor);
    // The narrow floats multiply in f32, exactly here; f32 rounds its product.
    double Product = T == ElemType::F64 ? 96.0 * Value : double(float(96.0f * float(Value)));
    std::array<unsigned char, 8> Elem{};
    if (isFloatType(T)) {
      Elem = rt::premulFactorBytes(T, Product); // a value of T, rounded once
    } else {
      uint64_t Wrapped = 96u * 3u; // little-endian: its low Size bytes wrap it
      std::memcpy(Elem.data(), &Wrapped, 8);
    }
    std::vector<char> Want(Count * Size);
    for (uint64_t I = 0; I != Count; ++I)
      std::memcpy(Want.data() + I * Size, Elem.data(), Size);
    std::array<unsigned char, 8> NinetySix = rt::premulFactorBytes(T, 96.0);
    std::vector<std::optional<Buffer>> Src(World), Dst(World);
    for (int R = 0; R != World; ++R) {
      std::vector<char> In(Count * Size, 0);
      if (R == 0)
        for (uint64_t I = 0; I != Count; ++I)
          std::memcpy(In.data() + I * Size, NinetySix.data(), Size);
      Src[R].emplace(Count * Size);
      Src[R]->write(In);
      Dst[R].emplace(Count * Size);
    }
    std::string What = label(Count, llvm::formatv(" premul_sum({0})", Factor).str().c_str());
    onEveryRank(What, [&](int R, const auto &C, auto S) {
      return D::allReduceScaled(C, Src[R]->resource(), Dst[R]->resource(), elems(Count),
                                ReduceOp::PremulSum, T, Factor, S);
    });
    for (int R = 0; R != World; ++R)
      expectBytes(What, R, Dst[R]->read(), 0, Want);
  }

  /// Out of place, then in place (rank R's result is its own chunk R of the
  /// source, NCCL's convention), on the same inputs.
  void checkReduceScatter(uint64_t Count, ReduceOp RO, double Scale, uint32_t Salt) {
    auto In = inputs(Salt, Count * World);
    std::vector<std::vector<char>> Want;
    for (int R = 0; R != World; ++R)
      Want.push_back(reduced(In, RO, Scale, R * Count, Count));
    for (bool InPlace : {false, true}) {
      std::vector<std::optional<Buffer>> Src(World), Dst(World);
      for (int R = 0; R != World; ++R) {
        Src[R].emplace(Count * World * Size);
        Src[R]->write(In[R]);
        if (!InPlace)
          Dst[R].emplace(Count * Size);
      }
      std::string What = label(
          Count,
          llvm::formatv(" {0}{1}", reduceOpName(RO), InPlace ? " in place" : "").str().c_str());
      onEveryRank(What, [&](int R, const auto &C, auto S) {
        auto Out = InPlace ? Src[R]->resource(R * Count * Size) : Dst[R]->resource();
        return D::reduceScatterScaled(C, Src[R]->resource(), Out, elems(Count), RO, T, Scale, S);
      });
      std::vector<const char *> Srcs;
      for (int R = 0; R != World; ++R) {
        rt::ReductionSources Red = sources(In, Srcs, RO, Scale, R * Count);
        expectBytes(What, R, (InPlace ? *Src[R] : *Dst[R]).read(), InPlace ? R * Count * Size : 0,
                    Want[R], &Red);
      }
    }
  }

  void checkAllGather(uint64_t Count, bool InPlace, uint32_t Salt) {
    auto In = inputs(Salt, Count);
    std::vector<char> Want;
    for (const auto &V : In)
      Want.insert(Want.end(), V.begin(), V.end());
    std::vector<std::optional<Buffer>> Src(World), Dst(World);
    for (int R = 0; R != World; ++R) {
      Dst[R].emplace(Count * World * Size);
      if (InPlace) {
        Dst[R]->write(In[R], R * Count * Size); // rank R's input is chunk R
      } else {
        Src[R].emplace(Count * Size);
        Src[R]->write(In[R]);
      }
    }
    std::string What = label(Count, InPlace ? " in place" : "");
    onEveryRank(What, [&](int R, const auto &C, auto S) {
      auto From = InPlace ? Dst[R]->resource(R * Count * Size) : Src[R]->resource();
      return D::allGather(C, From, Dst[R]->resource(), elems(Count), S);
    });
    for (int R = 0; R != World; ++R)
      expectBytes(What, R, Dst[R]->read(), 0, Want);
  }

  void checkBroadcast(uint64_t Count, bool InPlace, uint32_t Salt) {
    // A different root for each size and placement.
    int Root = int(Salt % unsigned(World));
    std::vector<char> Want = conformanceInput(T, Root, Salt, Count);
    std::vector<std::optional<Buffer>> Src(World), Dst(World);
    for (int R = 0; R != World; ++R)
      Dst[R].emplace(Count * Size);
    if (InPlace) {
      Dst[Root]->write(Want);
    } else {
      Src[Root].emplace(Count * Size);
      Src[Root]->write(Want);
    }
    std::string What = label(
        Count, llvm::formatv(" from root {0}{1}", Root, InPlace ? " in place" : "").str().c_str());
    onEveryRank(What, [&](int R, const auto &C, auto S) {
      std::optional<typename D::Resource> From;
      if (R == Root)
        From = InPlace ? Dst[R]->resource() : Src[R]->resource();
      return D::broadcast(C, From ? &*From : nullptr, Dst[R]->resource(), elems(Count), size_t(Root),
                          S);
    });
    for (int R = 0; R != World; ++R)
      expectBytes(What, R, Dst[R]->read(), 0, Want);
  }

  void checkAllToAll(uint64_t Count, uint32_t Salt) {
    auto In = inputs(Salt, Count * World);
    std::vector<std::optional<Buffer>> Src(World), Dst(World);
    for (int R = 0; R != World; ++R) {
      Src[R].emplace(Count * World * Size);
      Src[R]->write(In[R]);
      Dst[R].emplace(Count * World * Size);
    }
    std::string What = label(Count);
    onEveryRank(What, [&](int R, const auto &C, auto S) {
      return D::allToAll(C, Src[R]->resource(), Dst[R]->resource(), elems(Count), size_t(World), S);
    });
    uint64_t Chunk = Count * Size;
    for (int R = 0; R != World; ++R) {
      std::vector<char> Want(Chunk * World);
      for (int J = 0; J != World && Chunk; ++J)
        std::memcpy(Want.data() + J * Chunk, In[J].data() + R * Chunk, Chunk);
      expectBytes(What, R, Dst[R]->read(), 0, Want);
    }
  }

  void checkAllToAllV(uint64_t Count, uint32_t Salt) {
    // Elements rank S sends to rank D: uneven, some zero, about Count each.
    auto Sends = [&](int From, int To) -> uint64_t {
      uint64_t Jitter = uint64_t(From * 3 + To * 5 + int(Salt)) % 4;
      if (Count <= 1)
        return Count ? Jitter % 2 : 0;
      return Count - Jitter * (Count / 8);
    };
    std::vector<std::vector<char>> In(World);
    std::vector<std::optional<Buffer>> Src(World), Dst(World);
    std::vector<std::vector<uint64_t>> SendCounts(World), RecvCounts(World);
    for (int R = 0; R != World; ++R) {
      uint64_t Out = 0, Got = 0;
      for (int P = 0; P != World; ++P) {
        SendCounts[R].push_back(Sends(R, P));
        RecvCounts[R].push_back(Sends(P, R));
        Out += Sends(R, P);
        Got += Sends(P, R);
      }
      In[R] = conformanceInput(T, R, Salt, Out);
      Src[R].emplace(Out * Size);
      Src[R]->write(In[R]);
      Dst[R].emplace(Got * Size);
    }
    std::string What = label(Count, " (uneven counts)");
    onEveryRank(What, [&](int R, const auto &C, auto S) {
      return D::allToAllV(C, Src[R]->resource(), Dst[R]->resource(), T, SendCounts[R],
                          RecvCounts[R], S);
    });
    for (int R = 0; R != World; ++R) {
      std::vector<char> Want;
      for (int P = 0; P != World; ++P) {
        uint64_t Skip = 0;
        for (int Q = 0; Q != R; ++Q)
          Skip += Sends(P, Q);
        const char *From = In[P].data() + Skip * Size;
        Want.insert(Want.end(), From, From + Sends(P, R) * Size);
      }
      expectBytes(What, R, Dst[R]->read(), 0, Want);
    }
  }

  void checkSendRecv(uint64_t Count, uint32_t Salt) {
    if (World == 1) {
      // No peer: a send to oneself is refused, not hung.
      Buffer B(Count * Size);
      llvm::Error E = D::send(Comms[0], B.resource(), elems(Count), 0, D::streamOf(Streams[0]));
      EXPECT_TRUE(bool(E)) << "a send to oneself was accepted";
      llvm::consumeError(std::move(E));
      return;
    }
    // A ring: even ranks send first, odd ranks receive first, so the
    // rendezvous cannot deadlock whatever the driver buffers.
    auto In = inputs(Salt, Count);
    std::vector<std::optional<Buffer>> Src(World), Dst(World);
    for (int R = 0; R != World; ++R) {
      Src[R].emplace(Count * Size);
      Src[R]->write(In[R]);
      Dst[R].emplace(Count * Size);
    }
    std::string What = label(Count, " around a ring");
    onEveryRank(What, [&](int R, const auto &C, auto S) -> llvm::Error {
      size_t Next = size_t((R + 1) % World), Prev = size_t((R + World - 1) % World);
      if (R % 2 == 0) {
        if (llvm::Error E = D::send(C, Src[R]->resource(), elems(Count), Next, S))
          return E;
        return D::recv(C, Dst[R]->resource(), elems(Count), Prev, S);
      }
      if (llvm::Error E = D::recv(C, Dst[R]->resource(), elems(Count), Prev, S))
        return E;
      return D::send(C, Src[R]->resource(), elems(Count), Next, S);
    });
    for (int R = 0; R != World; ++R)
      expectBytes(What, R, Dst[R]->read(), 0, In[(R + World - 1) % World]);
  }

  Coll Op = Coll::AllReduce;
  ElemType T = ElemType::F32;
  int World = 1;
  unsigned Size = 4;
  std::vector<typename D::Communicator> Comms;
  std::vector<typename D::StreamOwner> Streams;
};

/// Where the driver chooses a path per group (the shared-memory transport:
/// ShmDriver::pathOf), the group of the harness's largest world takes the
/// one the run names in COLLC_TEST_EXPECT_PATH (shm, hierarchical,
/// engine): a run meant for shared memory must not pass on the engine.
template <typename H> void checkExpectedPath() {
  using D = typename H::Driver;
  if constexpr (!requires(const typename D::Communicator &C) { D::pathOf(C); }) {
    GTEST_SKIP() << H::name() << " has one path";
  } else {
    if (std::string Why = H::unavailable(); !Why.empty())
      GTEST_SKIP() << Why;
    const char *Want = getenv("COLLC_TEST_EXPECT_PATH");
    if (!Want)
      GTEST_SKIP() << "COLLC_TEST_EXPECT_PATH is not set";
    int World = H::worlds().back();
    std::vector<std::string> Paths(World), Errors(World);
    H::runRanks(World, [&](int R) {
      llvm::Expected<typename D::UniqueId> Id = D::groupId({"conformance.path"});
      llvm::Expected<typename D::Communicator> C =
          Id ? D::join(*Id, World, R) : llvm::Expected<typename D::Communicator>(Id.takeError());
      if (!C)
        Errors[R] = llvm::toString(C.takeError());
      else
        Paths[R] = D::pathOf(*C).first + ": " + D::pathOf(*C).second;
    });
    for (int R = 0; R != World; ++R) {
      if (!runsHere<H>(R))
        continue;
      ASSERT_EQ(Errors[R], "") << "rank " << R << " could not join";
      EXPECT_EQ(llvm::StringRef(Paths[R]).split(':').first, Want)
          << "rank " << R << " took " << Paths[R];
    }
  }
}

} // namespace collc::test

/// Instantiates the suite for \p HARNESS as test suite \p NAME.
#define COLLC_CONFORMANCE_SUITE(HARNESS, NAME)                                                     \
  using NAME = ::collc::test::ConformanceTest<HARNESS>;                                            \
  TEST_P(NAME, MatchesReference) { run(); }                                                        \
  INSTANTIATE_TEST_SUITE_P(                                                                        \
      All, NAME,                                                                                   \
      ::testing::Combine(                                                                          \
          ::testing::ValuesIn(::collc::test::collsUnderTest()),                                    \
          ::testing::ValuesIn(::collc::test::allElemTypes()),                                      \
          ::testing::ValuesIn(HARNESS::worlds())),                                                 \
      ::collc::test::conformanceParamName);                                                    \
  TEST(NAME##Path, IsTheOneExpected) { ::collc::test::checkExpectedPath<HARNESS>(); }             \
  static_assert(true, "a semicolon follows")

#endif
