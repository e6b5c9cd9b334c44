// providers/site_packages.hpp — FlashInfer JIT-cache providers in Python environments, found
// as FlashInfer's shim finds them (entry points), without running any Python.
//
// Contract (docs/providers.md "FlashInfer provider wheels"; pure, any thread):
//  * `is_site_packages(dir)`: named `site-packages` or `dist-packages`, or holding a
//    `*.dist-info` directory. `is_python_environment(dir)`: a virtualenv (`pyvenv.cfg`) or a
//    conda environment (`conda-meta/`); `environment_site_packages` lists its
//    `lib*/python3*/{site,dist}-packages`.
//  * `parse_entry_points(text, group)` reads an `entry_points.txt` as importlib.metadata does
//    (INI sections, `name = module:attr [extras]`, `#`/`;` comment lines) and returns the
//    entries of `group`, in file order.
//  * `list_site_packages(dir)` returns one FoundProvider per entry point of group
//    `flashinfer.jit_cache.providers` in any `*.dist-info/entry_points.txt`: its path is the
//    package directory the entry point's module names (`a.b.c` → `dir/a/b/c`), `problem`
//    says why it cannot be one (a module path that is not dotted identifiers, an attribute
//    other than `get_provider`), and `installing` that its dist-info has no RECORD yet.
//    Nothing else in site-packages is looked at. Watch dirs: the directory, the dist-info of
//    every provider, and every dist-info without RECORD (an install under way, whose
//    entry_points.txt may appear next).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "providers/provider_load.hpp"

namespace kcache::providers {

inline constexpr std::string_view kFlashInferGroup = "flashinfer.jit_cache.providers";

struct EntryPoint {
  std::string name;
  std::string module;  // dotted
  std::string attr;    // after ':', extras removed; may be empty
};

std::vector<EntryPoint> parse_entry_points(std::string_view text, std::string_view group);

bool is_site_packages(const std::string& dir);
bool is_python_environment(const std::string& dir);
std::vector<std::string> environment_site_packages(const std::string& env);

struct SitePackagesListing {
  std::vector<FoundProvider> providers;
  std::vector<std::string> watch_dirs;
};

SitePackagesListing list_site_packages(const std::string& dir);

}  // namespace kcache::providers
