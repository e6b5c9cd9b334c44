// kernel_confinement.hpp — the kernel's unprivileged confinement, applied to the calling
// process (a compile worker; worker_confinement.hpp decides what it may touch).
//
// Contract:
//  * landlock_abi(): the Landlock ABI version this kernel offers, or 0 with `why` set (no
//    Landlock, disabled at boot, or the syscall filtered).
//  * apply_landlock(abi, rules): from now on this process (and its children) may read only
//    beneath rules.read, read and write only beneath rules.write (and the files in
//    rules.read_write), make no TCP connection or bind (ABI 4+), and neither signal nor reach
//    abstract sockets outside itself (ABI 6+). A path that does not exist or this user cannot reach is skipped; any
//    other failure is an error and nothing is applied. Needs no_new_privs set first.
//  * apply_seccomp(self): a system call filter (libseccomp) refusing with EPERM what no compile
//    needs: execve, new sockets and connections, ptrace and other processes' memory, signals to
//    any process but `self`, namespaces, mounts, modules, keyrings, BPF, io_uring and
//    userfaultfd. Other architectures' calls kill the process. Needs no_new_privs set first.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "kcache/result.hpp"

namespace kcache::daemon {

struct LandlockRules {
  std::vector<std::string> read;        // directories or files: read (and map) only
  std::vector<std::string> write;       // directories: read, write, create, remove
  std::vector<std::string> read_write;  // files such as /dev/null: read and write
};

int landlock_abi(std::string* why = nullptr) noexcept;
Status apply_landlock(int abi, const LandlockRules& rules);
Status apply_seccomp(pid_t self);

}  // namespace kcache::daemon
