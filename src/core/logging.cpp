#include "core/logging.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "core/error.hpp"

namespace sparsetc::detail {
namespace {

// Forwards formatted lines to a user callback (language bindings route them to their own logs).
class CallbackSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  CallbackSink(sparsetc_log_callback_t callback, void* user_data) : callback_(callback), user_data_(user_data) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    std::string line(formatted.data(), formatted.size());
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    callback_(user_data_, int32_t(msg.level), line.c_str());
  }
  void flush_() override {}

 private:
  sparsetc_log_callback_t callback_;
  void* user_data_;
};

std::shared_ptr<spdlog::logger> make_logger() {
  // Not registered in spdlog's global registry: the application's loggers stay untouched.
  auto logger = std::make_shared<spdlog::logger>("sparsetc", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_pattern("[sparsetc %L %H:%M:%S.%e] %v");
  int level = int(LogLevel::off);
  if (const char* env = std::getenv("SPARSETC_LOG_LEVEL")) {
    if (!parse_log_level(env, &level)) level = int(LogLevel::warn);
  }
  logger->set_level(spdlog::level::level_enum(level));
  return logger;
}

std::mutex& logger_mutex() {
  static std::mutex m;
  return m;
}

std::shared_ptr<spdlog::logger>& logger_slot() {
  static std::shared_ptr<spdlog::logger> logger = make_logger();
  return logger;
}

std::shared_ptr<spdlog::logger> current_logger() {
  std::lock_guard<std::mutex> lock(logger_mutex());
  return logger_slot();
}

}  // namespace

bool parse_log_level(const std::string& text, int* level) {
  std::string t;
  for (char c : text) t += char(std::tolower(static_cast<unsigned char>(c)));
  static const char* names[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  for (int i = 0; i < 7; ++i) {
    if (t == names[i]) {
      *level = i;
      return true;
    }
  }
  if (t == "warning") return *level = 3, true;
  if (t.size() == 1 && t[0] >= '0' && t[0] <= '6') return *level = t[0] - '0', true;
  return false;
}

bool log_enabled(LogLevel level) { return current_logger()->should_log(spdlog::level::level_enum(int(level))); }

void log(LogLevel level, const std::string& message) {
  current_logger()->log(spdlog::level::level_enum(int(level)), "{}", message);
}

void set_log_level(int level) {
  require(level >= 0 && level <= 6, SPARSETC_STATUS_INVALID_VALUE, "log level ", level, " is not in [0, 6]");
  current_logger()->set_level(spdlog::level::level_enum(level));
}

void set_log_callback(sparsetc_log_callback_t callback, void* user_data) {
  std::lock_guard<std::mutex> lock(logger_mutex());
  auto& logger = logger_slot();
  auto level = logger->level();
  spdlog::sink_ptr sink = callback ? spdlog::sink_ptr(std::make_shared<CallbackSink>(callback, user_data))
                                   : spdlog::sink_ptr(std::make_shared<spdlog::sinks::stderr_sink_mt>());
  auto replacement = std::make_shared<spdlog::logger>("sparsetc", sink);
  replacement->set_pattern(callback ? "%v" : "[sparsetc %L %H:%M:%S.%e] %v");
  replacement->set_level(level);
  logger = replacement;
}

}  // namespace sparsetc::detail
