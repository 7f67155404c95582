//===- compiler/dump/DotGraph.h - A plan as nodes and data edges -*- C++ -*-===//
//
// The graph the DOT dump draws and focuses, computed once from the plan:
// every compute and comm is a node (computes 0..C-1, then comms), with the
// steps it runs at, and one data edge per (producer, consumer) counting the
// tensors it carries. Internal to tools/collc/dump.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_COMPILER_DUMP_DOTGRAPH_H
#define COLLC_COMPILER_DUMP_DOTGRAPH_H

#include "compiler/dump/Dump.h"
#include "plan/Plan.h"

#include <cstdint>
#include <vector>

namespace collc::dot {

struct DataEdge {
  uint32_t From, To; ///< nodes
  uint32_t Tensors;  ///< how many tensors flow along it
};

struct Graph {
  uint32_t NumComputes = 0, NumNodes = 0;
  /// Per node: the first and last step that names it (-1: none).
  std::vector<int64_t> FirstStep, LastStep;
  /// In consumer order (computes, then comms), producers in input order.
  std::vector<DataEdge> Edges;

  bool isComm(uint32_t Node) const { return Node >= NumComputes; }
  uint32_t commNode(uint32_t Comm) const { return NumComputes + Comm; }
};

Graph buildGraph(const plan::Plan &P);

/// Which nodes the focus keeps, or an error naming the flag, the value and
/// the range the plan allows.
llvm::Expected<std::vector<bool>> focusNodes(const plan::Plan &P, const Graph &G,
                                             const DotFocus &F);

} // namespace collc::dot

#endif
