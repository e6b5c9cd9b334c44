// kc-sandbox-exec — runs a program under the seccomp filters systemd would install for
// kcached.service, so the unit's SystemCallFilter=, MemoryDenyWriteExecute= and
// RestrictAddressFamilies= can be tested on a machine where systemd is not PID 1.
//
//   kc-sandbox-exec [--syscalls FILE] [--deny-write-execute] [--only-af-unix] [--enosys NAME]…
//                   -- PROGRAM ARGS…
//
// --syscalls FILE       allow only the system calls named in FILE (one per line, already
//                       expanded from systemd's @groups); any other call kills the process
//                       (SIGSYS), which is stricter than the unit's SystemCallErrorNumber=EPERM.
// --deny-write-execute  systemd's MemoryDenyWriteExecute=yes: mmap with PROT_WRITE|PROT_EXEC,
//                       mprotect/pkey_mprotect adding PROT_EXEC and shmat with SHM_EXEC fail
//                       with EPERM.
// --only-af-unix        RestrictAddressFamilies=AF_UNIX: socket() of any other family fails
//                       with EAFNOSUPPORT.
// --enosys NAME         the system call NAME fails with ENOSYS, as on a kernel without it
//                       (repeatable; e.g. landlock_create_ruleset, seccomp: degradation tests).
// no_new_privs is always set (systemd implies it for filters in units with User=).
// libseccomp is dlopen'ed (libseccomp.so.2 is part of every systemd system; no -dev package).
#include <errno.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/dl_library.hpp"

namespace {

// libseccomp's stable ABI (seccomp.h, libseccomp 2.x).
constexpr std::uint32_t kActKillProcess = 0x80000000U;
constexpr std::uint32_t kActAllow = 0x7fff0000U;
constexpr std::uint32_t act_errno(int e) { return 0x00050000U | (static_cast<std::uint32_t>(e) & 0xffffU); }
enum ScmpCompare { kCmpNe = 1, kCmpMaskedEq = 7 };
struct ScmpArgCmp {
  unsigned int arg;
  int op;
  std::uint64_t datum_a;
  std::uint64_t datum_b;
};
using Ctx = void*;

struct Seccomp {
  kcache::DlLibrary lib;
  Ctx (*init)(std::uint32_t) = nullptr;
  int (*rule_add_array)(Ctx, std::uint32_t, int, unsigned, const ScmpArgCmp*) = nullptr;
  int (*resolve_name)(const char*) = nullptr;
  int (*load)(Ctx) = nullptr;
  void (*release)(Ctx) = nullptr;
};

int die(const std::string& what) {
  std::fprintf(stderr, "kc-sandbox-exec: %s\n", what.c_str());
  return 127;
}

int add(const Seccomp& s, Ctx ctx, std::uint32_t action, const char* name,
        std::vector<ScmpArgCmp> args = {}) {
  const int nr = s.resolve_name(name);
  if (nr < 0) return 0;  // not a call of this architecture (systemd skips these too)
  return s.rule_add_array(ctx, action, nr, static_cast<unsigned>(args.size()),
                          args.empty() ? nullptr : args.data());
}

}  // namespace

int main(int argc, char** argv) {
  std::string syscalls_file;
  bool deny_wx = false;
  bool only_unix = false;
  std::vector<std::string> enosys;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--syscalls" && i + 1 < argc) syscalls_file = argv[++i];
    else if (a == "--deny-write-execute") deny_wx = true;
    else if (a == "--only-af-unix") only_unix = true;
    else if (a == "--enosys" && i + 1 < argc) enosys.emplace_back(argv[++i]);
    else return die("unknown option " + a);
  }
  if (i >= argc) return die("no program given");

  Seccomp s;
  const std::string names[] = {"libseccomp.so.2"};
  auto lib = kcache::DlLibrary::open_first("libseccomp", names);
  if (!lib.ok()) return die(lib.error().message);
  s.lib = std::move(*lib);
  auto init = s.lib.symbol<decltype(s.init)>("seccomp_init");
  auto rule = s.lib.symbol<decltype(s.rule_add_array)>("seccomp_rule_add_array");
  auto resolve = s.lib.symbol<decltype(s.resolve_name)>("seccomp_syscall_resolve_name");
  auto load = s.lib.symbol<decltype(s.load)>("seccomp_load");
  auto release = s.lib.symbol<decltype(s.release)>("seccomp_release");
  if (!init.ok() || !rule.ok() || !resolve.ok() || !load.ok() || !release.ok())
    return die("libseccomp.so.2 lacks a symbol");
  s.init = *init;
  s.rule_add_array = *rule;
  s.resolve_name = *resolve;
  s.load = *load;
  s.release = *release;

  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return die("PR_SET_NO_NEW_PRIVS failed");

  // Filters stack: the kernel applies the strictest verdict of all of them.
  if (deny_wx) {
    Ctx ctx = s.init(kActAllow);
    const std::uint64_t wx = PROT_WRITE | PROT_EXEC;
    int rc = add(s, ctx, act_errno(EPERM), "mmap", {{2, kCmpMaskedEq, wx, wx}});
    rc |= add(s, ctx, act_errno(EPERM), "mprotect", {{2, kCmpMaskedEq, PROT_EXEC, PROT_EXEC}});
    rc |= add(s, ctx, act_errno(EPERM), "pkey_mprotect", {{2, kCmpMaskedEq, PROT_EXEC, PROT_EXEC}});
    rc |= add(s, ctx, act_errno(EPERM), "shmat", {{2, kCmpMaskedEq, SHM_EXEC, SHM_EXEC}});
    if (rc != 0 || s.load(ctx) != 0) return die("cannot load the write-execute filter");
    s.release(ctx);
  }
  if (only_unix) {
    Ctx ctx = s.init(kActAllow);
    if (add(s, ctx, act_errno(EAFNOSUPPORT), "socket", {{0, kCmpNe, AF_UNIX, 0}}) != 0 ||
        s.load(ctx) != 0)
      return die("cannot load the address family filter");
    s.release(ctx);
  }
  if (!syscalls_file.empty()) {
    std::ifstream in(syscalls_file);
    if (!in) return die("cannot read " + syscalls_file);
    Ctx ctx = s.init(kActKillProcess);
    std::string name;
    std::size_t allowed = 0;
    while (std::getline(in, name)) {
      if (name.empty()) continue;
      if (add(s, ctx, kActAllow, name.c_str()) == 0) ++allowed;
    }
    if (allowed == 0 || s.load(ctx) != 0) return die("cannot load the system call filter");
    s.release(ctx);
  }
  // Last: loading a filter after it would need the seccomp call it may refuse.
  if (!enosys.empty()) {
    Ctx ctx = s.init(kActAllow);
    int rc = 0;
    for (const auto& name : enosys) rc |= add(s, ctx, act_errno(ENOSYS), name.c_str(), {});
    if (rc != 0 || s.load(ctx) != 0) return die("cannot load the ENOSYS filter");
    s.release(ctx);
  }
  ::execvp(argv[i], argv + i);
  return die(std::string("cannot run ") + argv[i] + ": " + std::strerror(errno));
}
