// `schmp-lda infer`: topic proportions of documents the model has not seen, and their held-out
// perplexity, with the model fixed (fold-in Gibbs sampling; one process, oneTBB threads).
#pragma once

#include <cstdint>
#include <string>

#include "documents.hpp"
#include "model.hpp"

namespace schmp::lda {

struct InferConfig {
  CorpusFiles corpus;  // UCI (word ids as the model's) or Mallet-style text (words by the model's .vocab)
  int iterations = 100;
  std::uint64_t seed = 1;
  std::string output;  // one line per document: its id (1-based) and K proportions
};

struct Inference {
  std::uint64_t documents = 0;
  std::uint64_t tokens = 0;
  std::uint64_t unknown_tokens = 0;   // text words the model does not know, left out
  std::uint64_t held_out_tokens = 0;  // the odd positions, scored
  double perplexity = 0;              // by document completion, see documents.hpp
};

// Two fold-ins of `iterations` sweeps each: every token, for the proportions (averaged over the
// second half of the sweeps); and the even positions only, for the perplexity of the odd ones
// (p(w | d) averaged over the same samples). Documents are cut into a fixed number of groups sampled
// in parallel, each with its own random stream, so the result depends on the seed and not the threads.
Inference infer(const Model& model, const InferConfig& config);

}  // namespace schmp::lda
