// --device under mpirun, for every app: a bad value, and --device gpu where no GPU can be used, end
// the run on every rank with one clear line and a non-zero status, before any data is read.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "e2e.hpp"
#include "gpu.hpp"
#include "test_files.hpp"

namespace schmp::testing {
namespace {

struct App {
  std::string name;
  std::string command;  // the app and flags of a short run that works on the CPU
};

// Every app, on small data in `dir` (MF's ratings are generated there).
std::vector<App> apps(const ScratchDir& dir) {
  const Output out =
      run(std::string(SCHMP_GENERATE_BIN) + " mf --users 60 --items 30 --rank 2 --ratings 600" +
          " --test_ratings 0 --seed 1 --out " + dir.file("ratings.txt"));
  EXPECT_EQ(out.status, 0) << out.text;
  return {{"schmp-lasso",
           SCHMP_LASSO_BIN " --layout all --data " SCHMP_SOURCE_DIR "/data/diabetes.svm --max_rounds 2"},
          {"schmp-logreg",
           SCHMP_LOGREG_BIN " --layout all --data " SCHMP_SOURCE_DIR "/data/heart_scale.svm --max_rounds 2"},
          {"schmp-mf",
           std::string(SCHMP_MF_BIN) + " --data " + dir.file("ratings.txt") + " --rank 2 --iterations 2"},
          {"schmp-lda",
           SCHMP_LDA_BIN " --data " SCHMP_SOURCE_DIR "/data/sotu/docword.txt --topics 4 --iterations 2"}};
}

class DeviceFlag : public ::testing::TestWithParam<int> {};

TEST_P(DeviceFlag, UnknownDeviceIsRefused) {
  const ScratchDir dir;
  for (const App& app : apps(dir)) {
    SCOPED_TRACE(app.name);
    const Output out = run(mpirun(GetParam()) + app.command + " --device tpu");
    expect_clean_failure(out, app.name + ": error: --device must be cpu or gpu, not 'tpu'");
  }
}

TEST_P(DeviceFlag, GpuWithoutOneFailsWithOneLine) {
  if (kernels::gpu_count() > 0) GTEST_SKIP() << "this host has a GPU";
  const ScratchDir dir;
  for (const App& app : apps(dir)) {
    SCOPED_TRACE(app.name);
    const Output out = run(mpirun(GetParam()) + app.command + " --device gpu");
    expect_clean_failure(out, app.name + ": error: --device gpu: " + kernels::no_gpu_reason());
    // One error line from the whole job, however many ranks (mpirun adds its own note of the status).
    const std::string error = app.name + ": error:";
    std::size_t errors = 0;
    for (std::size_t at = out.text.find(error); at != std::string::npos; at = out.text.find(error, at + 1))
      ++errors;
    EXPECT_EQ(errors, 1u) << out.text;
  }
}

TEST_P(DeviceFlag, CpuIsAccepted) {
  const ScratchDir dir;
  for (const App& app : apps(dir)) {
    SCOPED_TRACE(app.name);
    const Output out = run(mpirun(GetParam()) + app.command + " --device cpu");
    EXPECT_EQ(out.status, 0) << out.text;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, DeviceFlag, ::testing::Values(1, 3));

}  // namespace
}  // namespace schmp::testing
