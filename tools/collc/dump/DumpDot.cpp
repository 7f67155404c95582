//===- tools/collc/dump/DumpDot.cpp - A plan as a Graphviz graph --------------===//
//
// Computes are boxes in one cluster per stream (chained in stream order),
// comms are ellipses; an edge carries data from its producer to its
// consumer. Render with `dot -Tsvg`.
//
//===----------------------------------------------------------------------===//

#include "tools/collc/dump/Dump.h"

#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace llvm;

namespace collc {

static std::string escape(StringRef S) {
  std::string Out;
  for (char C : S) {
    if (C == '"' || C == '\\')
      Out += '\\';
    Out += C;
  }
  return Out;
}

void dumpDot(const plan::Plan &P, const DumpOptions &Opts, raw_ostream &OS) {
  OS << "digraph \"" << escape(P.Program) << "\" {\n";
  OS << "  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  OS << "  label=\"" << escape(P.Program) << ", world " << P.World << "\";\n";
  // Producer node of every tensor.
  std::vector<std::string> Producer(P.Tensors.size());
  std::map<uint32_t, std::vector<uint32_t>> ByStream;
  for (uint32_t I = 0; I != P.Computes.size(); ++I) {
    for (uint32_t T : P.Computes[I].Outputs)
      Producer[T] = "c" + std::to_string(I);
    ByStream[P.Computes[I].Stream].push_back(I);
  }
  for (auto &[Stream, Cs] : ByStream) {
    OS << "  subgraph cluster_stream" << Stream << " {\n";
    OS << "    label=\"compute stream " << Stream << "\"; style=dashed;\n";
    for (uint32_t I : Cs) {
      const plan::Compute &C = P.Computes[I];
      OS << formatv("    c{0} [shape=box, label=\"@{1}\\n{2:f0} us{3}\"];\n", I, escape(C.Name),
                    double(C.CostNs) / 1000.0, C.Ranks.All ? "" : "\\nranks " + C.Ranks.str());
    }
    for (size_t K = 1; K < Cs.size(); ++K)
      OS << formatv("    c{0} -> c{1} [style=dotted, arrowhead=none];\n", Cs[K - 1], Cs[K]);
    OS << "  }\n";
  }
  for (uint32_t I = 0; I != P.Comms.size(); ++I) {
    const plan::Comm &C = P.Comms[I];
    std::string Label = formatv("#{0} {1}", I, commKindName(C.Kind));
    if (C.Kind == plan::CommKind::AllReduce || C.Kind == plan::CommKind::ReduceScatter)
      Label += " " + reduceOpName(C.Reduce).str();
    Label += "\\n" + formatBytes(double(C.inputBytes(P.Tensors) +
                                        (C.Inputs.empty() ? C.outputBytes(P.Tensors) : 0)));
    Label += formatv(", {0} tensor{1}", std::max(C.Inputs.size(), C.Outputs.size()),
                     std::max(C.Inputs.size(), C.Outputs.size()) == 1 ? "" : "s");
    if (C.Group >= 0)
      Label += "\\n@" + escape(P.Groups[C.Group].Name);
    if (C.Bucket >= 0)
      Label += formatv(" bucket {0}", C.Bucket);
    if (Opts.Explain && !C.Why.empty())
      Label += "\\n" + escape(C.Why.front());
    OS << formatv("  m{0} [shape=ellipse, style=filled, fillcolor=\"{1}\", label=\"{2}\"];\n", I,
                  C.Async ? "lightblue" : "lightsalmon", Label);
    for (uint32_t T : C.Outputs)
      Producer[T] = "m" + std::to_string(I);
  }
  // Data edges, once per (producer, consumer).
  auto Edges = [&](const std::string &To, ArrayRef<uint32_t> Inputs) {
    std::vector<std::string> From;
    for (uint32_t T : Inputs)
      if (!Producer[T].empty() && !llvm::is_contained(From, Producer[T]))
        From.push_back(Producer[T]);
    for (const std::string &F : From)
      OS << "  " << F << " -> " << To << ";\n";
  };
  for (uint32_t I = 0; I != P.Computes.size(); ++I)
    Edges("c" + std::to_string(I), P.Computes[I].Inputs);
  for (uint32_t I = 0; I != P.Comms.size(); ++I) {
    std::vector<uint32_t> In = P.Comms[I].Inputs;
    if (P.Comms[I].Counts >= 0)
      In.push_back(P.Comms[I].Counts);
    Edges("m" + std::to_string(I), In);
  }
  OS << "}\n";
}

} // namespace collc
