// Temporary directories for the tests. Every directory a test makes lives under one folder of its own,
// <system temp dir>/neuronsim-test-<Suite.Name>-XXXXXX, removed with everything in it when the test ends
// (passed, failed, or left early by an ASSERT), so a whole ctest run leaves nothing in the system temp
// folder. Made outside a test (a static, a test-suite fixture), the folder is the process's and goes when the
// program ends. The removal is a GoogleTest listener that sc_main (tests/support/sc_main.cpp) installs.
#pragma once

#include <string>

namespace testing {
class TestEventListener;
}

namespace neuronsim::testing {

// A fresh, empty directory <test folder>/<tag>-<n> (n counts up within the folder).
std::string temp_dir(const std::string &tag = "tmp");

// The running test's folder, made on first use.
std::string test_folder();

// The listener that removes each test's folder when the test ends (and the process's at the end); the caller
// hands it to GoogleTest, which owns it.
::testing::TestEventListener *new_temp_folder_cleaner();

} // namespace neuronsim::testing
