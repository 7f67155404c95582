//===- tests/bench/SyntheticProgram.cpp - Large generated programs --------===//

#include "SyntheticProgram.h"

#include "llvm/Support/raw_ostream.h"

namespace collc::bench {

std::string syntheticProgramText(int64_t NumOps, int64_t World) {
  std::string S;
  S.reserve(NumOps * 64);
  llvm::raw_string_ostream OS(S);
  OS << "program @synthetic world(" << World << ") {\n"
     << "  group @dp = world\n"
     << "  group @tp = split(rank / 2, rank)\n";
  const char *Types[] = {"f32[768]", "f32[768, 3072]", "bf16[4096]", "f32[2304]"};
  int64_t Ops = 0, I = 0;
  while (Ops < NumOps) {
    const char *T = Types[I % 4];
    OS << "  %g" << I << " = compute @bwd" << I << " cost(" << (10 + I % 90) << "us) : " << T
       << '\n';
    OS << "  %r" << I << " = all_reduce avg %g" << I << " in @dp\n";
    Ops += 2;
    if (I % 16 == 15) {
      // A tensor-parallel reduction and a pipeline hop, rank-dependent.
      OS << "  %t" << I << " = all_reduce sum %r" << I << " in @tp\n";
      OS << "  send %t" << I << " to (rank + 2) when rank < " << World - 2 << '\n';
      OS << "  %p" << I << " = recv from (rank - 2) : " << T << " when rank >= 2\n";
      Ops += 3;
    }
    ++I;
  }
  OS << "}\n";
  return S;
}

const char *shapeName(Shape S) {
  switch (S) {
  case Shape::OneTensor:
    return "one-tensor";
  case Shape::Distinct:
    return "distinct";
  case Shape::Groups:
    return "groups";
  case Shape::RankDependent:
    return "rank-dependent";
  case Shape::Auto:
    return "auto";
  }
  return "?";
}

const char *shapeBucketPolicy(Shape S) { return S == Shape::Auto ? "auto" : "ddp"; }

std::string shapeProgramText(Shape Sh, int64_t NumOps) {
  std::string S;
  S.reserve(NumOps * 56);
  llvm::raw_string_ostream OS(S);
  switch (Sh) {
  case Shape::OneTensor:
    OS << "program @one_tensor world(8) {\n  group @dp = world\n"
       << "  %x = compute @x cost(10us) : f32[256]\n";
    for (int64_t I = 1; I < NumOps; ++I)
      OS << "  %r" << I << " = all_reduce sum %x in @dp\n";
    break;
  case Shape::Distinct:
    OS << "program @distinct world(8) {\n  group @dp = world\n";
    for (int64_t I = 0; 2 * I < NumOps; ++I)
      OS << "  %g" << I << " = compute @g" << I << " cost(10us) : f32[" << 64 + I % 512
         << "]\n  %r" << I << " = all_reduce sum %g" << I << " in @dp\n";
    break;
  case Shape::Groups: {
    constexpr int Groups = 1000;
    OS << "program @groups world(8) {\n";
    // Every group pairs ranks differently: colors from the group's index.
    for (int G = 0; G != Groups; ++G)
      OS << "  group @g" << G << " = split((rank + " << G << ") / 2 % 4, rank)\n";
    for (int64_t I = 0; 2 * I < NumOps; ++I)
      OS << "  %x" << I << " = compute @x" << I << " cost(5us) : f32[64]\n  %r" << I
         << " = all_reduce sum %x" << I << " in @g" << I % Groups << "\n";
    break;
  }
  case Shape::RankDependent:
    OS << "program @rank_dependent world(16) {\n";
    for (int64_t I = 0; 3 * I < NumOps; ++I) {
      int Hop = 1 + I % 4;
      OS << "  %a" << I << " = compute @a" << I << " cost(5us) : f32[32]\n"
         << "  send %a" << I << " to (rank + " << Hop << ") when rank % 8 < " << 8 - Hop << "\n"
         << "  %b" << I << " = recv from (rank - " << Hop << ") : f32[32] when rank % 8 >= "
         << Hop << "\n";
    }
    break;
  case Shape::Auto:
    // Gradients of 256 B to 1 MiB, ready 10 us apart: buckets of every size.
    OS << "program @auto world(8) {\n  group @dp = world\n"
       << "  %g0 = compute @g0 cost(10us) : f32[64]\n  %r0 = all_reduce avg %g0 in @dp\n";
    for (int64_t I = 1; 2 * I < NumOps; ++I)
      OS << "  %g" << I << " = compute @g" << I << "(%g" << I - 1 << ") cost(10us) : f32["
         << (64 << (I % 13)) << "]\n  %r" << I << " = all_reduce avg %g" << I << " in @dp\n";
    break;
  }
  OS << "}\n";
  return S;
}

} // namespace collc::bench
