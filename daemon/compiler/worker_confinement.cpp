#include "compiler/worker_confinement.hpp"

#include <grp.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "common/fd.hpp"
#include "compiler/kernel_confinement.hpp"

namespace kcache::daemon {

namespace {

// Where toolkits and runtime libraries live on Debian and the vendors' installs; /usr holds
// /usr/local/cuda. Missing ones are skipped when the rules are made.
constexpr const char* kSystemReadRoots[] = {
    "/usr", "/lib", "/lib64", "/lib32", "/libx32", "/opt/rocm", "/etc/ld.so.cache",
    "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime",
    "/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/sys/devices/system/cpu",
    "/dev/zero", "/dev/urandom", "/dev/random"};

std::string parent_dir(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? std::string() : path.substr(0, slash);
}

// Compiler libraries an operator or a test named in the environment, and the loader's path.
void add_environment_roots(std::vector<std::string>& roots) {
  for (const char* var : {"KCACHE_NVRTC_LIBRARY", "KCACHE_HIPRTC_LIBRARY", "KCACHE_FAKE_NVRTC_REAL"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v == '/') {
      std::string dir = parent_dir(v);
      if (!dir.empty()) roots.push_back(std::move(dir));
    }
  }
  if (const char* path = std::getenv("LD_LIBRARY_PATH"); path != nullptr) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (!dir.empty() && dir.front() == '/') roots.push_back(dir);
  }
}

Result<RunAs> resolve_user(const std::string& user, uid_t cache_owner) {
  const passwd* pw = ::getpwnam(user.c_str());
  if (pw == nullptr)
    return make_error(Errc::invalid_argument,
                      "compile.user '" + user + "' does not exist: kcached runs as root and its " +
                          "compile workers must run as an unprivileged user (create it, or name one)");
  if (pw->pw_uid == 0 || pw->pw_uid == cache_owner)
    return make_error(Errc::invalid_argument,
                      "compile.user '" + user + "' is " + (pw->pw_uid == 0 ? "root" : "the cache's owner") +
                          ": compile workers must not be able to change the cache");
  return RunAs{pw->pw_uid, pw->pw_gid, user};
}

Status become(const RunAs& who) {
  if (::setgroups(0, nullptr) != 0) return errno_error(Errc::internal, "setgroups");
  if (::setresgid(who.gid, who.gid, who.gid) != 0) return errno_error(Errc::internal, "setresgid");
  if (::setresuid(who.uid, who.uid, who.uid) != 0) return errno_error(Errc::internal, "setresuid");
  uid_t r = 0, e = 0, s = 0;
  if (::getresuid(&r, &e, &s) != 0 || r != who.uid || e != who.uid || s != who.uid)
    return make_error(Errc::internal, "the worker is still not " + who.name + " after setresuid");
  return {};
}

// The working directory: a directory made in scratch and removed at once, so a quoted include
// that names no request header finds nothing (compile/include_rules.hpp).
Status enter_empty_directory(const std::string& scratch) {
  std::string dir = scratch + "/cwd-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) return errno_error(Errc::internal, "mkdtemp " + dir);
  const bool entered = ::chdir(dir.c_str()) == 0;
  const int err = errno;
  ::rmdir(dir.c_str());
  if (!entered) return errno_error(Errc::internal, "chdir " + dir, err);
  return {};
}

// Whether this kernel lets this process install a filter; empty when it does.
std::string seccomp_missing() {
  std::uint32_t action = SECCOMP_RET_ERRNO;
  if (::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0) return {};
  return std::string("seccomp: ") + std::strerror(errno);
}

}  // namespace

Result<ConfinementPlan> plan_confinement(const std::string& user, uid_t cache_owner,
                                         const std::vector<std::string>& include_roots) {
  ConfinementPlan plan;
  plan.read_roots.assign(std::begin(kSystemReadRoots), std::end(kSystemReadRoots));
  add_environment_roots(plan.read_roots);
  plan.read_roots.insert(plan.read_roots.end(), include_roots.begin(), include_roots.end());
  if (::geteuid() == 0) {
    KC_TRY_ASSIGN(plan.run_as, resolve_user(user, cache_owner));
  }
  return plan;
}

std::vector<std::string> to_args(const ConfinementPlan& plan) {
  std::vector<std::string> args{"--scratch", plan.scratch};
  for (const auto& r : plan.read_roots) args.insert(args.end(), {"--read-root", r});
  for (const auto& b : plan.preload) args.insert(args.end(), {"--preload", b});
  if (plan.run_as)
    args.insert(args.end(), {"--run-as", std::to_string(plan.run_as->uid) + ":" +
                                              std::to_string(plan.run_as->gid) + ":" + plan.run_as->name});
  return args;
}

nlohmann::json ConfinementSupport::to_json() const {
  return {{"user", run_as ? nlohmann::json(run_as->name) : nlohmann::json(nullptr)},
          {"landlock_abi", landlock_abi},
          {"landlock_missing", landlock_abi > 0 ? nlohmann::json(nullptr) : nlohmann::json(landlock_missing)},
          {"seccomp", seccomp},
          {"scratch", scratch_parent},
          {"seccomp_missing", seccomp ? nlohmann::json(nullptr) : nlohmann::json(seccomp_missing)}};
}

ConfinementSupport probe_confinement(const ConfinementPlan& plan) {
  ConfinementSupport s;
  s.run_as = plan.run_as;
  s.landlock_abi = landlock_abi(&s.landlock_missing);
  s.seccomp_missing = seccomp_missing();
  s.seccomp = s.seccomp_missing.empty();
  return s;
}

Result<std::vector<std::string>> confine_worker(const ConfinementPlan& plan) {
  std::vector<std::string> notes;
  if (plan.run_as) KC_TRY(become(*plan.run_as));
  if (plan.scratch.empty() || plan.scratch.front() != '/')
    return make_error(Errc::internal, "the worker was given no scratch directory");
  if (::setenv("TMPDIR", plan.scratch.c_str(), 1) != 0) return errno_error(Errc::internal, "setenv TMPDIR");
  KC_TRY(enter_empty_directory(plan.scratch));
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno_error(Errc::internal, "PR_SET_NO_NEW_PRIVS");
  std::string why;
  if (const int abi = landlock_abi(&why); abi > 0) {
    LandlockRules rules;
    rules.read = plan.read_roots;
    rules.write = {plan.scratch};
    rules.read_write = {"/dev/null"};
    KC_TRY(apply_landlock(abi, rules));
  } else {
    notes.push_back("Landlock unavailable (" + why + "): file access is not confined");
  }
  if (const std::string missing = seccomp_missing(); missing.empty()) {
    KC_TRY(apply_seccomp(::getpid()));
  } else {
    notes.push_back("system call filter unavailable (" + missing + "): exec and sockets are not refused");
  }
  return notes;
}

}  // namespace kcache::daemon
