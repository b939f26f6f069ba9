// Helpers of the C API tests: a CPU handle fixture and status assertions that print the message.
#pragma once

#include <gtest/gtest.h>
#include <sparsetc/sparsetc.h>

#include <string>

namespace sparsetc_test {

inline std::string message_of(sparsetc_handle_t h) {
  char text[1024];
  sparsetc_get_last_error(h, text, sizeof text);
  return text;
}

class CapiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sparsetc_create_with_backend(&h_, SPARSETC_BACKEND_CPU, 0), SPARSETC_STATUS_SUCCESS);
  }
  void TearDown() override { sparsetc_destroy(h_); }
  // Asserts a status and that the handle's message contains `fragment`.
  void expect_failure(sparsetc_status_t got, sparsetc_status_t want, const std::string& fragment) {
    EXPECT_EQ(got, want) << "got " << sparsetc_get_status_name(got) << ": " << message_of(h_);
    EXPECT_NE(message_of(h_).find(fragment), std::string::npos)
        << "message \"" << message_of(h_) << "\" lacks \"" << fragment << "\"";
  }
  sparsetc_handle_t h_ = nullptr;
};

#define EXPECT_OK(h, call) \
  EXPECT_EQ((call), SPARSETC_STATUS_SUCCESS) << #call << ": " << ::sparsetc_test::message_of(h)
#define ASSERT_OK(h, call) \
  ASSERT_EQ((call), SPARSETC_STATUS_SUCCESS) << #call << ": " << ::sparsetc_test::message_of(h)

}  // namespace sparsetc_test
