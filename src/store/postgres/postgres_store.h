// The shared store: one PostgreSQL database that the trainbench processes of many machines
// write to at once, and any `trainbench serve` reads. Same tables and migrations as the
// SQLite store; ids are made by the writers (series and experiments from a hash of what
// names them, chunks, journal entries and events at random), so that every write is one
// self-contained, repeatable statement batch.
//
// When the database cannot be reached (at the start or in the middle of a run), writes go
// to a spool file on local disk instead, and the run goes on; a background thread
// reconnects and replays the spool in order, then removes it. A spool left by a process
// that ended while the database was down is replayed by the next trainbench command that
// opens the store. The user is told once when spooling starts and once when it is written.
// Reads need the database.
//
// Artifacts: content up to 8 MiB goes into the database (logs, manifests); larger files
// stay files, under PostgresOptions::artifact_root (Store::Open: TRAINBENCH_ARTIFACT_DIR when
// it names a directory every machine reaches, for Nsight reports), and are recorded by path.
// The connection (pg_connection.h) and the spool (pg_spool.h) are units of their own.
#pragma once

#include <memory>
#include <string>

#include "store/store.h"

namespace tb {

struct PostgresOptions {
  // Where spool files live (a directory per database below it).
  std::string spool_directory;
  // Where artifacts too large for the database are written (a directory per run below it).
  std::string artifact_root;
};

// `uri` is a libpq connection URI (postgresql://user@host:port/db?sslmode=require); the
// password comes from the URI, PGPASSWORD or ~/.pgpass, as libpq reads them.
Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& uri, const PostgresOptions& options);

}  // namespace tb
