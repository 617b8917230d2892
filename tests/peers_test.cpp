// The workers' collectives under mpirun, on several rank counts (more ranks than cores too): sums of
// vectors of different lengths, maxima, records routed to their owners in order and in many steps,
// messages and broadcasts sent in pieces, and a worker that fails stopping the others instead of
// leaving them waiting.
#include <gtest/gtest.h>

#include <string>

#include "e2e.hpp"
#include "test_files.hpp"

namespace schmp::testing {
namespace {

class PeersTest : public ::testing::TestWithParam<int> {};

TEST_P(PeersTest, CollectivesGiveEveryWorkerTheSameAnswer) {
  const int ranks = GetParam();
  const Output out = run(mpirun(ranks) + SCHMP_PEERS_PROBE);
  EXPECT_EQ(out.status, 0) << out.text;
  for (int rank = 0; rank < ranks; ++rank)
    EXPECT_NE(out.text.find("rank " + std::to_string(rank) + ": ok"), std::string::npos) << out.text;
}

TEST_P(PeersTest, AWorkerThatFailsStopsTheOthers) {
  const int ranks = GetParam();
  for (const int calls : {0, 2}) {
    SCOPED_TRACE("failing after " + std::to_string(calls) + " calls");
    const Output out = run(mpirun(ranks) + SCHMP_PEERS_PROBE + " fail " + std::to_string(calls));
    EXPECT_EQ(out.status, 0) << out.text;
    EXPECT_NE(out.text.find("rank " + std::to_string(ranks - 1) + ": bad input"), std::string::npos)
        << out.text;
    for (int rank = 0; rank + 1 < ranks; ++rank) {
      EXPECT_NE(out.text.find("rank " + std::to_string(rank) + ": stopped by a peer"), std::string::npos)
          << out.text;
    }
  }
}

// Each rank reads its byte range of the corpus; the documents it keeps are those a whole read would
// have dealt it. The small corpus leaves some ranks' ranges without an entry, or inside the header.
TEST_P(PeersTest, LdaWorkersReadingTheirRangesKeepTheDocumentsAWholeReadDeals) {
  const int ranks = GetParam();
  ScratchDir dir;
  const std::string small = dir.write("docword.txt", "4\n5\n4\n1 2 3\n1 5 1\n3 1 2\n4 4 7\n");
  for (const std::string& corpus : {std::string(SCHMP_SOURCE_DIR) + "/data/sotu/docword.txt", small}) {
    const Output out = run(mpirun(ranks) + SCHMP_PEERS_PROBE + " documents " + corpus);
    EXPECT_EQ(out.status, 0) << out.text;
    for (int rank = 0; rank < ranks; ++rank)
      EXPECT_NE(out.text.find("rank " + std::to_string(rank) + ": ok"), std::string::npos)
          << corpus << out.text;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, PeersTest, ::testing::Values(1, 2, 3, 5),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "np" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace schmp::testing
