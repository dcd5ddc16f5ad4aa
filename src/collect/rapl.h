// `rapl`: the CPU packages' and memory's energy through Linux's powercap interface to RAPL
// (/sys/class/powercap/intel-rapl:N, also on AMD CPUs since Linux 5.8), as host series,
// and the run's share of it where runs share the machine.
//
// Domains: each package zone (`package-0`, ...) and its `dram` subzone where the CPU has
// one (labelled `package-0/dram`); the `core` and `uncore` subzones are inside the package
// and `psys` covers the whole platform, so they are listed by `trainbench devices` but not
// counted. Each tick a domain's energy_uj is read; a reading below the last is the counter
// wrapping at max_energy_range_uj. host.energy.consumed_joules{domain} is the energy since
// the first reading, host.power.draw_watts{domain} its increase over the tick. The run's
// share of each increase (proc.cpu.energy_joules{domain}) is its process tree's CPU time
// over the CPU time all processes used in the same tick (/proc/stat's busy time): RAPL
// cannot tell processes apart, CPU time can.
//
// Since Linux 5.10 energy_uj is readable by root only (CVE-2020-8694); a domain this user
// may not read is listed with why, and the listener records nothing for it. On a machine
// without RAPL (most virtual machines) FindRaplDomains says so.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collect/collector.h"
#include "platform/host_files.h"

namespace tb {

struct RaplDomain {
  std::string path;   // "/sys/class/powercap/intel-rapl:0:2"
  std::string label;  // "package-0/dram"
  uint64_t max_energy_range_uj = 0;
  bool counted = false;    // a package or its dram: part of the CPU's energy
  std::string unreadable;  // why energy_uj cannot be read; empty when it can
};

struct RaplDomains {
  std::vector<RaplDomain> domains;
  std::string absent;  // why there are none: "no RAPL here (/sys/class/powercap has no intel-rapl zone)"
};

RaplDomains FindRaplDomains(const HostFiles& files);

std::unique_ptr<Collector> MakeRaplCollector(const HostFiles& files);

}  // namespace tb
