// Finding the XOR automorphisms of a cluster graph and their link orbits.
#include "sim/net/rank_symmetry.h"

#include <algorithm>
#include <bit>
#include <map>
#include <queue>
#include <unordered_map>

namespace clustersim {
namespace {

// Vertex images of XOR-ing every GPU's index in its NVLink domain with j, extended to the other
// vertices layer
// by layer (by distance from the nearest GPU): a vertex maps to the vertex of its kind whose
// nearer neighbours are the images of its own; vertices those neighbours do not tell apart (NICs
// on one PCIe switch) map in the order of their ids. Empty when no such extension exists.
std::vector<int32_t> vertex_images(const Topology& t, int j) {
  const Topology::Graph& g = t.graph();
  const auto n = static_cast<int32_t>(boost::num_vertices(g));
  std::vector<int32_t> distance(n, -1);
  std::queue<int32_t> frontier;
  std::vector<int32_t> image(n, -1);
  for (int gpu = 0; gpu < t.gpu_count(); ++gpu) {
    const int32_t v = t.gpu_vertex(gpu);
    const int local = gpu - t.domain_first_gpu(t.domain_of(gpu));  // index in its NVLink domain
    image[v] = v - local + (local ^ j);
    distance[v] = 0;
    frontier.push(v);
  }
  while (!frontier.empty()) {
    const int32_t v = frontier.front();
    frontier.pop();
    for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
      const auto w = static_cast<int32_t>(boost::target(*e, g));
      if (distance[w] < 0) distance[w] = distance[v] + 1, frontier.push(w);
    }
  }
  if (std::find(distance.begin(), distance.end(), -1) != distance.end()) return {};
  const int32_t deepest = *std::max_element(distance.begin(), distance.end());
  for (int32_t d = 1; d <= deepest; ++d) {
    // Vertices of this layer by (kind, sorted nearer neighbours), each list in id order.
    std::map<std::vector<int32_t>, std::vector<int32_t>> by_key;
    for (int32_t v = 0; v < n; ++v) {
      if (distance[v] != d) continue;
      std::vector<int32_t> key{static_cast<int32_t>(g[v].kind)};
      for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
        const auto w = static_cast<int32_t>(boost::target(*e, g));
        if (distance[w] < d) key.push_back(w);
      }
      std::sort(key.begin() + 1, key.end());
      by_key[key].push_back(v);
    }
    for (const auto& [key, members] : by_key) {
      std::vector<int32_t> target{key[0]};
      for (size_t i = 1; i < key.size(); ++i) target.push_back(image[key[i]]);
      std::sort(target.begin() + 1, target.end());
      auto it = by_key.find(target);
      if (it == by_key.end() || it->second.size() != members.size()) return {};
      for (size_t k = 0; k < members.size(); ++k) image[members[k]] = it->second[k];
    }
  }
  std::vector<char> hit(n, 0);
  for (int32_t v : image) {
    if (v < 0 || hit[v]) return {};
    hit[v] = 1;
  }
  return image;
}

// Link ids by their two ends.
using LinksByEnds = std::unordered_map<uint64_t, int32_t>;
uint64_t ends(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b);
}

// Link images under a vertex map, or empty when some link has no image of equal kind, capacity
// and latency.
std::vector<int32_t> link_images(const Topology& t, const LinksByEnds& by_ends,
                                 const std::vector<int32_t>& vertex_image) {
  const std::vector<LinkInfo>& links = t.links();
  std::vector<int32_t> image(links.size());
  for (size_t l = 0; l < links.size(); ++l) {
    const LinkInfo& a = links[l];
    auto it = by_ends.find(ends(vertex_image[a.from], vertex_image[a.to]));
    if (it == by_ends.end()) return {};
    const LinkInfo& b = links[it->second];
    if (b.kind != a.kind || b.capacity_bytes_per_s != a.capacity_bytes_per_s ||
        b.latency != a.latency) {
      return {};
    }
    image[l] = it->second;
  }
  return image;
}

// Whether applying `a` then `b` gives the same links as `b` then `a` (for a == b: the identity).
bool commute(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  for (size_t l = 0; l < a.size(); ++l) {
    const int32_t ab = b[a[l]], ba = a[b[l]];
    if (ab != ba || (&a == &b && ab != static_cast<int32_t>(l))) return false;
  }
  return true;
}

// Whether every NVLink domain's GPU count is a multiple of `ranks` (so XOR-ing indices below it
// keeps each GPU in its domain).
bool domains_divisible(const Topology& t, int ranks) {
  for (int d = 0; d < t.domains(); ++d) {
    if (t.domain_gpu_count(d) % ranks != 0) return false;
  }
  return true;
}

}  // namespace

RankSymmetry::RankSymmetry(const Topology& topology) : link_count_(topology.links().size()) {
  LinksByEnds by_ends;
  by_ends.reserve(link_count_);
  for (size_t l = 0; l < link_count_; ++l) {
    const LinkInfo& link = topology.links()[l];
    by_ends.emplace(ends(link.from, link.to), static_cast<int32_t>(l));
  }
  // Generators j = 1, 2, 4, ...: each an automorphism, an involution, and commuting with those
  // before it, so that the maps they compose to (by the bits of j) act as XOR does: a group.
  std::vector<std::vector<int32_t>> generators;
  for (int j = 1; domains_divisible(topology, 2 * j); j *= 2) {
    const std::vector<int32_t> vertices = vertex_images(topology, j);
    if (vertices.empty()) break;
    std::vector<int32_t> links = link_images(topology, by_ends, vertices);
    if (links.empty() || !commute(links, links)) break;
    bool commuting = true;
    for (const std::vector<int32_t>& g : generators) commuting = commuting && commute(g, links);
    if (!commuting) break;
    generators.push_back(std::move(links));
    max_ranks_ = 2 * j;
  }
  images_.resize((max_ranks_ - 1) * link_count_);
  for (int j = 1; j < max_ranks_; ++j) {
    const int high = 1 << (std::bit_width(static_cast<unsigned>(j)) - 1);
    const std::vector<int32_t>& g = generators[std::bit_width(static_cast<unsigned>(j)) - 1];
    for (size_t l = 0; l < link_count_; ++l) {
      images_[(j - 1) * link_count_ + l] = g[image(j - high, static_cast<int32_t>(l))];
    }
  }
}

int32_t RankSymmetry::representative(int32_t link, int ranks) const {
  int32_t smallest = link;
  for (int j = 1; j < ranks; ++j) smallest = std::min(smallest, image(j, link));
  return smallest;
}

int RankSymmetry::stabiliser_size(int32_t link, int ranks) const {
  int fixed = 1;
  for (int j = 1; j < ranks; ++j) fixed += image(j, link) == link;
  return fixed;
}

}  // namespace clustersim
