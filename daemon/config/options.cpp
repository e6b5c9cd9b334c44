// kcached's command line (DESIGN §8): CLI11 parses the flags of the settings table
// (settings.hpp), checking each value as it parses; the config file fills the gaps.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <sstream>

#include "common/paths.hpp"
#include "config/config.hpp"
#include "config/settings.hpp"
#include "kcache_config.h"

namespace kcache::daemon {

namespace {

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// "UID:GID:NAME", as worker_confinement.cpp's to_args() writes it.
Result<RunAs> parse_run_as(const std::string& text) {
  RunAs who;
  unsigned long uid = 0, gid = 0;
  int name_at = 0;
  if (std::sscanf(text.c_str(), "%lu:%lu:%n", &uid, &gid, &name_at) != 2 || name_at == 0)
    return make_error(Errc::invalid_argument, "--run-as: expected UID:GID:NAME, not '" + text + "'");
  who.uid = static_cast<uid_t>(uid);
  who.gid = static_cast<gid_t>(gid);
  who.name = text.substr(static_cast<std::size_t>(name_at));
  return who;
}

// One flag of the table, as CLI11 collected it.
struct FlagSlot {
  const Setting* setting;
  CLI::Option* option = nullptr;
  std::vector<std::string> values;  // a scalar flag takes one
};

// The table's words for a terminal: Markdown's backticks dropped.
std::string help_of(const Setting& s) {
  std::string help(s.doc);
  help += " (default: ";
  help += s.default_note.empty() ? s.default_value : s.default_note;
  if (const std::string bounds = bounds_text(s); !bounds.empty()) help += "; " + bounds;
  help += ")";
  std::erase(help, '`');
  return help;
}

const char* value_name(const Setting& s) {
  switch (s.kind) {
    case SettingKind::size: return "SIZE";
    case SettingKind::duration: return "DURATION";
    case SettingKind::count: return "N";
    case SettingKind::percent: return "PERCENT";
    case SettingKind::mode: return "MODE";
    case SettingKind::list: return s.items == ItemRule::devices ? "DEVICES" : "DIR";
    case SettingKind::text: return s.items == ItemRule::log_level ? "LEVEL" : "TEXT";
  }
  return "VALUE";
}

// Every table flag, validated by CLI11 as it parses (a list: each item).
void add_setting_flags(CLI::App& app, std::deque<FlagSlot>& slots) {
  for (const Setting& s : settings()) {
    if (s.flag.empty()) continue;
    FlagSlot& slot = slots.emplace_back(FlagSlot{&s});
    CLI::Validator check(
        [&s](std::string& text) {
          auto parsed = parse_text(s, text);
          return parsed.ok() ? std::string() : parsed.error().message;
        },
        "", std::string(s.key));
    if (s.kind == SettingKind::list) {
      slot.option = app.add_option(std::string(s.flag), slot.values, help_of(s))->allow_extra_args(false);
      if (s.items == ItemRule::devices) slot.option->delimiter(',');
    } else {
      slot.option = app.add_option(std::string(s.flag), slot.values, help_of(s))->expected(1)
                        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
    slot.option->check(check)->type_name(value_name(s));
  }
}

// The flags given override what the file and the environment set.
Status apply_flags(const std::deque<FlagSlot>& slots, DaemonConfig& config) {
  for (const FlagSlot& slot : slots) {
    if (slot.option->count() == 0) continue;
    const Setting& s = *slot.setting;
    SettingValue value;
    if (s.kind == SettingKind::list) {
      std::vector<std::string> items;
      for (const std::string& v : slot.values)
        if (!v.empty() || s.items != ItemRule::devices) items.push_back(v);
      value = std::move(items);
    } else {
      auto parsed = parse_text(s, slot.values.back());
      if (!parsed.ok()) return make_error(Errc::invalid_argument, std::string(s.flag) + ": " + parsed.error().message);
      value = std::move(parsed).value();
    }
    s.store(config, std::move(value));
  }
  return {};
}

void add_internal_flags(CLI::App& app, ParsedArgs& parsed, std::string& run_as) {
  app.add_flag("--compile-worker", parsed.compile_worker, "Internal: run as a compile worker")->group("");
  app.add_option("--scratch", parsed.worker_plan.scratch, "Internal: the worker's scratch directory")->group("");
  app.add_option("--read-root", parsed.worker_plan.read_roots, "Internal: a directory the worker may read")
      ->group("")->allow_extra_args(false);
  app.add_option("--run-as", run_as, "Internal: UID:GID:NAME the worker becomes")->group("");
  app.add_option("--preload", parsed.worker_plan.preload, "Internal: a backend the worker loads before confining")
      ->group("")->allow_extra_args(false);
  app.add_option("--probe-compiler", parsed.probe_compiler, "Internal: print a backend's compiler identity")
      ->group("");
}

// File, then KCACHE_DEVICES, then the command line.
Status build_config(const std::string& config_file, const std::deque<FlagSlot>& slots,
                    DaemonConfig& c) {
  if (!config_file.empty()) KC_TRY(load_config_file(config_file, c));
  if (const char* env = std::getenv("KCACHE_DEVICES"); env != nullptr && *env != '\0')
    c.devices = split_list(env);
  return apply_flags(slots, c);
}

}  // namespace

Result<ParsedArgs> parse_daemon_args(int argc, char** argv) {
  ParsedArgs parsed;
  CLI::App app{"kcached — the per-host GPU kernel module cache daemon", "kcached"};
  app.set_version_flag("--version", std::string("kcached ") + KCACHE_VERSION);
  std::string config_file, run_as;
  app.add_option("--config", config_file, "TOML configuration file")->check(CLI::ExistingFile);
  std::deque<FlagSlot> slots;  // stable addresses: CLI11 keeps pointers into them
  add_setting_flags(app, slots);
  add_internal_flags(app, parsed, run_as);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::cout << app.help();
    parsed.exit_now = true;
    return parsed;
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    parsed.exit_now = true;
    return parsed;
  } catch (const CLI::ParseError& e) {
    return make_error(Errc::invalid_argument, e.what());
  }
  if (parsed.compile_worker || !parsed.probe_compiler.empty()) {
    // A worker takes its log level and memory limit from the flags alone.
    KC_TRY(apply_flags(slots, parsed.config));
    if (!run_as.empty()) {
      KC_TRY_ASSIGN(parsed.worker_plan.run_as, parse_run_as(run_as));
    }
    return parsed;
  }
  parsed.config.command_line.assign(argv, argv + argc);  // a reload (SIGHUP) parses it again
  KC_TRY(build_config(config_file, slots, parsed.config));
  return parsed;
}

Status apply_default_paths(DaemonConfig& config) {
  if (config.cache_dir.empty()) {
    KC_TRY_ASSIGN(config.cache_dir, default_cache_dir());
  }
  return {};
}

}  // namespace kcache::daemon
