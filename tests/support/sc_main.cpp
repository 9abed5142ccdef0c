// Test executables link SystemC, whose library defines main() and calls sc_main(): run GoogleTest from there.
#include <gtest/gtest.h>
#include <cstdlib>
#include <systemc>

#include "support/temp_dir.hpp"

// Silence the SystemC banner, printed from the library's main() before sc_main.
static const bool kQuietSystemC = [] { return setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0; }();

int sc_main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Each test's temporary folder goes when the test ends (tests/support/temp_dir.hpp).
  ::testing::UnitTest::GetInstance()->listeners().Append(neuronsim::testing::new_temp_folder_cleaner());
  return RUN_ALL_TESTS();
}
