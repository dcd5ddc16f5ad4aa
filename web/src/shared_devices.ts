// Runs that shared a GPU at the same time each record the GPU's own series (its utilization,
// power, memory) alike: a chart draws each such series once, with the first of those runs
// (in the chart's order), named for the device and all of them ("GPU 0, shared by 0AMPS and
// 0BMPS"). The figures keep the same rule (src/figure/shared_devices.h).
import type * as api from "./api";

// Whether two runs watched the same GPUs at once: the same host, the same devices as given
// to them (GPU UUIDs where trainbench started them), overlapping in time. A run that does
// not say its host or devices shares with none.
export function sharedAtOnce(a: api.RunInfo, b: api.RunInfo): boolean {
  const end = (r: api.RunInfo) => (r.end_ms > 0 ? r.end_ms : Infinity);
  return (
    a.host !== "" &&
    a.host === b.host &&
    a.devices !== "" &&
    a.devices === b.devices &&
    a.start_ms < end(b) &&
    b.start_ms < end(a)
  );
}

// A device's own series (gpu.*), not a run's share of it (proc.gpu.*).
export const isDeviceMetric = (metric: string) => metric.startsWith("gpu.");

// The series left once each shared device series is kept with its first run (`order`: the
// chart's runs), and for each kept one (by "run|labels") the runs that shared it.
export function eachDeviceOnce<T extends { run: string; labels: string }>(
  metric: string,
  series: T[],
  order: string[],
  run: (id: string) => api.RunInfo | undefined,
): { kept: T[]; sharing: Map<string, string[]> } {
  const sharing = new Map<string, string[]>();
  if (!isDeviceMetric(metric)) return { kept: series, sharing };
  const place = (id: string) => order.indexOf(id);
  const sorted = [...series].sort((p, q) => place(p.run) - place(q.run));
  const kept: T[] = [];
  for (const s of sorted) {
    const r = run(s.run);
    const keeper = r && kept.find((k) => k.labels === s.labels && k.run !== s.run && sharedAtOnce(run(k.run)!, r));
    if (!keeper) {
      kept.push(s);
      continue;
    }
    const key = keeper.run + "|" + keeper.labels;
    sharing.set(key, [...(sharing.get(key) ?? []), s.run]);
  }
  return { kept: series.filter((s) => kept.includes(s)), sharing };
}

// "GPU 0, shared by 0AMPS and 0BMPS": each run by its letter where all have one, else by
// its name in the chart.
export function sharedName(
  labels: string,
  runs: string[],
  run: (id: string) => api.RunInfo | undefined,
  nameOf: (id: string) => string,
): string {
  const gpu = /(^|,)gpu=([^,]*)/.exec(labels)?.[2];
  const letters = runs.every((id) => !!run(id)?.letter);
  const names = runs.map((id) => (letters ? run(id)!.letter : nameOf(id)));
  const list = names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}` : names[0];
  return `${gpu !== undefined ? `GPU ${gpu}` : labels}, shared by ${list}`;
}
