// providers/zstd_ctx.hpp — move-only owners of zstd's compression and decompression contexts.
//
// Contract: `ZstdDCtx` / `ZstdCCtx` create their context on construction (std::bad_alloc when
// zstd cannot allocate one) and free it exactly once. A context is reusable across frames and
// must be used by one thread at a time.
#pragma once

#include <zstd.h>

#include <memory>
#include <new>

namespace kcache::providers {

class ZstdDCtx {
 public:
  ZstdDCtx() : ctx_(ZSTD_createDCtx()) {
    if (!ctx_) throw std::bad_alloc();
  }
  ZSTD_DCtx* get() const noexcept { return ctx_.get(); }

 private:
  struct Free {
    void operator()(ZSTD_DCtx* c) const noexcept { ZSTD_freeDCtx(c); }
  };
  std::unique_ptr<ZSTD_DCtx, Free> ctx_;
};

class ZstdCCtx {
 public:
  ZstdCCtx() : ctx_(ZSTD_createCCtx()) {
    if (!ctx_) throw std::bad_alloc();
  }
  ZSTD_CCtx* get() const noexcept { return ctx_.get(); }

 private:
  struct Free {
    void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
  };
  std::unique_ptr<ZSTD_CCtx, Free> ctx_;
};

}  // namespace kcache::providers
