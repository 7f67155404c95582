//===- compiler/dump/DotGraph.cpp - A plan as nodes and data edges ---------===//

#include "compiler/dump/DotGraph.h"

#include "llvm/ADT/STLExtras.h"

using namespace llvm;

namespace collc::dot {

Graph buildGraph(const plan::Plan &P) {
  Graph G;
  G.NumComputes = uint32_t(P.Computes.size());
  G.NumNodes = G.NumComputes + uint32_t(P.Comms.size());
  G.FirstStep.assign(G.NumNodes, -1);
  G.LastStep.assign(G.NumNodes, -1);
  for (size_t S = 0; S != P.Steps.size(); ++S) {
    const plan::Step &St = P.Steps[S];
    uint32_t Node = St.Kind == plan::StepKind::Compute ? St.Index : G.commNode(St.Index);
    if (G.FirstStep[Node] < 0)
      G.FirstStep[Node] = int64_t(S);
    G.LastStep[Node] = int64_t(S);
  }
  // The node that produces each tensor (-1: an input of the step).
  std::vector<int64_t> Producer(P.Tensors.size(), -1);
  for (uint32_t I = 0; I != P.Computes.size(); ++I)
    for (uint32_t T : P.Computes[I].Outputs)
      Producer[T] = I;
  // A joint comm is one node: every side's tensors are its.
  for (uint32_t I = 0; I != P.Comms.size(); ++I)
    for (size_t K = 0; K != P.Comms[I].numSides(); ++K)
      for (uint32_t T : P.Comms[I].side(K).Outputs)
        Producer[T] = G.commNode(I);
  auto AddEdges = [&](uint32_t To, ArrayRef<uint32_t> Inputs) {
    size_t Begin = G.Edges.size();
    for (uint32_t T : Inputs) {
      if (Producer[T] < 0)
        continue;
      uint32_t From = uint32_t(Producer[T]);
      auto It = std::find_if(G.Edges.begin() + Begin, G.Edges.end(),
                             [&](const DataEdge &E) { return E.From == From; });
      if (It != G.Edges.end())
        ++It->Tensors;
      else
        G.Edges.push_back({From, To, 1});
    }
  };
  for (uint32_t I = 0; I != P.Computes.size(); ++I)
    AddEdges(I, P.Computes[I].Inputs);
  for (uint32_t I = 0; I != P.Comms.size(); ++I) {
    std::vector<uint32_t> In;
    for (size_t K = 0; K != P.Comms[I].numSides(); ++K) {
      const plan::CommSide &Side = P.Comms[I].side(K);
      In.insert(In.end(), Side.Inputs.begin(), Side.Inputs.end());
      if (Side.Counts >= 0)
        In.push_back(uint32_t(Side.Counts));
    }
    AddEdges(G.commNode(I), In);
  }
  return G;
}

} // namespace collc::dot
