// The tests' temporary folders (tests/support/temp_dir.hpp): each test gets one folder under the system temp
// dir, every temp_dir lives in it, and the listener sc_main installs removes it when the test ends.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using neuronsim::testing::temp_dir;
using neuronsim::testing::test_folder;

// Two directories of one test: distinct, empty, both inside the test's folder, which sits in the system temp
// dir and is named after the test.
TEST(TempDir, DirectoriesOfATestShareItsFolder) {
  const std::string folder = test_folder();
  const std::string a = temp_dir("x"), b = temp_dir("x");
  EXPECT_NE(a, b);
  EXPECT_TRUE(fs::is_directory(a) && fs::is_empty(a));
  EXPECT_TRUE(fs::is_directory(b) && fs::is_empty(b));
  EXPECT_EQ(fs::path(a).parent_path(), fs::path(folder));
  EXPECT_EQ(fs::path(b).parent_path(), fs::path(folder));
  EXPECT_TRUE(fs::equivalent(fs::path(folder).parent_path(), fs::temp_directory_path())) << folder;
  EXPECT_EQ(fs::path(folder).filename().string().rfind(
                "neuronsim-test-TempDir.DirectoriesOfATestShareItsFolder-", 0),
            0u)
      << folder;
}

// The listener's end-of-test step removes the folder with what the test left in it; the next temp_dir makes a
// new folder.
TEST(TempDir, TheEndOfATestRemovesItsFolder) {
  const std::string dir = temp_dir("left");
  std::ofstream(dir + "/file.txt") << "left behind";
  const std::string folder = test_folder();
  std::unique_ptr<::testing::TestEventListener> cleaner(neuronsim::testing::new_temp_folder_cleaner());
  cleaner->OnTestEnd(*::testing::UnitTest::GetInstance()->current_test_info());
  EXPECT_FALSE(fs::exists(folder));
  const std::string again = temp_dir("again");
  EXPECT_TRUE(fs::is_directory(again));
  EXPECT_NE(fs::path(again).parent_path(), fs::path(folder));
}
