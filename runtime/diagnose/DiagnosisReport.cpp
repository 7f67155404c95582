//===- runtime/diagnose/DiagnosisReport.cpp - A diagnosis, said ------------===//

#include "runtime/diagnose/DiagnosisReport.h"

#include "runtime/diagnose/RankList.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace llvm;

namespace collc::diag {

/// "examples/gpt2_ddp.coll:220:3" style where, as the label says it.
static std::string whereText(const Diagnosis &D) {
  return D.Label.empty() ? std::string("-") : D.Label;
}

void printDiagnosisText(const Diagnosis &D, raw_ostream &OS) {
  OS << "root cause: " << D.RootCause << "\n";
  if (!D.Culprits.empty())
    OS << formatv("culprit: {0} ({1})\n", rankList(D.Culprits), causeName(D.Class));
  else
    OS << formatv("culprit: none named ({0}{1})\n", causeName(D.Class),
                  D.Candidates.empty() ? std::string()
                                       : "; it could be " + rankList(D.Candidates));
  OS << "where: " << whereText(D);
  if (!D.Loc.empty())
    OS << " (line " << D.Loc << ")";
  OS << "\n";
  if (!D.Evidence.empty()) {
    OS << "evidence:\n";
    for (const std::string &E : D.Evidence)
      OS << "  - " << E << "\n";
  }
  OS << "ranks:\n";
  for (const RankView &V : D.Ranks) {
    OS << formatv("  rank {0}: {1}", V.Rank, V.State);
    if (!V.Error.empty())
      OS << "; its error: " << V.Error;
    OS << "\n";
  }
  if (!D.Findings.empty()) {
    OS << "findings:\n";
    for (const std::string &F : D.Findings)
      OS << "  - " << F << "\n";
  }
}

void printDiagnosisJson(const Diagnosis &D, raw_ostream &OS) {
  json::OStream J(OS, 1);
  auto Ranks = [&](StringRef Key, ArrayRef<int64_t> Rs) {
    J.attributeArray(Key, [&] {
      for (int64_t R : Rs)
        J.value(R);
    });
  };
  auto Strings = [&](StringRef Key, ArrayRef<std::string> Ss) {
    J.attributeArray(Key, [&] {
      for (const std::string &S : Ss)
        J.value(S);
    });
  };
  J.object([&] {
    J.attribute("format", "collc-diagnosis");
    J.attribute("version", 1);
    J.attribute("cause", causeName(D.Class));
    Ranks("culprits", D.Culprits);
    Ranks("candidates", D.Candidates);
    J.attributeObject("where", [&] {
      J.attribute("label", D.Label);
      J.attribute("op", D.Op);
      J.attribute("group", D.Group);
      J.attribute("loc", D.Loc);
      J.attribute("replay", D.Replay);
      J.attribute("step", D.Step);
      J.attribute("comm", D.Comm);
    });
    J.attribute("root_cause", D.RootCause);
    Strings("evidence", D.Evidence);
    J.attributeArray("ranks", [&] {
      for (const RankView &V : D.Ranks)
        J.object([&] {
          J.attribute("rank", V.Rank);
          J.attribute("dump", V.Dumped ? json::Value(V.File) : json::Value(nullptr));
          J.attribute("state", V.State);
          Ranks("waits_for", V.WaitsFor);
          Ranks("maybe_waits_for", V.MaybeWaitsFor);
          J.attribute("error", V.Error);
        });
    });
    Strings("findings", D.Findings);
  });
  OS << "\n";
}

} // namespace collc::diag
