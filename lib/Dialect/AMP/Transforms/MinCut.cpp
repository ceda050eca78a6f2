//===- MinCut.cpp - s-t minimum cuts with Boost.Graph ---------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/Transforms/MinCut.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/boykov_kolmogorov_max_flow.hpp>

#include <algorithm>

using namespace mlir::amp;

namespace {
using Capacity = int64_t;
using Traits =
    boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
struct VertexProperties {
  boost::default_color_type color;
  Capacity distance;
  Traits::edge_descriptor predecessor;
};
struct EdgeProperties {
  Capacity capacity;
  Capacity residual;
  Traits::edge_descriptor reverse;
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS,
                                    VertexProperties, EdgeProperties>;
} // namespace

std::vector<bool> MinCutGraph::solve() const {
  // Infinite: more than every finite edge together.
  Capacity infinite = 1;
  for (const Edge &edge : edges)
    infinite += std::max<Capacity>(edge.capacity, 0);
  Graph graph(numVertices);
  for (const Edge &edge : edges) {
    Capacity capacity = edge.capacity < 0 ? infinite : edge.capacity;
    auto forward = boost::add_edge(edge.from, edge.to, graph).first;
    auto backward = boost::add_edge(edge.to, edge.from, graph).first;
    graph[forward].capacity = capacity;
    graph[backward].capacity = 0;
    graph[forward].reverse = backward;
    graph[backward].reverse = forward;
  }
  boost::boykov_kolmogorov_max_flow(
      graph, boost::get(&EdgeProperties::capacity, graph),
      boost::get(&EdgeProperties::residual, graph),
      boost::get(&EdgeProperties::reverse, graph),
      boost::get(&VertexProperties::predecessor, graph),
      boost::get(&VertexProperties::color, graph),
      boost::get(&VertexProperties::distance, graph),
      boost::get(boost::vertex_index, graph), source, sink);
  std::vector<bool> reached(numVertices);
  std::vector<unsigned> worklist{source};
  reached[source] = true;
  while (!worklist.empty()) {
    unsigned vertex = worklist.back();
    worklist.pop_back();
    for (auto edge :
         boost::make_iterator_range(boost::out_edges(vertex, graph))) {
      unsigned target = boost::target(edge, graph);
      if (graph[edge].residual > 0 && !reached[target]) {
        reached[target] = true;
        worklist.push_back(target);
      }
    }
  }
  return reached;
}
