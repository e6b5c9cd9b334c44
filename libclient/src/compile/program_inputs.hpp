// compile/program_inputs.hpp — the C arrays NVRTC and hiprtc take, built from a CompileJob.
//
// Contract: the pointers stay valid while both the ProgramInputs and its job live. Options
// are the job's, in order, followed by `target_option` (the compiler's architecture flag).
// The program name is the module name with every character outside [A-Za-z0-9_.-] made '_'
// and no leading '.': never a path the compiler could search.
#pragma once

#include <string>
#include <vector>

#include "wire/messages.hpp"

namespace kcache {

class ProgramInputs {
 public:
  ProgramInputs(const wire::CompileJob& job, std::string target_option)
      : target_option_(std::move(target_option)) {
    for (const auto& h : job.headers) {
      header_names_.push_back(h.name.c_str());
      header_data_.push_back(h.data.c_str());
    }
    for (const auto& o : job.options) options_.push_back(o.c_str());
    options_.push_back(target_option_.c_str());
    name_ = program_name_for(job.name);
  }
  ProgramInputs(const ProgramInputs&) = delete;
  ProgramInputs& operator=(const ProgramInputs&) = delete;

  const char* program_name() const noexcept { return name_.c_str(); }
  int header_count() const noexcept { return static_cast<int>(header_names_.size()); }
  // Mutable pointers: hiprtc's prototypes take `const char**`.
  const char** header_names() noexcept { return header_names_.data(); }
  const char** header_data() noexcept { return header_data_.data(); }
  int option_count() const noexcept { return static_cast<int>(options_.size()); }
  const char** options() noexcept { return options_.data(); }

 private:
  // The compilers search the directory of the program's name for quoted includes: the name
  // (the request's, so the caller's) is made a plain file name, never a path.
  static std::string program_name_for(const std::string& module) {
    std::string name = module.empty() ? "module" : module;
    for (char& c : name)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
            c == '-' || c == '.'))
        c = '_';
    if (name.front() == '.') name.front() = '_';
    return name;
  }

  std::string target_option_;
  std::string name_;
  std::vector<const char*> header_names_;
  std::vector<const char*> header_data_;
  std::vector<const char*> options_;
};

}  // namespace kcache
