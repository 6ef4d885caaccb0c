// The dashboard: per agent and day, runs by status, cost, tokens, p50/p95 duration and error
// rate, drawn here as SVG from `GET /v1/dashboard` (a summary the store keeps). Every chart has
// its numbers in a table beside it, for screen readers and for copying.
import { UNPRICED, api, connection, counted, el, failed, fill, go, millis, money, reloadEvery, svg } from "./shared.js";

const W = 560, H = 150, PAD_L = 52, PAD_B = 22, PAD_T = 10;
const STATUS_ORDER = ["completed", "running", "queued", "awaiting_approval", "awaiting_reconciliation", "failed", "cancelled", "budget_exceeded"];
const DAY_MS = 86_400_000;
const REFRESH_MS = 10_000;

function dayRange(count) {
  const today = new Date();
  const end = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  return Array.from({ length: count }, (_, i) => new Date(end - (count - 1 - i) * DAY_MS).toISOString().slice(0, 10));
}

function scaleMax(value) {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 2.5, 5, 10].map((f) => f * power).find((m) => m >= value);
}

// Bars per day, each day a stack of `series` ({name, value(row), cls}).
function barChart(title, agent, days, byDay, series, format, testid) {
  const max = scaleMax(Math.max(0, ...days.map((d) => series.reduce((sum, s) => sum + (byDay.get(d) ? s.value(byDay.get(d)) || 0 : 0), 0))));
  const slot = (W - PAD_L) / days.length;
  const y = (v) => PAD_T + (H - PAD_T - PAD_B) * (1 - v / max);
  const parts = [];
  for (const frac of [0, 0.5, 1]) {
    parts.push(svg("line", { x1: PAD_L, x2: W, y1: y(max * frac), y2: y(max * frac), class: "grid-line" }));
    parts.push(svg("text", { x: PAD_L - 4, y: y(max * frac) + 4, class: "axis", "text-anchor": "end" }, format(max * frac)));
  }
  days.forEach((day, i) => {
    const row = byDay.get(day);
    let base = 0;
    for (const s of series) {
      const value = row ? s.value(row) || 0 : 0;
      if (value > 0) {
        parts.push(svg("rect", { x: PAD_L + i * slot + slot * 0.15, width: slot * 0.7, y: y(base + value), height: y(base) - y(base + value), class: "bar " + s.cls,
          "data-agent": agent, "data-day": day, "data-series": s.name, "data-value": value }, svg("title", {}, day + " · " + s.name + ": " + format(value))));
      }
      base += value;
    }
    if (i % Math.ceil(days.length / 7) === 0) parts.push(svg("text", { x: PAD_L + i * slot + slot / 2, y: H - 6, class: "axis", "text-anchor": "middle" }, day.slice(5)));
  });
  const legend = series.length > 1 || testid === "chart-runs" ? el("div", { class: "legend" }, series.map((s) => el("span", {}, el("i", { class: "swatch " + s.cls }), s.name))) : null;
  return el("figure", { class: "chart", "data-testid": testid, "data-agent": agent },
    el("figcaption", {}, title),
    svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": title + " for " + agent + ", per day" }, parts),
    legend);
}

// p50 and p95 as two lines (a dot for each day with runs).
function lineChart(title, agent, days, byDay, series, format, testid) {
  const max = scaleMax(Math.max(0, ...days.flatMap((d) => series.map((s) => (byDay.get(d) && s.value(byDay.get(d))) || 0))));
  const slot = (W - PAD_L) / days.length;
  const x = (i) => PAD_L + i * slot + slot / 2;
  const y = (v) => PAD_T + (H - PAD_T - PAD_B) * (1 - v / max);
  const parts = [];
  for (const frac of [0, 0.5, 1]) {
    parts.push(svg("line", { x1: PAD_L, x2: W, y1: y(max * frac), y2: y(max * frac), class: "grid-line" }));
    parts.push(svg("text", { x: PAD_L - 4, y: y(max * frac) + 4, class: "axis", "text-anchor": "end" }, format(max * frac)));
  }
  for (const s of series) {
    const points = days.map((d, i) => [i, byDay.get(d) ? s.value(byDay.get(d)) : null]).filter(([, v]) => v !== null && v !== undefined);
    if (points.length > 1) parts.push(svg("polyline", { class: "line " + s.cls, points: points.map(([i, v]) => x(i) + "," + y(v)).join(" ") }));
    for (const [i, v] of points) {
      parts.push(svg("circle", { cx: x(i), cy: y(v), r: 3, class: "dot " + s.cls, "data-agent": agent, "data-day": days[i], "data-series": s.name, "data-value": v },
        svg("title", {}, days[i] + " · " + s.name + ": " + format(v))));
    }
  }
  days.forEach((day, i) => { if (i % Math.ceil(days.length / 7) === 0) parts.push(svg("text", { x: x(i), y: H - 6, class: "axis", "text-anchor": "middle" }, day.slice(5))); });
  return el("figure", { class: "chart", "data-testid": testid, "data-agent": agent },
    el("figcaption", {}, title),
    svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": title + " for " + agent + ", per day" }, parts),
    el("div", { class: "legend" }, series.map((s) => el("span", {}, el("i", { class: "swatch " + s.cls }), s.name))));
}

const count = (v) => (Number.isInteger(v) ? String(v) : v.toFixed(1));
const dollars = (v) => (v === 0 ? "$0" : "$" + (v >= 1 ? v.toFixed(2) : v.toPrecision(2)));
const tokens = (v) => (v >= 1000 ? (v / 1000).toFixed(v >= 10_000 ? 0 : 1) + "k" : count(v));
const percent = (v) => Math.round(v * 100) + "%";

function agentCard(agent, rows, days) {
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const statuses = STATUS_ORDER.filter((s) => rows.some((r) => r.by_status && r.by_status[s]));
  for (const r of rows) for (const s of Object.keys(r.by_status || {})) if (!statuses.includes(s)) statuses.push(s);
  const total = (key) => rows.reduce((sum, r) => sum + (r[key] || 0), 0);
  const priced = rows.filter((r) => r.cost_usd !== null && r.cost_usd !== undefined).length;
  const cost = !priced ? UNPRICED : money(total("cost_usd")) + (priced < rows.length ? " + " + UNPRICED : "");
  const table = el("table", { class: "numbers", "data-testid": "dashboard-table" },
    el("caption", {}, "The numbers of " + agent + ", per day"),
    el("thead", {}, el("tr", {}, ["day", "runs", "by status", "cost", "tokens in", "tokens out", "p50", "p95", "error rate"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, rows.map((r) => el("tr", { "data-day": r.day },
      el("td", {}, r.day), el("td", { "data-testid": "day-runs" }, r.runs),
      el("td", {}, Object.entries(r.by_status || {}).map(([s, n]) => s + " " + n).join(", ")),
      el("td", { "data-testid": "day-cost" }, money(r.cost_usd)),
      el("td", {}, r.input_tokens), el("td", {}, r.output_tokens),
      el("td", {}, millis(r.p50_duration_ms)), el("td", {}, millis(r.p95_duration_ms)),
      el("td", {}, r.error_rate === null || r.error_rate === undefined ? "—" : percent(r.error_rate))))));
  return el("section", { class: "agent-card", "data-testid": "dashboard-agent", "data-agent": agent },
    el("h2", {}, agent, el("span", { class: "muted" }, " · " + counted(total("runs"), "run") + " · ", el("span", { "data-testid": "agent-cost" }, cost), " · " + tokens(total("input_tokens") + total("output_tokens")) + " tokens")),
    el("div", { class: "charts" },
      barChart("Runs by status", agent, days, byDay, statuses.map((s) => ({ name: s, cls: "s-" + s, value: (r) => (r.by_status || {})[s] || 0 })), count, "chart-runs"),
      barChart("Cost (USD)", agent, days, byDay, [{ name: "cost", cls: "cost", value: (r) => r.cost_usd || 0 }], dollars, "chart-cost"),
      barChart("Tokens", agent, days, byDay, [{ name: "input", cls: "tok-in", value: (r) => r.input_tokens }, { name: "output", cls: "tok-out", value: (r) => r.output_tokens }], tokens, "chart-tokens"),
      lineChart("Duration p50 / p95", agent, days, byDay, [{ name: "p50", cls: "p50", value: (r) => r.p50_duration_ms }, { name: "p95", cls: "p95", value: (r) => r.p95_duration_ms }], millis, "chart-duration"),
      barChart("Error rate", agent, days, byDay, [{ name: "error rate", cls: "errors", value: (r) => r.error_rate || 0 }], percent, "chart-errors")),
    el("details", {}, el("summary", {}, "The numbers"), table));
}

export function dashboardPage(main) {
  const params = new URLSearchParams(location.search);
  const span = Number(params.get("days")) || 14;
  const agentFilter = el("input", { id: "dash-agent", type: "text", "data-testid": "dashboard-agent-filter", value: params.get("agent") || "" });
  const daysSelect = el("select", { id: "dash-days", "data-testid": "dashboard-days" }, [7, 14, 30, 90].map((n) => el("option", { value: n, selected: n === span }, n + " days")));
  const body = el("div", { "data-testid": "dashboard" }, el("p", { class: "muted" }, "Loading…"));
  const form = el("form", { class: "filters" },
    el("label", { for: "dash-agent" }, "Agent"), agentFilter, el("label", { for: "dash-days" }, "Last"), daysSelect,
    el("button", { type: "submit", class: "primary" }, "Show"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams({ days: daysSelect.value });
    if (agentFilter.value.trim()) next.set("agent", agentFilter.value.trim());
    go("/dashboard?" + next);
  });
  daysSelect.addEventListener("change", () => form.requestSubmit());
  fill(main, el("h1", {}, "Dashboard"), form, body);

  async function load() {
    const query = new URLSearchParams({ days: String(span) });
    if (params.get("agent")) query.set("agent", params.get("agent"));
    try {
      const answer = await api("/v1/dashboard?" + query);
      const days = dayRange(span);
      const agents = [...new Set(answer.days.map((r) => r.agent))].sort();
      fill(body, agents.length ? agents.map((a) => agentCard(a, answer.days.filter((r) => r.agent === a).sort((x, y) => x.day.localeCompare(y.day)), days))
        : el("p", { class: "muted" }, "No runs in these days."));
    } catch (error) { failed(error); }
  }
  const stop = reloadEvery(REFRESH_MS, load);
  const unback = connection.onBack(load);
  return () => { stop(); unback(); };
}
