// worker_confinement.hpp — what a compile worker may touch (DESIGN §9; docs/reliability.md,
// "Confined compile workers"). The daemon plans, the worker applies before its first job.
//
// Contract:
//  * plan_confinement(config facts) → the plan the daemon hands every worker: a private
//    scratch directory (its only writable place and its TMPDIR), the directories it may read
//    (the toolkits' and runtime libraries — /usr, /lib*, /opt/rocm, the directories of
//    compiler libraries named in the environment —, the include roots, the dynamic loader's
//    configuration, /proc/self and the CPU facts) and, when the daemon runs as root, the
//    unprivileged user to become (never root, never the cache's owner: refused otherwise).
//    `preload` names the backends the daemon found: their libraries are loaded with the
//    daemon's rights before the worker confines itself (a library only the daemon's user can
//    read still loads; NVRTC's own later loads come from its toolkit directory).
//  * to_args() and the worker's internal options carry the plan to its command line.
//  * confine_worker(plan) runs in the worker: the user first (setgroups, setresgid,
//    setresuid — any failure is an error: a worker that should not be root never runs as
//    root), then PR_SET_NO_NEW_PRIVS, Landlock (the plan's paths; ABI features as offered),
//    seccomp (kernel_confinement.hpp). A mechanism the kernel lacks degrades: it is skipped and
//    named in the returned notes; one that exists and fails is an error (the worker exits).
//  * probe_confinement() in the daemon says, once, what workers will get (status
//    `compile_confinement`, and a warning at start-up for each mechanism missing).
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kcache/result.hpp"

namespace kcache::daemon {

struct RunAs {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string name;
};

struct ConfinementPlan {
  std::string scratch;                  // per worker; set by the pool at spawn
  std::vector<std::string> read_roots;  // beneath these: read only
  std::optional<RunAs> run_as;          // the daemon is root: become this user
  std::vector<std::string> preload;     // backends whose compiler is loaded before confining
};

// `user`: the configured compile user (compile.user); used only when the daemon is root.
// `cache_owner`: the uid owning the cache directory, which a worker must never be.
Result<ConfinementPlan> plan_confinement(const std::string& user, uid_t cache_owner,
                                         const std::vector<std::string>& include_roots);
std::vector<std::string> to_args(const ConfinementPlan& plan);

struct ConfinementSupport {
  std::optional<RunAs> run_as;
  int landlock_abi = 0;
  std::string landlock_missing;  // why not, when landlock_abi == 0
  bool seccomp = false;
  std::string seccomp_missing;
  std::string scratch_parent;  // where the workers' scratch directories are
  nlohmann::json to_json() const;
};
ConfinementSupport probe_confinement(const ConfinementPlan& plan);

// In the worker. The notes name what the kernel could not apply.
Result<std::vector<std::string>> confine_worker(const ConfinementPlan& plan);

}  // namespace kcache::daemon
