// Resuming the rotation programs (MF, LDA) under mpirun, whose workers take their part of the model from
// the checkpointed run's shares one share at a time:
//   - MF's SGD resumed on the rank count of its checkpoint writes the model file of an uninterrupted
//     run, byte for byte, early stopping's kept model included, and the last model when the resumed
//     run does not stop early;
//   - LDA with the exact and mh samplers continues byte for byte likewise;
//   - shares that do not fit the data (a document missing, twice or of another length, tokens the
//     corpus does not have, shares missing or out of order, rows too short or too long, ratings read
//     with another --index_base), and MF progress beyond its components, are refused on every rank
//     with one line naming the checkpoint, on one rank and on several.
#include <cstdint>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "../io/checkpoint_file.hpp"
#include "e2e.hpp"
#include "lda.hpp"
#include "mf.hpp"
#include "schmp/message.hpp"
#include "test_files.hpp"

namespace schmp::testing {
namespace {

// A checkpoint's workers' shares, as the program's Saved messages.
template <class Saved>
std::vector<Saved> shares_of(const io::CheckpointState& state) {
  std::vector<Saved> shares;
  for (const Bytes& share : state.workers) shares.push_back(deserialize<Saved>(share));
  return shares;
}

// Writes to `to` the checkpoint at `from` with its workers' shares (the program's Saved) changed by
// `change`. The input fingerprints are kept, so the forgery passes every check but the program's own.
template <class Saved>
void forge_shares(const std::string& from, const std::string& to,
                  const std::function<void(std::vector<Saved>&)>& change) {
  io::CheckpointState state = io::read_checkpoint(from);
  std::vector<Saved> shares = shares_of<Saved>(state);
  change(shares);
  state.workers.clear();
  for (const Saved& share : shares) state.workers.push_back(serialize(share));
  io::write_checkpoint(to, state);
}

TEST(RotationResume, MfSgdContinuesExactly) {
  ScratchDir scratch;
  const std::string data = scratch.file("mf.txt");
  const Output made =
      run(std::string(SCHMP_GENERATE_BIN) +
          " mf --users 300 --items 200 --rank 4 --ratings 6000 --test_ratings 1500 --noise 0.5"
          " --seed 5 --out " +
          data);
  ASSERT_EQ(made.status, 0) << made.text;
  // A weak penalty overfits: the test RMSE is best at iteration 15 of 30, so the model written at the
  // end is the one early stopping kept, from before the checkpoint at iteration 20.
  const std::string plain =
      mpirun(3) + SCHMP_MF_BIN + " --data " + data + " --test " + data +
      ".test --algorithm sgd --rank 16 --lambda 0.0001 --biases=false --progress_seconds 0";
  const std::string mf = plain + " --early_stop 100";
  const std::string checkpoint = scratch.file("run.checkpoint");
  const Output whole = run(mf + " --iterations 30 --output " + scratch.file("whole"));
  ASSERT_EQ(whole.status, 0) << whole.text;
  ASSERT_NE(whole.text.find("at iteration 15: the model kept"), std::string::npos) << whole.text;
  const Output first = run(mf + " --iterations 20 --checkpoint " + checkpoint);
  ASSERT_EQ(first.status, 0) << first.text;
  const Output resumed =
      run(mf + " --iterations 30 --resume " + checkpoint + " --output " + scratch.file("resumed"));
  ASSERT_EQ(resumed.status, 0) << resumed.text;
  EXPECT_EQ(read_text(scratch.file("resumed")), read_text(scratch.file("whole")));
  // Resumed without early stopping, the run writes its last model, as a run that never stopped early.
  const Output last = run(plain + " --iterations 30 --output " + scratch.file("last"));
  ASSERT_EQ(last.status, 0) << last.text;
  const Output resumed_plain =
      run(plain + " --iterations 30 --resume " + checkpoint + " --output " + scratch.file("resumed_plain"));
  ASSERT_EQ(resumed_plain.status, 0) << resumed_plain.text;
  EXPECT_EQ(read_text(scratch.file("resumed_plain")), read_text(scratch.file("last")));
}

// --implicit: the coordinator's Gram matrices are not in the checkpoint; the resumed run sums them
// afresh, and goes on as the uninterrupted one, at the same rank count or another.
TEST(RotationResume, MfImplicitContinues) {
  ScratchDir scratch;
  const std::string ratings = scratch.file("mf.txt");
  const Output made = run(std::string(SCHMP_GENERATE_BIN) +
                          " mf --users 300 --items 200 --rank 4 --ratings 9000 --test_ratings 0 --noise 0.5"
                          " --seed 6 --out " +
                          ratings);
  ASSERT_EQ(made.status, 0) << made.text;
  // The ratings above 0 as counts of interactions.
  std::ifstream in(ratings);
  std::string counts;
  for (std::string user, item; in >> user >> item;) {
    double rating = 0;
    in >> rating;
    if (rating > 0)
      counts += user + " " + item + " " + std::to_string(1 + static_cast<int>(3 * rating)) + "\n";
  }
  const std::string data = scratch.file("counts.txt");
  std::ofstream(data) << counts;
  const std::string mf =
      std::string(SCHMP_MF_BIN) + " --data " + data +
      " --implicit --rank 6 --block_size 4 --inner 2 --alpha 2 --lambda 0.5 --progress_seconds 0";
  const Output whole = run(mpirun(3) + mf + " --iterations 8");
  ASSERT_EQ(whole.status, 0) << whole.text;
  // Stopped within a block's update: the Gram round, then 4 rounds per block update (--inner 2), so
  // round 20 is the third of one.
  const std::string checkpoint = scratch.file("run.checkpoint");
  const Output first = run(mpirun(3) + mf + " --iterations 8 --max_rounds 20 --checkpoint " + checkpoint);
  ASSERT_EQ(first.status, 0) << first.text;
  ASSERT_NE(first.text.find("stopped by max_rounds"), std::string::npos) << first.text;
  for (const int ranks : {3, 2}) {
    const Output resumed = run(mpirun(ranks) + mf + " --iterations 8 --resume " + checkpoint);
    ASSERT_EQ(resumed.status, 0) << resumed.text;
    EXPECT_NEAR(objective_of(resumed), objective_of(whole), 1e-10 * objective_of(whole)) << ranks << " ranks";
  }
  // Resumed with another confidence, or other blocks, it would go on otherwise: refused.
  for (const std::string other : {"--alpha 3", "--block_size 3"}) {
    const Output refused = run(mpirun(3) + mf + " " + other + " --iterations 8 --resume " + checkpoint);
    EXPECT_NE(refused.status, 0);
    EXPECT_NE(
        refused.text.find("the checkpoint was made with --algorithm ccd --rank 6 --biases=false --lambda 0.5 "
                          "--implicit --alpha 2 --confidence linear --block_size 4"),
        std::string::npos)
        << refused.text;
  }
}

// A sweep's random numbers follow from the seed, the worker, the iteration and the block, so a resumed
// chain draws what the uninterrupted one did, not the first iterations' numbers again: with the samplers
// that keep no order of their own (the sparse one lists each document's topics by count, ties as they
// came, which a resume rebuilds otherwise), the model is the same byte for byte. With the mh sampler the
// priors are learned too (after iterations 2, 4 and 6): the checkpoint carries those of iteration 2.
TEST(RotationResume, LdaContinuesExactly) {
  ScratchDir scratch;
  for (const char* sampler : {"exact", "mh"}) {
    for (int ranks : {1, 3}) {
      const std::string lda =
          mpirun(ranks) + SCHMP_LDA_BIN + " --data " + SCHMP_SOURCE_DIR +
          "/data/sotu/docword.txt --topics 5 --progress_seconds 0 --sampler " + sampler +
          (std::string(sampler) == "mh" ? " --optimize_interval 2 --optimize_burn_in 1" : "");
      const std::string checkpoint = scratch.file("lda.checkpoint");
      const Output whole = run(lda + " --iterations 6 --output " + scratch.file("whole"));
      ASSERT_EQ(whole.status, 0) << whole.text;
      const Output first = run(lda + " --iterations 3 --checkpoint " + checkpoint);
      ASSERT_EQ(first.status, 0) << first.text;
      const Output resumed =
          run(lda + " --iterations 6 --resume " + checkpoint + " --output " + scratch.file("resumed"));
      ASSERT_EQ(resumed.status, 0) << resumed.text;
      for (const char* part : {".word_topic", ".doc_topic"}) {
        EXPECT_EQ(read_text(scratch.file("resumed") + part), read_text(scratch.file("whole") + part))
            << sampler << " on " << ranks << " ranks: " << part;
      }
      if (std::string(sampler) == "mh") {
        EXPECT_NE(read_text(scratch.file("whole.word_topic")).find("# alpha by topic:"), std::string::npos);
      }
    }
  }
}

// A run resumed from its last checkpoint, its iterations all done, evaluates that state once more: with the
// priors it learned (every share carries them) and scoring coherence as the last evaluation does.
TEST(RotationResume, LdaResumedAtItsEndReportsTheSameModel) {
  ScratchDir scratch;
  const std::string lda = std::string(SCHMP_LDA_BIN) + " --data " + SCHMP_SOURCE_DIR +
                          "/data/sotu/docword.txt --topics 5 --iterations 6 --optimize_interval 2 "
                          "--optimize_burn_in 1 --progress_seconds 0";
  const std::string checkpoint = scratch.file("lda.checkpoint");
  const Output whole =
      run(mpirun(2) + lda + " --checkpoint " + checkpoint + " --output " + scratch.file("whole"));
  ASSERT_EQ(whole.status, 0) << whole.text;
  const Output resumed =
      run(mpirun(3) + lda + " --resume " + checkpoint + " --output " + scratch.file("resumed"));
  ASSERT_EQ(resumed.status, 0) << resumed.text;
  const auto line = [](const std::string& text, const std::string& start) {
    const std::size_t at = text.find(start);
    return at == std::string::npos ? std::string() : text.substr(at, text.find_first_of("(\n", at) - at);
  };
  for (const char* start : {"log-likelihood per token", "coherence of the top"}) {
    EXPECT_FALSE(line(whole.text, start).empty()) << whole.text;
    EXPECT_EQ(line(resumed.text, start), line(whole.text, start));
  }
  for (const char* part : {".word_topic", ".topics", ".doc_topic"})
    EXPECT_EQ(read_text(scratch.file("resumed") + part), read_text(scratch.file("whole") + part)) << part;
}

using LdaShares = std::vector<lda::Lda::Saved>;

// The topics of document `d` of a share: where they start among its tokens.
std::size_t topics_start(const lda::Lda::Saved& share, std::size_t d) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < d; ++i) start += share.lengths[i];
  return start;
}

TEST(RotationResume, LdaSharesThatDoNotFitAreRefused) {
  ScratchDir scratch;
  const std::string lda = std::string(SCHMP_LDA_BIN) + " --data " + SCHMP_SOURCE_DIR +
                          "/data/sotu/docword.txt --topics 5 --iterations 3 --progress_seconds 0";
  const std::string checkpoint = scratch.file("run.checkpoint");
  const Output made = run(mpirun(2) + lda + " --iterations 2 --checkpoint " + checkpoint);
  ASSERT_EQ(made.status, 0) << made.text;
  const LdaShares shares = shares_of<lda::Lda::Saved>(io::read_checkpoint(checkpoint));
  ASSERT_EQ(shares.size(), 2u);
  const std::uint32_t last = shares[1].documents.back();
  const std::uint32_t first = shares[0].documents.front();
  const std::uint32_t first_length = shares[0].lengths.front();
  std::uint64_t tokens = 0;
  for (const auto& share : shares) tokens += share.topics.size();

  struct Forgery {
    std::string name;
    std::function<void(LdaShares&)> change;
    std::string message;  // on one rank, where the one worker owns every document
  };
  const std::vector<Forgery> forgeries = {
      {"missing",
       [](LdaShares& all) {
         all[1].topics.resize(all[1].topics.size() - all[1].lengths.back());
         all[1].documents.pop_back();
         all[1].lengths.pop_back();
       },
       "document " + std::to_string(last) + " is missing"},
      {"twice",
       [](LdaShares& all) {
         all[1].documents.push_back(all[0].documents[0]);
         all[1].lengths.push_back(all[0].lengths[0]);
         all[1].topics.insert(all[1].topics.end(), all[0].topics.begin(),
                              all[0].topics.begin() + all[0].lengths[0]);
       },
       "document " + std::to_string(first) + " twice"},
      {"another_length",
       [](LdaShares& all) {
         ++all[0].lengths[0];
         --all[0].lengths[1];
       },
       "document " + std::to_string(first) + " has " + std::to_string(first_length + 1) + " tokens there, " +
           std::to_string(first_length) + " here"},
      {"unknown_document",
       [](LdaShares& all) {
         all[1].documents.push_back(1000000);
         all[1].lengths.push_back(3);
         all[1].topics.insert(all[1].topics.end(), {0, 1, 2});
       },
       "it holds " + std::to_string(tokens + 3) + " tokens, the corpus " + std::to_string(tokens)},
      {"topic_out_of_range", [](LdaShares& all) { all[1].topics[topics_start(all[1], 1)] = 5; },
       "topic 5 of 5"},
  };
  const std::string refused =
      "schmp-lda: error: " + scratch.file("forged") + ": the checkpoint does not fit this corpus: ";
  for (const Forgery& forgery : forgeries) {
    SCOPED_TRACE(forgery.name);
    forge_shares<lda::Lda::Saved>(checkpoint, scratch.file("forged"), forgery.change);
    expect_clean_failure(run(mpirun(1) + lda + " --resume " + scratch.file("forged")),
                         refused + forgery.message);
    // On several ranks only the owner of a document sees it: which rank speaks first depends on how
    // the documents are dealt, but every rank stops.
    expect_clean_failure(run(mpirun(3) + lda + " --resume " + scratch.file("forged")), refused);
  }
}

using MfShares = std::vector<mf::MatrixFactorization::Saved>;

// 3,000 generated ratings of 200 users and 100 items, in `scratch`: what the MF forgeries start from.
std::string small_ratings(const ScratchDir& scratch) {
  const std::string data = scratch.file("mf.txt");
  const Output made =
      run(std::string(SCHMP_GENERATE_BIN) +
          " mf --users 200 --items 100 --rank 3 --ratings 3000 --test_ratings 0 --seed 2 --out " + data);
  EXPECT_EQ(made.status, 0) << made.text;
  return data;
}

TEST(RotationResume, MfSharesThatDoNotFitAreRefused) {
  ScratchDir scratch;
  const std::string data = small_ratings(scratch);
  for (const std::string algorithm : {"ccd", "sgd"}) {
    SCOPED_TRACE(algorithm);
    const std::string mf = std::string(SCHMP_MF_BIN) + " --data " + data + " --algorithm " + algorithm +
                           " --rank 3 --iterations 3 --progress_seconds 0";
    const std::string checkpoint = scratch.file(algorithm + ".checkpoint");
    const Output first = run(mpirun(2) + mf + " --iterations 2 --checkpoint " + checkpoint);
    ASSERT_EQ(first.status, 0) << first.text;
    // A file the refused resumes are told to trace to, which they must leave as it is.
    const std::string trace = scratch.write(algorithm + ".csv", "another run's trace\n");
    const std::string forged = scratch.file("forged");
    const std::string refused = "schmp-mf: error: " + forged + ": ";
    const std::vector<std::pair<std::function<void(MfShares&)>, std::string>> forgeries = {
        {[](MfShares& all) { all.pop_back(); }, "the checkpoint holds 1 of its 2 workers' shares"},
        {[](MfShares& all) { std::swap(all[0], all[1]); }, "the checkpoint's shares are out of order"},
        {[](MfShares& all) { all[1].user_factors.resize(all[1].user_factors.size() / 2); },
         "the checkpoint does not fit this data: it holds the factors of other users or items"},
        {[](MfShares& all) { all[0].item_factors.resize(all[0].item_factors.size() + 3); },
         "the checkpoint does not fit this data: it holds the factors of other users or items"},
    };
    for (const auto& [change, message] : forgeries) {
      forge_shares<mf::MatrixFactorization::Saved>(checkpoint, forged, change);
      // The rows are taken alike for both algorithms: sgd on several ranks only, to save time.
      for (const int ranks : algorithm == "ccd" ? std::vector<int>{1, 3} : std::vector<int>{3}) {
        SCOPED_TRACE(message + " on " + std::to_string(ranks));
        expect_clean_failure(run(mpirun(ranks) + mf + " --resume " + forged + " --trace " + trace),
                             refused + message);
        EXPECT_EQ(read_text(trace), "another run's trace\n") << "a refused resume rewrote the trace";
      }
    }
  }
}

// Ratings with no id 0 read 1-based instead: every id moves down by one and the job counts a user and
// an item fewer. The checkpoint's rows would each go to the neighbouring id; the resume is refused.
TEST(RotationResume, MfWithAnotherIndexBaseIsRefused) {
  ScratchDir scratch;
  std::ifstream in(small_ratings(scratch));
  std::ostringstream without_zero;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::uint64_t user = 0, item = 0;
    fields >> user >> item;
    if (user != 0 && item != 0) without_zero << line << '\n';
  }
  const std::string data = scratch.write("from_one.txt", without_zero.str());
  for (const std::string algorithm : {"ccd", "sgd"}) {
    const std::string mf = std::string(SCHMP_MF_BIN) + " --data " + data + " --algorithm " + algorithm +
                           " --rank 3 --iterations 3 --progress_seconds 0";
    const std::string checkpoint = scratch.file(algorithm + ".checkpoint");
    const Output first = run(mpirun(2) + mf + " --iterations 2 --checkpoint " + checkpoint);
    ASSERT_EQ(first.status, 0) << first.text;
    for (const int ranks : {1, 3}) {
      SCOPED_TRACE(algorithm + " on " + std::to_string(ranks));
      expect_clean_failure(
          run(mpirun(ranks) + mf + " --index_base 1 --resume " + checkpoint),
          "schmp-mf: error: " + checkpoint +
              ": the checkpoint does not fit this data: it holds the factors of other users or "
              "items (another --index_base?)");
    }
  }
}

// The coordinator's own progress is checked too: a component or a sweep order beyond --rank would
// index past the components.
TEST(RotationResume, MfProgressThatDoesNotFitIsRefused) {
  ScratchDir scratch;
  const std::string data = small_ratings(scratch);
  const std::string mf = mpirun(2) + SCHMP_MF_BIN + " --data " + data +
                         " --algorithm ccd --rank 3 --iterations 3 --biases=false --progress_seconds 0";
  const std::string checkpoint = scratch.file("ccd.checkpoint");
  // Checkpointed within an iteration: 2 rounds of 3 components, so the sweep under way has an order.
  const Output first = run(mf + " --max_rounds 2 --checkpoint " + checkpoint);
  ASSERT_EQ(first.status, 0) << first.text;
  using Progress = mf::MatrixFactorization::Progress;
  const std::vector<std::function<void(Progress&)>> forgeries = {
      [](Progress& progress) { progress.component = 3; },
      [](Progress& progress) { progress.sweep_order.back() = 7; },
      [](Progress& progress) { progress.sweep_order.pop_back(); },
      [](Progress& progress) { progress.rounds_left = -1; },
  };
  const std::string forged = scratch.file("forged");
  for (std::size_t f = 0; f < forgeries.size(); ++f) {
    SCOPED_TRACE("forgery " + std::to_string(f));
    io::CheckpointState state = io::read_checkpoint(checkpoint);
    auto progress = deserialize<Progress>(state.coordinator);
    ASSERT_EQ(progress.sweep_order.size(), 3u);
    forgeries[f](progress);
    state.coordinator = serialize(progress);
    io::write_checkpoint(forged, state);
    expect_clean_failure(run(mf + " --resume " + forged),
                         "schmp-mf: error: " + forged + ": the checkpoint's components do not fit --rank");
  }
}

}  // namespace
}  // namespace schmp::testing
