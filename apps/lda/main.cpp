// schmp-lda: the command line of the LDA program. Framework flags (--seed, --max_rounds,
// --max_seconds, --threads, --trace, ...) are shared by every app; the flags below are LDA's own.
//
//   mpirun -np N schmp-lda --data docword.txt [--vocab vocab.txt] --topics K [--output PREFIX]
//   mpirun -np N schmp-lda --text documents.txt --topics K [--output PREFIX]
#include <gflags/gflags.h>

#include <cstdio>

#include "lda.hpp"
#include "schmp/run.hpp"

DEFINE_string(data, "",
              "Corpus as UCI bag-of-words (docword.txt: D, W, NNZ, then 'doc word count', 1-based)");
DEFINE_string(text, "", "Corpus as one document per line, Mallet's format: 'name label word word ...'");
DEFINE_string(vocab, "", "UCI vocabulary (vocab.txt: line i holds word i), to name the topics' top words");
DEFINE_int32(topics, 10, "Number of topics K");
DEFINE_double(alpha, 0.1,
              "Dirichlet prior of document-topic proportions, per topic (Mallet's --alpha is K times it)");
DEFINE_double(beta, 0.01, "Dirichlet prior of topic-word distributions, per word");
DEFINE_int32(iterations, 100, "Gibbs sweeps over every token");
DEFINE_string(
    sampler, "sparse",
    "sparse: word by word, O(K_d + log K) per token (F+LDA); exact: all K weights per token. Both draw "
    "from the exact collapsed conditional");
DEFINE_string(output, "", "Write PREFIX.topics, PREFIX.word_topic and PREFIX.doc_topic");
DECLARE_uint64(seed);

int main(int argc, char** argv) {
  schmp::Job job(argc, argv,
                 "Latent Dirichlet allocation by model-parallel collapsed Gibbs sampling.\n"
                 "usage: mpirun -np N schmp-lda --data docword.txt [--vocab vocab.txt] --topics K "
                 "[--iterations T] [--output PREFIX] [--trace FILE]");
  schmp::lda::Config config;
  config.data = FLAGS_data;
  config.text = FLAGS_text;
  config.vocab = FLAGS_vocab;
  config.topics = FLAGS_topics;
  config.alpha = FLAGS_alpha;
  config.beta = FLAGS_beta;
  config.iterations = FLAGS_iterations;
  if (FLAGS_sampler != "sparse" && FLAGS_sampler != "exact") {
    std::fprintf(stderr, "schmp-lda: error: --sampler must be sparse or exact, not '%s'\n",
                 FLAGS_sampler.c_str());
    return 1;
  }
  config.sparse_sampler = FLAGS_sampler == "sparse";
  config.seed = FLAGS_seed;
  config.output = FLAGS_output;
  return job.run<schmp::lda::Lda>(config);
}
