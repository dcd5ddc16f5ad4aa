// Whose phases a chart shades. Phases are one run's: shaded for several runs at once they
// tinted whole charts and said nothing of whose they were. A chart of one run shades that
// run's; a chart of several shades none until a run is chosen in its "Phases of" list, and
// says whose in its caption. Workload means and step axes shade none (a phase is a span of
// one run's time).
import * as api from "./api";
import { esc } from "./format";
import { phaseSpans, type Line, type PhaseSpan } from "./lines";
import type { ChartState, XKind } from "./state";

// The run whose phases are shaded, if any: the one chosen, else the chart's only run.
export function phaseRun(state: ChartState, runs: string[]): string | undefined {
  if (state.grouping === "workloads") return undefined;
  if (state.phasesOf === "") return undefined;
  if (state.phasesOf && runs.includes(state.phasesOf)) return state.phasesOf;
  return runs.length === 1 ? runs[0] : undefined;
}

// The list's options: "none", then each run drawn by its legend name.
export function phaseOptions(state: ChartState, lines: Line[], runs: string[]): string {
  const chosen = phaseRun(state, runs);
  const named = new Map<string, string>();
  for (const l of lines) if (l.run && !named.has(l.run)) named.set(l.run, l.name);
  const options = [`<option value=""${chosen ? "" : " selected"}>none</option>`];
  for (const [run, name] of named) {
    options.push(`<option value="${run}"${run === chosen ? " selected" : ""}>${esc(name)}</option>`);
  }
  return options.join("");
}

// The chosen run's phases as spans on the chart's x axis, with the run's phases for its details.
export async function loadPhaseSpans(
  state: ChartState,
  runs: string[],
  x: XKind,
  startOf: (run: string) => number | undefined,
): Promise<{ run?: string; phases: api.PhaseInfo[]; spans: PhaseSpan[] }> {
  const run = phaseRun(state, runs);
  if (!run || x === "step") return { run, phases: [], spans: [] };
  const phases = await api.phasesOf(run).catch(() => [] as api.PhaseInfo[]);
  return { run, phases, spans: phaseSpans(run, startOf(run), phases, x) };
}
