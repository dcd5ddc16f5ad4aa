// Constructors of the host listeners, one file each; the registry in collector.cc maps
// names to them.
#pragma once

#include <memory>

#include "collect/collector.h"

namespace tb {

std::unique_ptr<Collector> MakeTopCollector(const HostFiles& files);
std::unique_ptr<Collector> MakePsCollector(const HostFiles& files);
std::unique_ptr<Collector> MakeIostatCollector(const HostFiles& files);
std::unique_ptr<Collector> MakeNetCollector(const HostFiles& files);
std::unique_ptr<Collector> MakeFreeCollector(const HostFiles& files);

}  // namespace tb
