// variant/variant_parse.cpp — parse_variant: the grammar of reference/variants.md.
//
//   legacy     torch<M><m>[-cxx11|-cxx98]-<lb>-<cpu>-<os>
//              torch-stable-abi<M><m>-<lb>-<cpu>-<os>     tvm-ffi<M><m>-<lb>-<cpu>-<os>
//              <lb> = cu<digits> | rocm<digits> | xpu<digits> | cann<digits>
//                   | cpu | metal | neuron | tpu          (last digit = minor; rocm714 = 7.14)
//   dotted     torch-<M>.<m>[-cxx11|-cxx98]-<b>[-<X>.<Y>]-<abi3|abi3t>-<cpu>-<os>
//              torch-stable-abi-<M>.<m>-<b>[-<X>.<Y>]-<abi>-<cpu>-<os>   (kcache's spelling)
//              tvm-ffi-<M>.<m>-<b>[-<X>.<Y>]-<abi>-<cpu>-<os>            (kcache's spelling)
//              <b> = a full backend name; versioned ones must carry -X.Y, others must not
//   noarch     torch-<b>          universal  torch-universal
#include <span>
#include <vector>

#include "arch/text_util.hpp"
#include "variant/variant.hpp"

namespace kcache {
namespace {

using Tokens = std::span<const std::string_view>;

class Parser {
 public:
  explicit Parser(std::string_view name) : name_(name) {}

  Error fail(const std::string& why) const {
    return make_error(Errc::invalid_argument,
                      "invalid build variant '" + std::string(name_) + "': " + why);
  }
  Error bad_part(std::string_view part, const std::string& why) const {
    return fail("'" + std::string(part) + "' " + why);
  }

  // "210" → 2.10: one-digit major, the rest is the minor (variants.md).
  Result<VersionMM> legacy_framework_version(std::string_view digits, std::string_view part) const {
    if (digits.size() < 2 || digits.size() > 3 || !all_digits(digits) ||
        (digits.size() == 3 && digits[1] == '0'))  // "torch201" would read as 2.1
      return bad_part(part, "is not a framework version (expected <major digit><minor>, e.g. 210)");
    return VersionMM{digits[0] - '0', *parse_small_uint(digits.substr(1))};
  }

  // "2.10", "12.8", "2025.2": digit runs without leading zeros on each side of one dot.
  Result<VersionMM> dotted_version(std::string_view text, std::string_view what) const {
    const auto version = parse_version_mm(text);
    if (!version)
      return bad_part(text, "is not a " + std::string(what) + " version (expected X.Y)");
    return *version;
  }

  Status legacy_backend(std::string_view part, Variant* v) const {
    for (std::string_view plain : {"cpu", "metal", "neuron", "tpu"}) {
      if (part == plain) {
        v->backend = *parse_variant_backend(plain);
        return {};
      }
    }
    if (part == "rocm714") {  // the one two-digit minor ever built in the legacy form
      v->backend = VariantBackend::rocm;
      v->backend_version = VersionMM{7, 14};
      return {};
    }
    struct Prefix {
      std::string_view text;
      VariantBackend backend;
    };
    for (const Prefix& p :
         {Prefix{"cu", VariantBackend::cuda}, Prefix{"rocm", VariantBackend::rocm},
          Prefix{"xpu", VariantBackend::xpu}, Prefix{"cann", VariantBackend::cann}}) {
      if (!part.starts_with(p.text)) continue;
      const std::string_view digits = part.substr(p.text.size());
      if (digits.size() < 2 || !all_digits(digits) || digits[0] == '0') break;
      v->backend = p.backend;
      v->backend_version =
          VersionMM{*parse_small_uint(digits.substr(0, digits.size() - 1)), digits.back() - '0'};
      return {};
    }
    return bad_part(part,
                    "is not a backend (legacy names use cu128, rocm63, xpu20252, cann81, "
                    "cpu, metal, neuron or tpu)");
  }

  Status cxx_tag(std::string_view part, Variant* v) const {
    if (part == "cxx11")
      v->cxx = CxxAbi::cxx11;
    else if (part == "cxx98")
      v->cxx = CxxAbi::cxx98;
    else
      return bad_part(part, "is not a C++ ABI tag (cxx11 or cxx98)");
    return {};
  }

  // The trailing "<cpu>-<os>" shared by every arch form.
  Status cpu_os(Tokens rest, Variant* v) const {
    if (rest.empty()) return fail("missing cpu and os after the backend");
    if (rest.size() == 1) return fail("missing os after cpu '" + std::string(rest[0]) + "'");
    if (rest.size() > 2) return bad_part(rest[2], "is unexpected after the os");
    for (std::string_view p : rest) {
      if (p.empty()) return fail("empty cpu or os part");
      for (char c : p)
        if (!is_ascii_lower(c) && !is_ascii_digit(c) && c != '_')
          return bad_part(p, "is not a cpu or os name");
    }
    v->cpu = std::string(rest[0]);
    v->os = std::string(rest[1]);
    return {};
  }

  // After "torch<NN>" / "torch-stable-abi<NN>" / "tvm-ffi<NN>".
  Status legacy_tail(Tokens t, bool allow_cxx, Variant* v) const {
    std::size_t i = 0;
    if (i < t.size() && t[i].starts_with("cxx")) {
      if (!allow_cxx)
        return bad_part(t[i], "is not allowed here (only Torch arch builds carry a C++ ABI tag)");
      KC_TRY(cxx_tag(t[i++], v));
    }
    if (i == t.size()) return fail("missing backend");
    KC_TRY(legacy_backend(t[i++], v));
    v->python_abi = PythonAbi::abi3;  // legacy arch names are abi3 by definition
    return cpu_os(t.subspan(i), v);
  }

  // After "torch-" / "torch-stable-abi-" / "tvm-ffi-": "<M>.<m>[-cxx]-<b>[-X.Y]-<abi>-<cpu>-<os>".
  Status dotted_tail(Tokens t, bool allow_cxx, Variant* v) const {
    KC_TRY_ASSIGN(v->framework_version, dotted_version(t[0], "framework"));
    std::size_t i = 1;
    if (i < t.size() && t[i].starts_with("cxx")) {
      if (!allow_cxx)
        return bad_part(t[i], "is not allowed here (only Torch arch builds carry a C++ ABI tag)");
      KC_TRY(cxx_tag(t[i++], v));
    }
    if (i == t.size()) return fail("missing backend");
    const auto backend = parse_variant_backend(t[i]);
    if (!backend)
      return bad_part(t[i],
                      "is not a backend (dotted names use cuda, rocm, xpu, cann, cpu, "
                      "metal, neuron or tpu)");
    v->backend = *backend;
    const std::string_view backend_part = t[i++];
    const bool has_version = i < t.size() && t[i].find('.') != std::string_view::npos;
    if (backend_is_versioned(*backend)) {
      if (!has_version)
        return bad_part(backend_part,
                        "needs a version (e.g. " + std::string(backend_part) + "-12.8)");
      KC_TRY_ASSIGN(v->backend_version, dotted_version(t[i++], backend_part));
    } else if (has_version) {
      return bad_part(t[i],
                      "is a version, but backend '" + std::string(backend_part) + "' takes none");
    }
    if (i == t.size()) return fail("missing Python ABI (abi3 or abi3t)");
    if (t[i] == "abi3")
      v->python_abi = PythonAbi::abi3;
    else if (t[i] == "abi3t")
      v->python_abi = PythonAbi::abi3t;
    else
      return bad_part(t[i], "is not a Python ABI (abi3 or abi3t)");
    return cpu_os(t.subspan(i + 1), v);
  }

  Result<Variant> noarch(std::string_view backend_part) const {
    if (backend_part == "universal") return Variant{};
    if (backend_part == "npu") return fail("'torch-npu' was renamed 'torch-cann'; use torch-cann");
    const auto backend = parse_variant_backend(backend_part);
    if (!backend) return bad_part(backend_part, "is not a noarch backend");
    Variant v;
    v.kind = VariantKind::noarch;
    v.backend = *backend;
    return v;
  }

  Result<Variant> parse() const {
    if (name_.empty()) return fail("empty name");
    const std::vector<std::string_view> t = split(name_, '-');
    const Tokens all(t);
    Variant v;
    if (t[0] == "torch" && t.size() >= 2 && t[1] == "stable" && t.size() >= 3 &&
        t[2].starts_with("abi")) {
      v.kind = VariantKind::stable_abi;
      if (t[2] == "abi") {  // dotted: torch-stable-abi-2.11-…
        if (t.size() < 4) return fail("missing stable ABI version");
        KC_TRY(dotted_tail(all.subspan(3), false, &v));
      } else {
        KC_TRY_ASSIGN(v.framework_version, legacy_framework_version(t[2].substr(3), t[2]));
        KC_TRY(legacy_tail(all.subspan(3), false, &v));
      }
      return v;
    }
    if (t[0] == "tvm" && t.size() >= 2 && t[1].starts_with("ffi")) {
      v.kind = VariantKind::tvm_ffi;
      if (t[1] == "ffi") {  // dotted: tvm-ffi-0.1-…
        if (t.size() < 3) return fail("missing tvm-ffi version");
        KC_TRY(dotted_tail(all.subspan(2), false, &v));
      } else {
        KC_TRY_ASSIGN(v.framework_version, legacy_framework_version(t[1].substr(3), t[1]));
        KC_TRY(legacy_tail(all.subspan(2), false, &v));
      }
      return v;
    }
    if (t[0] == "torch") {
      if (t.size() < 2 || t[1].empty()) return fail("missing version or backend after 'torch-'");
      if (is_ascii_digit(t[1][0])) {
        v.kind = VariantKind::torch;
        KC_TRY(dotted_tail(all.subspan(1), true, &v));
        return v;
      }
      if (t.size() > 2)
        return bad_part(t[2], "is unexpected after noarch 'torch-" + std::string(t[1]) + "'");
      return noarch(t[1]);
    }
    if (t[0].starts_with("torch") && t[0].size() > 5 && is_ascii_digit(t[0][5])) {
      v.kind = VariantKind::torch;
      KC_TRY_ASSIGN(v.framework_version, legacy_framework_version(t[0].substr(5), t[0]));
      KC_TRY(legacy_tail(all.subspan(1), true, &v));
      return v;
    }
    return bad_part(t[0], "is not a known framework (torch, torch-stable-abi or tvm-ffi)");
  }

 private:
  std::string_view name_;
};

}  // namespace

Result<Variant> parse_variant(std::string_view name) {
  return Parser(name).parse();
}

}  // namespace kcache
