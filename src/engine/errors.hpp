// Errors inside the engine: one enum (mirrors the C codes), one std::error_category, one
// exception type. A failed Transfer rethrows at co_await; the C API is the one catch site.
#pragma once

#include <stdexcept>
#include <string>
#include <system_error>

namespace fabcoll {

enum class Errc {
  success = 0,
  invalid_argument = 1,
  invalid_datatype = 2,
  invalid_op = 3,
  invalid_root = 4,
  invalid_count = 5,
  truncation = 6,
  transport = 7,
  peer_failure = 8,
  timeout = 9,
  broken = 10,
  no_memory = 11,
  unsupported = 12,
  internal = 13,
};

const std::error_category& fabcoll_category() noexcept;
inline std::error_code make_error_code(Errc e) noexcept {
  return {static_cast<int>(e), fabcoll_category()};
}
const char* errc_name(Errc e) noexcept;

/// The exception the engine throws; what() is the detailed message alone (the code's name is
/// added by whoever prints it, e.g. fc_strerror).
class EngineError : public std::runtime_error {
 public:
  EngineError(Errc e, const std::string& msg) : std::runtime_error(msg), errc_(e) {}
  [[nodiscard]] Errc errc() const noexcept { return errc_; }
  [[nodiscard]] std::error_code code() const noexcept { return make_error_code(errc_); }

 private:
  Errc errc_;
};

[[noreturn]] void raise(Errc e, const std::string& msg);

}  // namespace fabcoll

template <>
struct std::is_error_code_enum<fabcoll::Errc> : std::true_type {};
