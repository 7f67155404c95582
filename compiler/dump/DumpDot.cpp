//===- compiler/dump/DumpDot.cpp - A plan as a Graphviz graph --------------===//
//
// Computes are boxes, comms ellipses, an edge carries data from its producer
// to its consumer. Shaped to be read, and laid out by `dot -Tsvg` in seconds
// even for plans with hundreds of ops:
//
// - One cluster per layer, named from the ops (layerOf). Model programs name
//   ops after module paths, where the first numbered segment is the repeated
//   block a person reads as one unit: a layer ("fwd.l3", "bwd.h11") or a
//   pipeline stage ("fwd.s1"). A comm joins the cluster of the op that makes
//   it ready (its last producer), so a cluster shows what a layer computes
//   and what it puts on the wire. Not one cluster per bucket: a bucket is a
//   single comm, the cluster would wrap one node.
// - Edges inside a cluster are drawn one by one; edges between two clusters
//   (or a cluster and an op outside any) are summarised as one bold edge
//   labelled with how many edges and tensors it stands for. This is what
//   keeps the layout fast: the long edges (forward activations read by the
//   backward, every gradient read by the optimizer) become one per pair.
// - An edge carrying several tensors is labelled with their count.
// - DumpOptions::Focus keeps a rank, a bucket's neighbourhood or a step
//   range (DotFocus.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/dump/DotGraph.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <set>

using namespace llvm;

namespace collc {
namespace {

/// A DOT string: DOT's escaping (labels read `\n` as a line break), kept
/// apart from ir/Quoting.h, which spells collc's own text formats.
std::string escape(StringRef S) {
  std::string Out;
  for (char C : S) {
    if (C == '"' || C == '\\')
      Out += '\\';
    Out += C;
  }
  return Out;
}

/// The layer of an op: its name up to and including the first segment that
/// ends in a digit ("fwd.l3.attn" -> "fwd.l3", "bwd.s1.l0.mlp" -> "bwd.s1");
/// empty for an op outside any layer ("optimizer", "fwd.embed").
StringRef layerOf(StringRef Name) {
  size_t End = 0;
  while (End < Name.size()) {
    size_t Dot = Name.find('.', End);
    size_t SegEnd = Dot == StringRef::npos ? Name.size() : Dot;
    if (SegEnd > End && isDigit(Name[SegEnd - 1]))
      return Name.take_front(SegEnd);
    if (Dot == StringRef::npos)
      break;
    End = Dot + 1;
  }
  return {};
}

std::string nodeName(const dot::Graph &G, uint32_t N) {
  return G.isComm(N) ? formatv("m{0}", N - G.NumComputes).str() : formatv("c{0}", N).str();
}

std::string stepsText(const dot::Graph &G, uint32_t N) {
  if (G.FirstStep[N] < 0)
    return "no step";
  if (G.FirstStep[N] == G.LastStep[N])
    return formatv("step {0}", G.FirstStep[N]);
  return formatv("steps {0}..{1}", G.FirstStep[N], G.LastStep[N]);
}

std::string computeNode(const plan::Plan &P, const dot::Graph &G, uint32_t I, bool ShowStream) {
  const plan::Compute &C = P.Computes[I];
  std::string Label = formatv("@{0}\\n{1:f0} us, {2}", escape(C.Name), double(C.CostNs) / 1000.0,
                              stepsText(G, I));
  if (ShowStream)
    Label += formatv(", stream {0}", C.Stream);
  if (!C.Ranks.All)
    Label += "\\nranks " + C.Ranks.str();
  return formatv("{0} [shape=box, label=\"{1}\"];", nodeName(G, I), Label);
}

std::string commNode(const plan::Plan &P, const dot::Graph &G, uint32_t I, bool Explain) {
  const plan::Comm &C = P.Comms[I];
  std::string Label = formatv("#{0} {1}", I, commKindName(C.Kind));
  if (plan::hasReduceOp(C.Kind))
    Label += formatv(" {0}", reduceOpName(C.Reduce));
  size_t Tensors = std::max(C.Inputs.size(), C.Outputs.size());
  Label += "\\n" + formatBytes(double(C.inputBytes(P.Tensors) +
                                      (C.Inputs.empty() ? C.outputBytes(P.Tensors) : 0)));
  Label += formatv(", {0} tensor{1}", Tensors, Tensors == 1 ? "" : "s");
  if (C.Group >= 0)
    Label += "\\n@" + escape(P.Groups[C.Group].Name);
  if (C.Bucket >= 0)
    Label += formatv(" bucket {0}", C.Bucket);
  Label += ", " + stepsText(G, G.commNode(I));
  if (C.isJoint()) {
    // One collective, issued through a different op on each side's ranks.
    Label += formatv("\\njoint: {0} ops", C.numSides()).str();
    for (size_t K = 0; K != C.numSides(); ++K) {
      const plan::CommSide &Side = C.side(K);
      Label += "\\nranks " + Side.Ranks.str();
      if (!Side.Outputs.empty())
        Label += ": %" + escape(P.Tensors[Side.Outputs.front()].Name);
    }
  } else if (!C.Ranks.All) {
    Label += "\\nranks " + C.Ranks.str();
  }
  if (Explain && !C.Why.empty())
    Label += "\\n" + escape(C.Why.front());
  return formatv("{0} [shape=ellipse, style=filled, fillcolor=\"{1}\", label=\"{2}\"];",
                 nodeName(G, G.commNode(I)), C.Async ? "lightblue" : "lightsalmon", Label);
}

/// The cluster of every node (-1: outside any) and the clusters' layer
/// names, in order of their first compute.
struct Layers {
  std::vector<int> Of;
  std::vector<std::string> Names;
};

Layers assignLayers(const plan::Plan &P, const dot::Graph &G) {
  Layers L;
  L.Of.assign(G.NumNodes, -1);
  StringMap<int> Index;
  for (uint32_t I = 0; I != G.NumComputes; ++I) {
    StringRef Layer = layerOf(P.Computes[I].Name);
    if (Layer.empty())
      continue;
    auto [It, New] = Index.try_emplace(Layer, int(L.Names.size()));
    if (New)
      L.Names.push_back(Layer.str());
    L.Of[I] = It->second;
  }
  // A comm joins its producer with the latest step; one without producers,
  // its first consumer. Comms in launch order, so a comm that feeds another
  // is placed before it.
  std::vector<std::vector<uint32_t>> In(G.NumNodes), Out(G.NumNodes);
  for (const dot::DataEdge &E : G.Edges) {
    In[E.To].push_back(E.From);
    Out[E.From].push_back(E.To);
  }
  std::vector<uint32_t> Comms;
  for (const plan::Step &S : P.Steps)
    if (S.Kind == plan::StepKind::Launch)
      Comms.push_back(G.commNode(S.Index));
  for (uint32_t N = G.NumComputes; N != G.NumNodes; ++N)
    if (G.FirstStep[N] < 0)
      Comms.push_back(N);
  auto Pick = [&](ArrayRef<uint32_t> Nodes, bool Latest) {
    int Best = -1;
    int64_t BestStep = 0;
    for (uint32_t N : Nodes) {
      if (L.Of[N] < 0)
        continue;
      if (Best < 0 || (Latest ? G.FirstStep[N] > BestStep : G.FirstStep[N] < BestStep)) {
        Best = L.Of[N];
        BestStep = G.FirstStep[N];
      }
    }
    return Best;
  };
  for (uint32_t N : Comms) {
    L.Of[N] = Pick(In[N], /*Latest=*/true);
    if (L.Of[N] < 0)
      L.Of[N] = Pick(Out[N], /*Latest=*/false);
  }
  return L;
}

std::string focusText(const DotFocus &F) {
  std::string S;
  if (F.Rank)
    S += formatv(", rank {0}", *F.Rank);
  if (F.Bucket)
    S += formatv(", bucket {0} and its neighbours", *F.Bucket);
  if (F.Steps)
    S += formatv(", steps {0}..{1}", F.Steps->First, F.Steps->Last);
  return S;
}

std::string tensorsText(uint32_t N) { return formatv("{0} tensor{1}", N, N == 1 ? "" : "s"); }

} // namespace

Error dumpDot(const plan::Plan &P, const DumpOptions &Opts, raw_ostream &OS) {
  dot::Graph G = dot::buildGraph(P);
  Expected<std::vector<bool>> Keep = dot::focusNodes(P, G, Opts.Focus);
  if (!Keep)
    return Keep.takeError();
  Layers L = assignLayers(P, G);
  std::set<uint32_t> Streams;
  for (const plan::Compute &C : P.Computes)
    Streams.insert(C.Stream);

  OS << "digraph \"" << escape(P.Program) << "\" {\n";
  OS << "  rankdir=TB; compound=true;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  OS << "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  OS << "  label=\"" << escape(P.Program) << ", world " << P.World << focusText(Opts.Focus)
     << "\";\n";
  auto NodeLine = [&](uint32_t N) {
    return G.isComm(N) ? commNode(P, G, N - G.NumComputes, Opts.Explain)
                       : computeNode(P, G, N, Streams.size() > 1);
  };
  // Clusters with their nodes, then the nodes outside any.
  std::vector<std::vector<uint32_t>> Members(L.Names.size());
  std::vector<uint32_t> Outside;
  for (uint32_t N = 0; N != G.NumNodes; ++N)
    if ((*Keep)[N])
      (L.Of[N] < 0 ? Outside : Members[L.Of[N]]).push_back(N);
  for (size_t K = 0; K != Members.size(); ++K) {
    if (Members[K].empty())
      continue;
    OS << "  subgraph cluster_" << K << " {\n";
    OS << "    label=\"" << escape(L.Names[K]) << "\"; style=dashed;\n";
    for (uint32_t N : Members[K])
      OS << "    " << NodeLine(N) << "\n";
    OS << "  }\n";
  }
  for (uint32_t N : Outside)
    OS << "  " << NodeLine(N) << "\n";
  if (Outside.empty() && llvm::all_of(Members, [](auto &M) { return M.empty(); }))
    OS << "  empty [shape=plaintext, label=\"no op matches the focus\"];\n";

  // Data edges: one by one within a cluster, one per pair of sides across.
  // The side an edge leaves is its cluster (or its node, outside any); the
  // side it enters is the same, but a comm is a side of its own, so the
  // tensors one layer hands a bucket stay one edge apart from the layer's
  // other data.
  struct Summary {
    uint32_t From, To; ///< the first edge's nodes, which carry the summary
    bool ManyFrom = false, ManyTo = false;
    uint32_t Edges = 0, Tensors = 0;
  };
  auto Side = [&](uint32_t N) -> int64_t { return L.Of[N] >= 0 ? L.Of[N] : -1 - int64_t(N); };
  auto EnterSide = [&](uint32_t N) { return G.isComm(N) ? -1 - int64_t(N) : Side(N); };
  MapVector<std::pair<int64_t, int64_t>, Summary> Across;
  std::set<std::pair<uint32_t, uint32_t>> Linked;
  for (const dot::DataEdge &E : G.Edges) {
    if (!(*Keep)[E.From] || !(*Keep)[E.To])
      continue;
    Linked.insert({E.From, E.To});
    if (L.Of[E.From] >= 0 && L.Of[E.From] == L.Of[E.To]) {
      OS << "  " << nodeName(G, E.From) << " -> " << nodeName(G, E.To);
      if (E.Tensors > 1)
        OS << " [label=\"" << tensorsText(E.Tensors) << "\"]";
      OS << ";\n";
      continue;
    }
    auto [It, New] = Across.insert({{Side(E.From), EnterSide(E.To)}, Summary{E.From, E.To}});
    Summary &S = It->second;
    S.ManyFrom |= S.From != E.From;
    S.ManyTo |= S.To != E.To;
    ++S.Edges;
    S.Tensors += E.Tensors;
  }
  for (auto &[Key, S] : Across) {
    OS << "  " << nodeName(G, S.From) << " -> " << nodeName(G, S.To);
    std::vector<std::string> Attrs;
    if (S.Edges > 1) {
      Attrs.push_back(formatv("label=\"{0} edges, {1}\"", S.Edges, tensorsText(S.Tensors)));
      Attrs.push_back("penwidth=2");
    } else if (S.Tensors > 1) {
      Attrs.push_back("label=\"" + tensorsText(S.Tensors) + "\"");
    }
    if (S.ManyFrom)
      Attrs.push_back(formatv("ltail=cluster_{0}", L.Of[S.From]));
    if (S.ManyTo)
      Attrs.push_back(formatv("lhead=cluster_{0}", L.Of[S.To]));
    if (!Attrs.empty())
      OS << " [" << join(Attrs, ", ") << "]";
    OS << ";\n";
  }
  // Stream order inside a cluster, where no data edge shows it already,
  // directly or through one comm (compute -> all_to_all_v -> compute).
  std::map<uint32_t, std::vector<uint32_t>> IntoComm;
  for (auto [From, To] : Linked)
    if (G.isComm(To) && !G.isComm(From))
      IntoComm[To].push_back(From);
  for (auto [From, To] : std::set<std::pair<uint32_t, uint32_t>>(Linked))
    if (G.isComm(From) && !G.isComm(To))
      for (uint32_t Before : IntoComm[From])
        Linked.insert({Before, To});
  std::map<std::pair<int, uint32_t>, uint32_t> LastOnStream;
  for (const plan::Step &S : P.Steps) {
    if (S.Kind != plan::StepKind::Compute || !(*Keep)[S.Index] || L.Of[S.Index] < 0)
      continue;
    auto [It, New] = LastOnStream.try_emplace({L.Of[S.Index], P.Computes[S.Index].Stream}, S.Index);
    if (!New && It->second != S.Index) {
      if (!Linked.count({It->second, S.Index}))
        OS << "  " << nodeName(G, It->second) << " -> " << nodeName(G, S.Index)
           << " [style=dotted, arrowhead=none];\n";
      It->second = S.Index;
    }
  }
  OS << "}\n";
  return Error::success();
}

} // namespace collc
