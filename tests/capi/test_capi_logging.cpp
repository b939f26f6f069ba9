// Logging: silent by default, routed to a callback with user data, level set through the API.
#include <string>
#include <cstdlib>
#include <vector>

#include "capi_support.hpp"

using namespace sparsetc_test;

namespace {

struct Captured {
  std::vector<std::pair<int, std::string>> lines;
};

void capture(void* user_data, int32_t level, const char* message) {
  static_cast<Captured*>(user_data)->lines.emplace_back(level, message);
}

class Logging : public CapiTest {
 protected:
  void TearDown() override {
    sparsetc_set_log_callback(nullptr, nullptr);
    sparsetc_set_log_level(6);
    CapiTest::TearDown();
  }
  void fail_once() {
    sparsetc_matrix_t m = nullptr;
    EXPECT_EQ(sparsetc_matrix_generate(h_, "nonsense", 1, SPARSETC_VALUE_F64, &m), SPARSETC_STATUS_INVALID_VALUE);
  }
};

TEST_F(Logging, SilentByDefault) {
  if (std::getenv("SPARSETC_LOG_LEVEL")) GTEST_SKIP() << "SPARSETC_LOG_LEVEL is set in this environment";
  Captured got;
  ASSERT_OK(h_, sparsetc_set_log_callback(capture, &got));
  fail_once();
  EXPECT_TRUE(got.lines.empty());
}

TEST_F(Logging, FailuresAreLoggedAtWarningWithTheirMessage) {
  Captured got;
  ASSERT_OK(h_, sparsetc_set_log_callback(capture, &got));
  ASSERT_OK(h_, sparsetc_set_log_level(3));
  fail_once();
  ASSERT_EQ(got.lines.size(), 1u);
  EXPECT_EQ(got.lines[0].first, 3);
  EXPECT_NE(got.lines[0].second.find("sparsetc_matrix_generate"), std::string::npos) << got.lines[0].second;
  EXPECT_NE(got.lines[0].second.find("nonsense"), std::string::npos) << got.lines[0].second;
}

TEST_F(Logging, InfoLevelDescribesPlans) {
  Captured got;
  ASSERT_OK(h_, sparsetc_set_log_callback(capture, &got));
  ASSERT_OK(h_, sparsetc_set_log_level(2));
  sparsetc_matrix_t A = nullptr, C = nullptr;
  ASSERT_OK(h_, sparsetc_matrix_generate(h_, "band:50:2", 1, SPARSETC_VALUE_F64, &A));
  ASSERT_OK(h_, sparsetc_spgemm(h_, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_COMPUTE_64F,
                                SPARSETC_SPGEMM_ALG_AUTO, &C));
  bool plan_line = false;
  for (const auto& [level, text] : got.lines) plan_line = plan_line || text.find("spgemm plan") != std::string::npos;
  EXPECT_TRUE(plan_line);
  sparsetc_matrix_destroy(C);
  sparsetc_matrix_destroy(A);
}

TEST_F(Logging, BadLevelIsRejected) {
  EXPECT_EQ(sparsetc_set_log_level(9), SPARSETC_STATUS_INVALID_VALUE);
  EXPECT_EQ(sparsetc_set_log_level(-1), SPARSETC_STATUS_INVALID_VALUE);
}

}  // namespace
