// common/dl_library.hpp — one pattern for optional libraries (STYLE 13).
//
// Contract: `DlLibrary::open_first(candidates)` dlopen()s the first loadable name and returns
// an owner that dlclose()s it; when none loads, Errc::unavailable with a message listing every
// name tried and dlerror() of the last. `symbol<F>(name)` resolves a function or returns
// Errc::unavailable naming the symbol and the library.
#pragma once

#include <span>
#include <string>
#include <utility>

#include "kcache/result.hpp"

namespace kcache {

class DlLibrary {
 public:
  DlLibrary() = default;
  ~DlLibrary();
  DlLibrary(DlLibrary&& o) noexcept
      : handle_(std::exchange(o.handle_, nullptr)), name_(std::move(o.name_)) {}
  DlLibrary& operator=(DlLibrary&& o) noexcept;
  DlLibrary(const DlLibrary&) = delete;
  DlLibrary& operator=(const DlLibrary&) = delete;

  // `what` names the library for messages ("NVRTC").
  static Result<DlLibrary> open_first(std::string_view what, std::span<const std::string> candidates);

  template <class F>
  Result<F> symbol(const char* name) const {
    KC_TRY_ASSIGN(void* p, raw_symbol(name));
    return reinterpret_cast<F>(p);
  }

  // The path the dynamic loader resolved (realpath of the loaded object).
  std::string resolved_path() const;
  const std::string& name() const noexcept { return name_; }

 private:
  Result<void*> raw_symbol(const char* name) const;
  void* handle_ = nullptr;
  std::string name_;
};

}  // namespace kcache
