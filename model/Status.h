// Status and Result: how every layer reports an ErrorStatus with a message naming the rule.
#pragma once

#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "model/Types.h"

namespace nncosim {

/// An ErrorStatus with a human-readable message. NONE means success.
struct Status {
    ErrorStatus code = ErrorStatus::NONE;
    std::string message;

    bool ok() const { return code == ErrorStatus::NONE; }
    explicit operator bool() const { return ok(); }
};

inline Status okStatus() {
    return {};
}

/// Builds a failure message from streamable parts: fail(INVALID_ARGUMENT, "operand ", i, " ...").
template <typename... Parts>
Status fail(ErrorStatus code, const Parts&... parts) {
    std::ostringstream out;
    (out << ... << parts);
    return {code, out.str()};
}
template <typename... Parts>
Status invalidArgument(const Parts&... parts) {
    return fail(ErrorStatus::INVALID_ARGUMENT, parts...);
}

/// A value or the Status explaining why there is none.
template <typename T>
class Result {
  public:
    Result(T value) : mValue(std::move(value)) {}          // NOLINT: implicit by design
    Result(Status status) : mStatus(std::move(status)) {}  // NOLINT
    bool ok() const { return mValue.has_value(); }
    explicit operator bool() const { return ok(); }
    const Status& status() const { return mStatus; }
    T& value() { return *mValue; }
    const T& value() const { return *mValue; }
    T* operator->() { return &*mValue; }
    const T* operator->() const { return &*mValue; }
    T& operator*() { return *mValue; }
    const T& operator*() const { return *mValue; }

  private:
    std::optional<T> mValue;
    Status mStatus;
};

/// Returns from the enclosing function when a Status-returning expression fails.
#define NN_RETURN_IF_ERROR(expr)        \
    do {                                \
        ::nncosim::Status _st = (expr); \
        if (!_st.ok()) return _st;      \
    } while (0)

}  // namespace nncosim
