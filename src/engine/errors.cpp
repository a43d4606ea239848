#include "engine/errors.hpp"

namespace fabcoll {
namespace {
class Category final : public std::error_category {
 public:
  [[nodiscard]] const char* name() const noexcept override { return "fabcoll"; }
  [[nodiscard]] std::string message(int ev) const override {
    return errc_name(static_cast<Errc>(ev));
  }
};
}  // namespace

const std::error_category& fabcoll_category() noexcept {
  static const Category category;
  return category;
}

const char* errc_name(Errc e) noexcept {
  switch (e) {
    case Errc::success: return "success";
    case Errc::invalid_argument: return "invalid argument";
    case Errc::invalid_datatype: return "invalid datatype";
    case Errc::invalid_op: return "invalid reduction operator";
    case Errc::invalid_root: return "invalid root";
    case Errc::invalid_count: return "invalid or mismatched count";
    case Errc::truncation: return "message truncated";
    case Errc::transport: return "transport error";
    case Errc::peer_failure: return "peer failure";
    case Errc::timeout: return "timed out";
    case Errc::broken: return "communicator is broken by an earlier error";
    case Errc::no_memory: return "out of memory";
    case Errc::unsupported: return "unsupported";
    case Errc::internal: return "internal error";
  }
  return "unknown error";
}

void raise(Errc e, const std::string& msg) { throw EngineError(e, msg); }

}  // namespace fabcoll
