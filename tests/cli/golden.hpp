// golden.hpp — the one assertion of the CLI golden tests: exact stdout, exit code and
// (when given) exact stderr of one kcachectl run, with the command line in the message.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace kcache::cli_test {

inline std::string command_line(const std::vector<std::string>& args) {
  std::string out = "kcachectl";
  for (const std::string& a : args) out += " '" + a + "'";
  return out;
}

inline void expect_golden(const std::vector<std::string>& args, const std::string& out,
                          int exit_code, const std::optional<std::string>& err = std::nullopt) {
  const CliResult r = kcachectl(args);
  EXPECT_EQ(r.out, out) << command_line(args) << "\nstderr: " << r.err;
  EXPECT_EQ(r.exit_code, exit_code) << command_line(args) << "\nstderr: " << r.err;
  if (err) {
    EXPECT_EQ(r.err, *err) << command_line(args);
  }
}

}  // namespace kcache::cli_test
