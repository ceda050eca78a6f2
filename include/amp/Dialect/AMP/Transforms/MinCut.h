//===- MinCut.h - s-t minimum cuts with Boost.Graph -------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The s-t min-cut both optimizations solve: the precision assignment
// (PrecisionCut) and the choice of saved activations (amp-recompute). The
// max-flow is Boost.Graph's Boykov-Kolmogorov.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_TRANSFORMS_MINCUT_H
#define AMP_DIALECT_AMP_TRANSFORMS_MINCUT_H

#include <cstdint>
#include <vector>

namespace mlir::amp {

/// A directed graph with integer capacities, vertices 0..n-1 plus a source
/// and a sink, whose infinite edges are sized when it is solved.
class MinCutGraph {
public:
  explicit MinCutGraph(unsigned numVertices)
      : numVertices(numVertices + 2), source(numVertices),
        sink(numVertices + 1) {}

  unsigned addVertex() { return numVertices++; }
  /// An edge of capacity `capacity`; none when it is 0 or less.
  void addEdge(unsigned from, unsigned to, int64_t capacity) {
    if (capacity > 0)
      edges.push_back({from, to, capacity});
  }
  /// An edge no minimum cut crosses.
  void addInfiniteEdge(unsigned from, unsigned to) {
    edges.push_back({from, to, -1});
  }

  /// The vertices on the source side of a minimum cut, the smallest such
  /// set: those the residual graph reaches from the source.
  std::vector<bool> solve() const;

  unsigned getSource() const { return source; }
  unsigned getSink() const { return sink; }

private:
  struct Edge {
    unsigned from, to;
    int64_t capacity; ///< -1: infinite
  };
  unsigned numVertices;
  const unsigned source, sink;
  std::vector<Edge> edges;
};

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_TRANSFORMS_MINCUT_H
