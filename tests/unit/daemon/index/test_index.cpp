#include "index/index.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "index/index_migrations.hpp"

namespace kcache::daemon {
namespace {

namespace fs = std::filesystem;

class IndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kcache-index-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/index.sqlite";
  }
  void TearDown() override { fs::remove_all(dir_); }

  static EntryRow row(int i) {
    EntryRow r;
    r.key = digest_of(std::string_view("key" + std::to_string(i)));
    r.digest = digest_of(std::string_view("obj" + std::to_string(i)));
    r.size = 100 + i;
    r.kind = i % 2 ? ObjectKind::hsaco : ObjectKind::cubin;
    r.target = i % 2 ? "gfx942" : "sm_90a";
    r.origin = EntryOrigin::compiled;
    r.name = "m" + std::to_string(i);
    r.created = 1000 + i;
    r.last_served = 2000 + i;
    r.serve_count = i;
    return r;
  }

  std::vector<EntryRow> all(Index& index) {
    std::vector<EntryRow> rows;
    EXPECT_TRUE(index.for_each_entry([&](const EntryRow& r) { rows.push_back(r); }).ok());
    return rows;
  }

  std::string dir_;
  std::string path_;
};

TEST_F(IndexTest, FreshDatabaseMigratesToTheLatestVersion) {
  auto index = Index::open(path_);
  ASSERT_TRUE(index.ok()) << index.error().message;
  EXPECT_EQ(index->schema_version(), Index::latest_schema_version());
  EXPECT_EQ(Index::latest_schema_version(), static_cast<int>(index_migrations().size()));
  auto db = SqliteDb::open(path_, SQLITE_OPEN_READONLY);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*db->query_int("PRAGMA user_version"), Index::latest_schema_version());
}

// A version-2 index (rows with disk sizes) keeps every row through the table rebuild of
// version 3, which only widens the kinds an entry may have.
TEST_F(IndexTest, Version2RowsSurviveTheMigrationThatAddsHostObjects) {
  {
    auto db = SqliteDb::open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    ASSERT_TRUE(db.ok());
    for (const Migration& m : index_migrations()) {
      if (m.version > 2) continue;
      ASSERT_TRUE(db->exec(m.sql).ok()) << m.file;
    }
    ASSERT_TRUE(db->exec("PRAGMA user_version = 2").ok());
    ASSERT_TRUE(db->exec("INSERT INTO entries VALUES (x'00112233445566778899aabbccddeeff', "
                         "x'ffeeddccbbaa99887766554433221100', 7, 'cubin', 'sm_90a', 'provider', "
                         "'old', 1000, 2000, 3, 4096)")
                    .ok());
    EXPECT_FALSE(db->exec("INSERT INTO entries VALUES (x'01', x'02', 1, 'so', 'sm_90a', "
                          "'provider', 'x', 1, 1, 0, NULL)")
                     .ok())
        << "version 2 refuses kind 'so'";
  }
  auto index = Index::open(path_);
  ASSERT_TRUE(index.ok()) << index.error().message;
  auto rows = all(*index);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "old");
  EXPECT_EQ(rows[0].serve_count, 3u);
  EXPECT_EQ(rows[0].last_served, 2000);
  EntryRow so = row(5);
  so.kind = ObjectKind::so;
  IndexBatch b;
  b.upserts.push_back(so);
  ASSERT_TRUE(index->apply(b).ok());
  auto named = index->entries_named("m5");
  ASSERT_TRUE(named.ok());
  ASSERT_EQ(named->size(), 1u);
  EXPECT_EQ((*named)[0].kind, ObjectKind::so);
}

TEST_F(IndexTest, StartupLoadSkipsNamesAndCountsRows) {
  auto index = Index::open(path_);
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(*index->count_entries(), 0u);
  IndexBatch b;
  for (int i = 0; i < 4; ++i) b.upserts.push_back(row(i));
  ASSERT_TRUE(index->apply(b).ok());
  EXPECT_EQ(*index->count_entries(), 4u);
  std::vector<EntryRow> rows;
  ASSERT_TRUE(index->for_each_entry([&](const EntryRow& r) { rows.push_back(r); },
                                    Index::Names::skip).ok());
  ASSERT_EQ(rows.size(), 4u);
  for (const EntryRow& r : rows) {
    EXPECT_TRUE(r.name.empty());  // everything else as stored
    const int i = static_cast<int>(r.serve_count);
    EXPECT_EQ(r.key, row(i).key);
    EXPECT_EQ(r.digest, row(i).digest);
    EXPECT_EQ(r.target, row(i).target);
    EXPECT_EQ(r.last_served, row(i).last_served);
  }
  for (const EntryRow& r : all(*index)) EXPECT_EQ(r.name, row(static_cast<int>(r.serve_count)).name);
}

TEST_F(IndexTest, BatchesPersistAcrossReopen) {
  {
    auto index = Index::open(path_);
    ASSERT_TRUE(index.ok());
    IndexBatch b;
    for (int i = 0; i < 3; ++i) b.upserts.push_back(row(i));
    b.counters["hits"] = 5;
    ASSERT_TRUE(index->apply(b).ok());
    IndexBatch b2;
    b2.touches.push_back({row(1).key, 9999, 42});
    b2.deletes.push_back(row(2).key);
    b2.counters["hits"] = 6;
    ASSERT_TRUE(index->apply(b2).ok());
  }
  auto index = Index::open(path_);
  ASSERT_TRUE(index.ok());
  auto rows = all(*index);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    if (r.key == row(1).key) {
      EXPECT_EQ(r.last_served, 9999);
      EXPECT_EQ(r.serve_count, 42u);
      EXPECT_EQ(r.kind, ObjectKind::hsaco);
      EXPECT_EQ(r.target, "gfx942");
    } else {
      EXPECT_EQ(r.key, row(0).key);
      EXPECT_EQ(r.name, "m0");
    }
  }
  EXPECT_EQ(index->load_counters()->at("hits"), 6);
  auto named = index->entries_named("m1");
  ASSERT_TRUE(named.ok());
  ASSERT_EQ(named->size(), 1u);
}

TEST_F(IndexTest, NewerSchemaIsRefusedAndLeftUntouched) {
  {
    auto db = SqliteDb::open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->exec("PRAGMA user_version = 99").ok());
  }
  auto index = Index::open(path_);
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.error().code, Errc::unsupported_version);
  EXPECT_NE(index.error().message.find("99"), std::string::npos);
  auto db = SqliteDb::open(path_, SQLITE_OPEN_READONLY);
  EXPECT_EQ(*db->query_int("PRAGMA user_version"), 99);
}

TEST_F(IndexTest, GarbageFileIsReportedAsCorrupt) {
  {
    std::FILE* f = std::fopen(path_.c_str(), "w");
    std::fputs("this is not a database, just some bytes long enough to look like a header......"
               "..........................................................................", f);
    std::fclose(f);
  }
  auto index = Index::open(path_);
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.error().code, Errc::corrupt) << index.error().message;
}

TEST_F(IndexTest, QuickCheckIsCleanOnAHealthyIndex) {
  auto index = Index::open(path_);
  ASSERT_TRUE(index.ok());
  auto findings = index->quick_check();
  ASSERT_TRUE(findings.ok());
  EXPECT_TRUE(findings->empty()) << *findings;
}

}  // namespace
}  // namespace kcache::daemon
