// schmp-lda: the command line of the LDA program. Framework flags (--seed, --max_rounds,
// --max_seconds, --threads, --trace, ...) are shared by every app; the flags below are LDA's own.
//
//   mpirun -np N schmp-lda --data docword.txt [--vocab vocab.txt] --topics K [--test held_out.txt]
//                          [--output PREFIX]
//   mpirun -np N schmp-lda --text documents.txt --topics K ...
//   schmp-lda infer --model PREFIX --data docword.txt|--text documents.txt [--output PROPORTIONS]
#include <tbb/global_control.h>

#include <cstdio>
#include <optional>

#include "infer.hpp"
#include "lda.hpp"
#include "schmp/output.hpp"
#include "schmp/schmp.hpp"

using schmp::any;
using schmp::at_least;

// The flags' defaults are the Config's, written once, there.
const schmp::lda::Config kDefaults;

SCHMP_FLAG(string, data, "", any(),
           "Corpus as UCI bag-of-words (docword.txt: D, W, NNZ, then 'doc word count', 1-based)");
SCHMP_FLAG(string, text, "", any(),
           "Corpus as one document per line, Mallet's format: 'name label word word ...'");
SCHMP_FLAG(string, vocab, "", any(),
           "UCI vocabulary (vocab.txt: line i holds word i), to name the topics' top words");
SCHMP_FLAG(string, test, "", any(),
           "Held-out documents, in the training corpus's format: their perplexity joins the trace");
SCHMP_FLAG(
    string, coherence_corpus, "", any(),
    "Reference documents for NPMI coherence, in the training corpus's format (default: the training corpus)");
SCHMP_FLAG(int32, top_words, kDefaults.top_words, schmp::between(2, 100),
           "Top words per topic: scored for coherence (UMass, NPMI) and shown in PREFIX.topics");
SCHMP_FLAG(int32, topics, kDefaults.topics, schmp::between(1, 100000), "Number of topics K");
SCHMP_FLAG(double, alpha, kDefaults.alpha, schmp::positive(),
           "Dirichlet prior of document-topic proportions, per topic (Mallet's --alpha is K times it)");
SCHMP_FLAG(double, beta, kDefaults.beta, schmp::positive(),
           "Dirichlet prior of topic-word distributions, per word");
SCHMP_FLAG(int32, iterations, kDefaults.iterations, at_least(1),
           "Gibbs sweeps over every token (infer: fold-in sweeps, half burn-in)");
SCHMP_FLAG(
    int32, optimize_interval, kDefaults.optimize_interval, at_least(0),
    "Learn an asymmetric alpha_k and a symmetric beta every N iterations past the burn-in (0: fixed priors)");
SCHMP_FLAG(int32, optimize_burn_in, kDefaults.optimize_burn_in, at_least(0),
           "Iterations before the priors are first learned (with --optimize_interval)");
SCHMP_FLAG(bool, optimize_beta, kDefaults.optimize_beta, any(),
           "With --optimize_interval, learn beta too (--optimize_beta=false: alpha_k alone, as tomotopy)");
SCHMP_FLAG(
    string, sampler, "sparse", schmp::one_of({"sparse", "exact", "mh"}),
    "sparse: exact Gibbs, O(K_d) per token; exact: all K weights per token; mh: Metropolis-Hastings, O(1)");
SCHMP_FLAG(int32, mh_steps, kDefaults.mh_steps, at_least(1),
           "mh: cycles of the word and the document proposal per token and sweep");
SCHMP_FLAG(
    string, output, "", any(),
    "Training: write PREFIX.word_topic, .topics, .doc_topic (and .vocab). infer: the documents' proportions");
SCHMP_FLAG(string, model, "", any(), "infer: the PREFIX a training run wrote");
DECLARE_uint64(seed);
DECLARE_uint64(eval_every);
DECLARE_int32(threads);

namespace {

int infer() {
  if (FLAGS_model.empty() || FLAGS_data.empty() == FLAGS_text.empty())
    throw std::runtime_error("infer needs --model and one of --data and --text");
  if (const std::string unread = schmp::unread_flag({"vocab", "test", "optimize_interval", "optimize_burn_in",
                                                     "optimize_beta", "coherence_corpus", "top_words"},
                                                    "by infer");
      !unread.empty())
    throw std::runtime_error(unread);
  schmp::io::refuse_overwriting({{"--output", FLAGS_output}}, {{"--data", FLAGS_data},
                                                               {"--text", FLAGS_text},
                                                               {"--model", FLAGS_model + ".word_topic"},
                                                               {"--model", FLAGS_model + ".vocab"}});
  std::optional<tbb::global_control> threads;
  if (FLAGS_threads > 0) threads.emplace(tbb::global_control::max_allowed_parallelism, FLAGS_threads);
  const schmp::lda::Model model = schmp::lda::read_model(FLAGS_model);
  const schmp::lda::InferConfig config{{FLAGS_data, FLAGS_text}, FLAGS_iterations, FLAGS_seed, FLAGS_output};
  const schmp::lda::Inference inference = schmp::lda::infer(model, config);
  std::printf("documents %llu  tokens %llu  held-out perplexity %.6f (document completion: %llu tokens)\n",
              static_cast<unsigned long long>(inference.documents),
              static_cast<unsigned long long>(inference.tokens), inference.perplexity,
              static_cast<unsigned long long>(inference.held_out_tokens));
  if (inference.unknown_tokens > 0) {
    std::printf("%llu tokens of words the model does not know were left out\n",
                static_cast<unsigned long long>(inference.unknown_tokens));
  }
  if (!FLAGS_output.empty()) std::printf("proportions: %s\n", FLAGS_output.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (schmp::take_subcommand(argc, argv, "infer")) {
    return schmp::run_tool(
        argc, argv,
        "usage: schmp-lda infer --model PREFIX --data docword.txt|--text documents.txt [--iterations T] "
        "[--output PROPORTIONS]",
        infer);
  }
  schmp::Job job(argc, argv,
                 "Latent Dirichlet allocation by model-parallel collapsed Gibbs sampling.\n"
                 "usage: mpirun -np N schmp-lda --data docword.txt [--vocab vocab.txt] --topics K "
                 "[--iterations T] [--output PREFIX] [--trace FILE]");
  if (const std::string unread = schmp::unread_flag({"model"}, "in training"); !unread.empty())
    return job.refuse(unread);
  if (FLAGS_optimize_interval == 0) {
    if (const std::string unread =
            schmp::unread_flag({"optimize_burn_in", "optimize_beta"}, "without --optimize_interval");
        !unread.empty())
      return job.refuse(unread);
  }
  schmp::lda::Config config;
  config.data = FLAGS_data;
  config.text = FLAGS_text;
  config.vocab = FLAGS_vocab;
  config.test = FLAGS_test;
  config.coherence_corpus = FLAGS_coherence_corpus;
  config.top_words = FLAGS_top_words;
  config.eval_every = FLAGS_eval_every;
  config.topics = FLAGS_topics;
  config.alpha = FLAGS_alpha;
  config.beta = FLAGS_beta;
  config.iterations = FLAGS_iterations;
  config.optimize_interval = FLAGS_optimize_interval;
  config.optimize_burn_in = FLAGS_optimize_burn_in;
  config.optimize_beta = FLAGS_optimize_beta;
  if (FLAGS_sampler == "exact") config.sampler = schmp::lda::Sampler::kExact;
  if (FLAGS_sampler == "mh") config.sampler = schmp::lda::Sampler::kMetropolisHastings;
  config.mh_steps = FLAGS_mh_steps;
  config.seed = FLAGS_seed;
  config.output = FLAGS_output;
  return job.run<schmp::lda::Lda>(config);
}
