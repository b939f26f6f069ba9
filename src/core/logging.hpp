// The library's private logger. Silent unless SPARSETC_LOG_LEVEL (or sparsetc_set_log_level)
// turns it up; never touches the application's default spdlog logger.
#pragma once

#include <string>

#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail {

enum class LogLevel : int { trace = 0, debug = 1, info = 2, warn = 3, error = 4, critical = 5, off = 6 };

// Emits one line at a level; cheap when the level is disabled. Callers build messages with str().
void log(LogLevel level, const std::string& message);
bool log_enabled(LogLevel level);
void set_log_level(int level);
void set_log_callback(sparsetc_log_callback_t callback, void* user_data);
// Parses "3", "warn", "WARNING", ... into a level; returns false for anything else.
bool parse_log_level(const std::string& text, int* level);

}  // namespace sparsetc::detail

#define SPARSETC_LOG(level, ...)                                                       \
  do {                                                                                 \
    if (::sparsetc::detail::log_enabled(::sparsetc::detail::LogLevel::level))         \
      ::sparsetc::detail::log(::sparsetc::detail::LogLevel::level,                     \
                              ::sparsetc::detail::str(__VA_ARGS__));                   \
  } while (0)
