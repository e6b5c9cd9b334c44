#include "compiler/kernel_confinement.hpp"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "common/fd.hpp"

namespace kcache::daemon {

namespace {

// Debian bookworm's headers are Linux 6.1's (Landlock ABI 2); later ABIs' values are the
// kernel's stable UAPI (include/uapi/linux/landlock.h), used when the kernel reports them.
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
constexpr std::uint64_t kNetBindTcp = 1ULL << 0;
constexpr std::uint64_t kNetConnectTcp = 1ULL << 1;
constexpr std::uint64_t kScopeAbstractUnixSocket = 1ULL << 0;
constexpr std::uint64_t kScopeSignal = 1ULL << 1;

// struct landlock_ruleset_attr as of ABI 6; the size passed says which fields the kernel reads.
struct RulesetAttr {
  std::uint64_t handled_access_fs = 0;
  std::uint64_t handled_access_net = 0;  // ABI 4
  std::uint64_t scoped = 0;              // ABI 6
};

// The access rights each ABI version knows (Documentation/userspace-api/landlock.rst).
std::uint64_t fs_rights(int abi) {
  std::uint64_t r = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
                    LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
                    LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
                    LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                    LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (abi >= 2) r |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) r |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5) r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return r;
}

// The rights that apply to a file (not a directory) among `rights`.
std::uint64_t file_rights(std::uint64_t rights) {
  const std::uint64_t file = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                       LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                       LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return rights & file;
}

Status allow_beneath(int ruleset, const std::string& path, std::uint64_t rights) {
  Fd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
  if (!fd) {
    // Nothing there to allow, or nothing this user could read there anyway.
    if (errno == ENOENT || errno == ENOTDIR || errno == EACCES) return {};
    return errno_error(Errc::io, "landlock: " + path);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_error(Errc::io, "landlock: stat " + path);
  landlock_path_beneath_attr attr{};
  attr.allowed_access = S_ISDIR(st.st_mode) ? rights : file_rights(rights);
  attr.parent_fd = fd.get();
  if (attr.allowed_access == 0) return {};
  if (::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) != 0)
    return errno_error(Errc::io, "landlock: allow " + path);
  return {};
}

}  // namespace

int landlock_abi(std::string* why) noexcept {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi > 0) return static_cast<int>(abi);
  if (why != nullptr) {
    const int err = errno;
    *why = err == ENOSYS       ? "the kernel has no Landlock (before 5.13, or built without it)"
           : err == EOPNOTSUPP ? "Landlock is disabled (the lsm= boot parameter lacks it)"
                               : std::string("landlock_create_ruleset: ") + std::strerror(err);
  }
  return 0;
}

Status apply_landlock(int abi, const LandlockRules& rules) {
  const std::uint64_t all = fs_rights(abi);
  RulesetAttr attr;
  attr.handled_access_fs = all;
  std::size_t attr_size = sizeof attr.handled_access_fs;
  if (abi >= 4) {  // no rule allows any port: no TCP at all
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    attr_size += sizeof attr.handled_access_net;
  }
  if (abi >= 6) {  // no signal or abstract socket reaches past this process
    attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
    attr_size += sizeof attr.scoped;
  }
  Fd ruleset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0)));
  if (!ruleset) return errno_error(Errc::io, "landlock_create_ruleset");
  const std::uint64_t read = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
  for (const auto& p : rules.read) KC_TRY(allow_beneath(ruleset.get(), p, read));
  for (const auto& p : rules.read_write)
    KC_TRY(allow_beneath(ruleset.get(), p, read | LANDLOCK_ACCESS_FS_WRITE_FILE));
  for (const auto& p : rules.write)
    KC_TRY(allow_beneath(ruleset.get(), p, all & ~LANDLOCK_ACCESS_FS_EXECUTE));
  if (::syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0)
    return errno_error(Errc::io, "landlock_restrict_self");
  return {};
}

Status apply_seccomp(pid_t self) {
  const std::unique_ptr<void, void (*)(scmp_filter_ctx)> ctx(seccomp_init(SCMP_ACT_ALLOW), seccomp_release);
  if (!ctx) return make_error(Errc::io, "seccomp_init failed");
  const std::uint32_t deny = SCMP_ACT_ERRNO(EPERM);
  static constexpr const char* kDenied[] = {
      "execve", "execveat", "socket", "socketpair", "connect", "bind", "listen", "accept",
      "accept4", "ptrace", "process_vm_readv", "process_vm_writev", "tkill", "pidfd_open",
      "pidfd_getfd", "pidfd_send_signal", "mount", "umount2", "pivot_root", "chroot",
      "unshare", "setns", "bpf", "perf_event_open", "keyctl", "add_key", "request_key",
      "io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd",
      "open_by_handle_at", "name_to_handle_at", "kexec_load", "kexec_file_load",
      "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff", "acct",
      "quotactl", "fanotify_init", "move_mount", "fsopen", "fsmount", "open_tree"};
  for (const char* name : kDenied) {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
    if (const int rc = seccomp_rule_add(ctx.get(), deny, nr, 0); rc != 0)
      return make_error(Errc::io, std::string("seccomp: deny ") + name + ": " + std::strerror(-rc));
  }
  // Signals only to this process: kill(0, …) and kill(-1, …) would reach the daemon.
  const auto self_only = [&](const char* name) -> Status {
    const int nr = seccomp_syscall_resolve_name(name);
    const int rc = seccomp_rule_add(ctx.get(), deny, nr, 1,
                                    SCMP_A0(SCMP_CMP_NE, static_cast<scmp_datum_t>(self)));
    if (rc != 0) return make_error(Errc::io, std::string("seccomp: ") + name + ": " + std::strerror(-rc));
    return {};
  };
  for (const char* name : {"kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"})
    KC_TRY(self_only(name));
  // New namespaces: clone's flags are an argument; clone3's are behind a pointer, so it is
  // answered ENOSYS and glibc falls back to clone (threads still start).
  for (const scmp_datum_t flag : {scmp_datum_t{CLONE_NEWNS}, scmp_datum_t{CLONE_NEWUSER},
                                  scmp_datum_t{CLONE_NEWNET}, scmp_datum_t{CLONE_NEWPID},
                                  scmp_datum_t{CLONE_NEWIPC}, scmp_datum_t{CLONE_NEWUTS},
                                  scmp_datum_t{CLONE_NEWCGROUP}}) {
    if (const int rc = seccomp_rule_add(ctx.get(), deny, SCMP_SYS(clone), 1,
                                        SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
        rc != 0)
      return make_error(Errc::io, std::string("seccomp: clone: ") + std::strerror(-rc));
  }
  if (const int nr = seccomp_syscall_resolve_name("clone3"); nr != __NR_SCMP_ERROR)
    if (const int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), nr, 0); rc != 0)
      return make_error(Errc::io, std::string("seccomp: clone3: ") + std::strerror(-rc));
  if (const int rc = seccomp_load(ctx.get()); rc != 0)
    return make_error(Errc::io, std::string("seccomp_load: ") + std::strerror(-rc));
  return {};
}

}  // namespace kcache::daemon
