// A serving stage's layer groups under DeepSeek V4's compressed sparse attention: the layers of
// each compress ratio run different attention kernels (the window only; the compressor and the
// indexer; the compressor alone), so each ratio is its own LayerGroup, its per-token kernels taken
// from the training step's op builders (compressed_sparse_attention.h) at one token.
#pragma once

#include <vector>

#include "sim/io/schema/model.pb.h"
#include "sim/workload/inference_shape.h"

namespace clustersim {

// `groups` (a stage's dense layers, then its expert layers, as inference_shape builds them: their
// MLP matrices and elementwise traffic, no attention matrices) split by the compress ratio of the
// stage's layers [first, first + count), each group given its ratio (LayerGroup::compress_ratio)
// and, per layer:
//   the attention block's weight GEMMs (compressed_sparse_attention_ops' matmuls of an inference
//   forward, LayerShape::inference, on one tensor-parallel rank, the output groups' o_groups / TP
//   GEMMs as one of their summed width; not the indexer's scoring of activations, which the
//   iteration times with the attention), and its memory passes at one token (the q and kv norms,
//   the query head norm, the compressors' fused pooling; no training loss);
//   two hyper-connection mixes (the projection as a GEMM, the mix pass) and two updates, before
//   and after the attention and MLP blocks (hyper_connection_mix_ops, hyper_connection_update_op).
// Groups in ratio order 0, 4, 128 within dense then experts; no empty group.
// Requires: t has compressed_sparse_attention and hyper_connections; the tensor-parallel degree
// divides o_groups.
std::vector<LayerGroup> compressed_attention_groups(const schema::Transformer& t,
                                                    int tensor_parallel, int first, int count,
                                                    const std::vector<LayerGroup>& groups);

}  // namespace clustersim
