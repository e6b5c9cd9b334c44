// cli_runner.hpp — runs the just-built kcachectl (KCACHECTL_PATH) for golden tests.
//
// Contract: `kcachectl(args)` runs the binary with `args` (no daemon, no shell), stdin from
// /dev/null, and returns its exit code (128 + signal when killed) with stdout and stderr
// captured separately and whole. `TempDir` is a private directory removed at scope exit.
#pragma once

#include <string>
#include <vector>

namespace kcache::cli_test {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CliResult kcachectl(const std::vector<std::string>& args);

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `bytes` to path()/name and returns the full path.
  std::string write(const std::string& name, const std::string& bytes) const;

 private:
  std::string path_;
};

}  // namespace kcache::cli_test
