// What a token dispatcher that deduplicates per NVLink domain (schema EXPERT_NODE_DEDUPLICATED:
// DeepEP's internode kernels, HybridEP) sends between domains. With E experts spread evenly over
// the D domains an expert-parallel group spans, a token picking k distinct experts at random
// misses a given domain with probability q = C(E - E/D, k) / C(E, k), so it crosses to
// (D - 1)(1 - q) remote domains on average, where the plain all-to-all sends its k (D - 1) / D
// copies. The layer then takes the longer of the rail all-to-all (among the group's GPUs at one
// place in each domain: a token's copy for each domain it reaches) and the all-to-all inside each
// domain (every copy delivered over NVLink), which DeepEP pipelines one beside the other.
#pragma once

namespace clustersim {

// The bytes of the rail all-to-all per byte of the plain one's (its k copies a token): a GPU's
// share to every place of the rail, D (1 - q) / k. Requires: 1 <= k <= experts, domains divides
// experts.
double deduplicated_rail_share(int experts, int experts_per_token, int domains);

}  // namespace clustersim
