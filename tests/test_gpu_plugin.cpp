// The GPU backend as a plugin: where libknn looks for it, that a CPU run never loads a CUDA
// library, and prepare_backend()'s hand-over to make_backend().
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app_runner.hpp"
#include "core/backend_factory.hpp"
#include "core/prepared_backend.hpp"
#include "knn/error.hpp"
#include "knn/model.hpp"
#include "knn/search.hpp"
#include "knn/version.hpp"
#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;

const char* const kCudaLibraries[] = {"libcudart", "libcublas", "libcuda.so", "libknn_cuda"};

std::string library_folder() {
  Dl_info info{};
  EXPECT_NE(::dladdr(reinterpret_cast<void*>(&knn::make_backend), &info), 0);
  return fs::path(info.dli_fname).parent_path().string();
}

bool driver_present() { return ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) != nullptr; }

std::string data(const std::string& name) { return std::string(KNN_SOURCE_DIR) + "/data/" + name; }

TEST(GpuPlugin, IsLookedForBesideTheLibrary) {
  ::unsetenv("KNN_CUDA_PLUGIN");
  const fs::path path = knn::detail::cuda_plugin_path();
  EXPECT_EQ(path.filename().string(), knn::detail::kCudaPluginFile);
  EXPECT_TRUE(fs::equivalent(path.parent_path(), library_folder())) << path << " vs " << library_folder();
  // The build puts it there whenever it builds the GPU backend.
  EXPECT_EQ(fs::exists(path), knn::built_with_cuda()) << path;
}

TEST(GpuPlugin, EnvironmentNamesAnotherFile) {
  ::setenv("KNN_CUDA_PLUGIN", "/opt/elsewhere/libknn_cuda.so", 1);
  EXPECT_EQ(knn::detail::cuda_plugin_path(), "/opt/elsewhere/libknn_cuda.so");
  ::unsetenv("KNN_CUDA_PLUGIN");
}

TEST(GpuPlugin, CpuRunLoadsNoCudaLibrary) {
  knn::Matrix x(6, 2);
  for (std::size_t i = 0; i < x.values.size(); ++i) x.values[i] = static_cast<float>(i % 5);
  knn::ModelParams p;
  p.k = 3;
  p.backend.device = knn::Device::cpu;
  knn::KnnClassifier m(p);
  m.fit(x, {"a", "b", "a", "b", "a", "b"});
  EXPECT_EQ(m.predict(x).size(), 6u);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    for (const char* lib : kCudaLibraries) EXPECT_EQ(line.find(lib), std::string::npos) << line;
}

// The dynamic loader's own record of what a run of knn-cli opened.
std::string libraries_opened(const std::vector<std::string>& args) {
  const knn::test::AppResult r = knn::test::run_process(KNN_CLI_PATH, args, "LD_DEBUG=libs");
  EXPECT_EQ(r.code, 0) << r;
  return r.err;
}

TEST(GpuPlugin, HelpAndCpuEvaluateOpenNoCudaLibrary) {
  const std::string help = libraries_opened({"--help"});
  const std::string cpu = libraries_opened({"evaluate", "--train", data("iris.csv"), "--device", "cpu"});
  ASSERT_NE(cpu.find("libknn.so"), std::string::npos) << "LD_DEBUG printed nothing useful:\n" << cpu;
  for (const char* lib : kCudaLibraries) {
    EXPECT_EQ(help.find(lib), std::string::npos) << lib;
    EXPECT_EQ(cpu.find(lib), std::string::npos) << lib;
  }
}

TEST(GpuPlugin, AnotherFileIsRefusedWithItsName) {
  if (!knn::built_with_cuda()) GTEST_SKIP() << "built without the GPU backend: no plugin is opened";
  const std::string wrong = library_folder() + "/libknn.so";
  const knn::test::AppResult r = knn::test::run_process(
      KNN_CLI_PATH, {"evaluate", "--train", data("iris.csv"), "--device", "cuda"},
      "KNN_CUDA_PLUGIN=" + knn::test::shell_quote(wrong));
  EXPECT_NE(r.code, 0) << r;
  const std::string expected = driver_present() ? "is not a libknn plugin" : "no CUDA driver on this machine";
  EXPECT_NE(r.err.find(expected), std::string::npos) << r;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r;
}

TEST(PreparedBackend, TakenOnceByTheSameOptions) {
  knn::BackendOptions a;
  a.threads = 1;
  knn::BackendOptions b = a;
  b.threads = 2;
  knn::prepare_backend(a);
  EXPECT_EQ(knn::detail::take_prepared_backend(b), nullptr);
  const auto taken = knn::detail::take_prepared_backend(a);
  ASSERT_NE(taken, nullptr);
  EXPECT_STREQ(taken->name(), knn::detail::make_backend_now(a)->name());
  EXPECT_EQ(knn::detail::take_prepared_backend(a), nullptr);
}

TEST(PreparedBackend, CpuPreparesNothing) {
  knn::BackendOptions cpu;
  cpu.device = knn::Device::cpu;
  knn::prepare_backend(cpu);
  EXPECT_EQ(knn::detail::take_prepared_backend(cpu), nullptr);
  EXPECT_STREQ(knn::make_backend(cpu)->name(), "cpu");
}

TEST(PreparedBackend, ErrorsArriveWhereTheBackendIsTaken) {
  if (knn::cuda_available()) GTEST_SKIP() << "a GPU is usable here: --device cuda does not fail";
  knn::BackendOptions cuda;
  cuda.device = knn::Device::cuda;
  std::string direct;
  try {
    knn::make_backend(cuda);
  } catch (const knn::Error& e) {
    direct = e.what();
  }
  ASSERT_FALSE(direct.empty());
  knn::prepare_backend(cuda);
  try {
    knn::make_backend(cuda);
    ADD_FAILURE() << "no error";
  } catch (const knn::Error& e) {
    EXPECT_EQ(std::string(e.what()), direct);
  }
}

}  // namespace
