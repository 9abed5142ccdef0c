#include <gtest/gtest.h>
#include "neuronsim/isa/program.hpp"
using namespace neuronsim::isa;
TEST(Smoke, AluNames) { EXPECT_STREQ(alu_name(AluOp::mult), "mult"); }
