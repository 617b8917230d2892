// schmp-lda: the command line of the LDA program. Framework flags (--seed, --max_rounds,
// --max_seconds, --threads, --trace, ...) are shared by every app; the flags below are LDA's own.
//
//   mpirun -np N schmp-lda --data docword.txt [--vocab vocab.txt] --topics K [--test held_out.txt]
//                          [--output PREFIX]
//   mpirun -np N schmp-lda --text documents.txt --topics K ...
//   schmp-lda infer --model PREFIX --data docword.txt|--text documents.txt [--output PROPORTIONS]
#include <gflags/gflags.h>
#include <tbb/global_control.h>

#include <cstdio>
#include <optional>

#include "infer.hpp"
#include "lda.hpp"
#include "schmp/output.hpp"
#include "schmp/run.hpp"

DEFINE_string(data, "",
              "Corpus as UCI bag-of-words (docword.txt: D, W, NNZ, then 'doc word count', 1-based)");
DEFINE_string(text, "", "Corpus as one document per line, Mallet's format: 'name label word word ...'");
DEFINE_string(vocab, "", "UCI vocabulary (vocab.txt: line i holds word i), to name the topics' top words");
DEFINE_string(test, "",
              "Held-out documents, in the format of the training corpus: their perplexity (document "
              "completion) joins the trace at every evaluation (--eval_every rounds, 0 = every round)");
DEFINE_int32(topics, 10, "Number of topics K");
DEFINE_double(alpha, 0.1,
              "Dirichlet prior of document-topic proportions, per topic (Mallet's --alpha is K times it)");
DEFINE_double(beta, 0.01, "Dirichlet prior of topic-word distributions, per word");
DEFINE_int32(iterations, 100, "Gibbs sweeps over every token (infer: fold-in sweeps, half of them burn-in)");
DEFINE_string(sampler, "sparse",
              "sparse: exact Gibbs, word by word, O(K_d) per token (F+LDA); exact: exact Gibbs, all K "
              "weights per token; mh: Metropolis-Hastings with word and document proposals, O(1) per step "
              "(LightLDA/WarpLDA), slower to mix per sweep (README compares them). The CPU's samplers: "
              "--device gpu draws exactly, all K weights per token, one warp each");
DEFINE_int32(mh_steps, 2, "mh: cycles of the word and the document proposal per token and sweep");
DEFINE_string(output, "",
              "Training: write PREFIX.word_topic, PREFIX.topics, PREFIX.doc_topic (and PREFIX.vocab when the "
              "words have names). infer: the documents' topic proportions, one line each");
DEFINE_string(model, "", "infer: the PREFIX a training run wrote");
DECLARE_uint64(seed);
DECLARE_uint64(eval_every);
DECLARE_int32(threads);

namespace {

int infer() {
  if (FLAGS_model.empty() || FLAGS_data.empty() == FLAGS_text.empty())
    throw std::runtime_error("infer needs --model and one of --data and --text");
  if (const std::string unread = schmp::unread_flag({"vocab", "test"}, "by infer"); !unread.empty())
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
  schmp::lda::Config config;
  config.data = FLAGS_data;
  config.text = FLAGS_text;
  config.vocab = FLAGS_vocab;
  config.test = FLAGS_test;
  config.eval_every = FLAGS_eval_every;
  config.topics = FLAGS_topics;
  config.alpha = FLAGS_alpha;
  config.beta = FLAGS_beta;
  config.iterations = FLAGS_iterations;
  if (FLAGS_sampler == "sparse") {
    config.sampler = schmp::lda::Sampler::kSparse;
  } else if (FLAGS_sampler == "exact") {
    config.sampler = schmp::lda::Sampler::kExact;
  } else if (FLAGS_sampler == "mh") {
    config.sampler = schmp::lda::Sampler::kMetropolisHastings;
  } else {
    return job.refuse("--sampler must be sparse, exact or mh, not '" + FLAGS_sampler + "'");
  }
  config.mh_steps = FLAGS_mh_steps;
  config.seed = FLAGS_seed;
  config.output = FLAGS_output;
  return job.run<schmp::lda::Lda>(config);
}
