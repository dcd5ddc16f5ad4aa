// A chart's controls bound to its state: each control ([data-k] for what the chart shows,
// [data-f] for the exported figure's look, [data-a] for actions) writes its value into the
// state, has the view saved, and asks the chart for what the change needs: a reload (the
// lines change), a redraw (only their look does), or the phases or events read again.
import type { ChartState, Grouping, XKind } from "./state";
import { syncXChoice } from "./details";

export type ExportKind = "png" | "svg" | "pdf" | "csv";

export interface ChartActions {
  changed(): void; // the state changed: save the view
  reload(): void;
  redraw(): void;
  phasesChosen(): void;
  eventsChosen(): void;
  selection(): string[]; // the runs ticked in the tree
  resetZoom(): void;
  remove(): void;
  export(kind: ExportKind): void;
}

// The controls that change the lines themselves, not only how they are drawn.
const reloading = new Set<keyof ChartState>(["grouping", "x", "labels", "colorBy"]);

export function bindChartControls(el: HTMLElement, s: ChartState, act: ChartActions) {
  for (const input of el.querySelectorAll<HTMLInputElement | HTMLSelectElement>("[data-k]")) {
    const k = input.dataset.k as keyof ChartState;
    if (input instanceof HTMLInputElement && input.type === "checkbox") input.checked = !!s[k];
    else input.value = s[k] == null ? "" : String(s[k]);
    input.addEventListener(input.type === "range" ? "input" : "change", () => {
      if (k === "phasesOf") {
        s.phasesOf = input.value; // "" : none, chosen
        act.changed();
        act.phasesChosen();
        return;
      }
      if (k === "grouping") s.grouping = input.value as Grouping;
      // The choice first, then the list made to agree with it (wall time is off for
      // workload means): the other way round the list set the old choice back.
      if (k === "x") {
        s.x = input.value as XKind;
        s.zoom = null;
      }
      syncXChoice(el, s);
      if (k === "smoothing") s.smoothing = Number(input.value);
      if (k === "width") s.width = Number(input.value);
      if (k === "mono") s.mono = (input as HTMLInputElement).checked;
      if (k === "logY") s.logY = (input as HTMLInputElement).checked;
      if (k === "yMin" || k === "yMax") s[k] = input.value === "" ? null : Number(input.value);
      if (k === "labels") s.labels = input.value;
      if (k === "colorBy") s.colorBy = input.value;
      act.changed();
      if (reloading.has(k)) act.reload();
      else act.redraw();
    });
  }
  // The exported figure's look.
  for (const input of el.querySelectorAll<HTMLInputElement>("[data-f]")) {
    const k = input.dataset.f as keyof ChartState["figure"];
    if (input.type === "checkbox") input.checked = !!s.figure[k];
    else input.value = String(s.figure[k]);
    input.addEventListener("change", () => {
      const f = s.figure as unknown as Record<string, string | number | boolean>;
      f[k] = input.type === "checkbox" ? input.checked : input.type === "number" ? Number(input.value) : input.value;
      act.changed();
      if (k === "events") act.eventsChosen();
    });
  }
  el.querySelector('[data-a="selection"]')!.addEventListener("click", () => {
    s.runs = act.selection();
    s.hidden = [];
    act.changed();
    act.reload();
  });
  el.querySelector('[data-a="reset"]')!.addEventListener("click", () => act.resetZoom());
  el.querySelector('[data-a="remove"]')!.addEventListener("click", () => act.remove());
  for (const kind of ["png", "svg", "pdf", "csv"] as const) {
    el.querySelector(`[data-a="${kind}"]`)!.addEventListener("click", () => act.export(kind));
  }
  syncXChoice(el, s);
}
