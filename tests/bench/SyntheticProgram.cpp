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

} // namespace collc::bench
