// index_migrations.hpp — the SQLite schema migrations, generated from schema/index/*.sql.
//
// Contract: migrations()[i] takes a database from user_version i to i+1; the list is
// ordered and gap-free (the generator checks).
#pragma once

#include <vector>

namespace kcache::daemon {

struct Migration {
  int version;       // the user_version after applying it
  const char* file;  // schema/index/<file>
  const char* sql;
};

const std::vector<Migration>& index_migrations();

}  // namespace kcache::daemon
