/* evalkit page: figures as inline SVG (topic plot of run B against run A, first relevant rank, metric by query length). */
"use strict";

EK.figures = {
  W: 920, H: 280, M: { left: 72, right: 16, top: 16, bottom: 44 },

  init(D) {
    this.D = D;
    const box = document.getElementById("figure-runs");
    box.checked = D.runs.length <= 6;  // many runs: A and B only, unless asked
    box.addEventListener("change", () => this.render());
    this.allRuns = box;
    EK.onChange(() => this.render());
    this.render();
  },

  shown() {
    const s = EK.state;
    return this.allRuns.checked ? this.D.runs.map((_, r) => r) : (s.a === s.b ? [s.a] : [s.a, s.b]);
  },

  render() {
    this.topic();
    this.rank();
    this.length();
  },

  frame(id, title, caption) {
    const fig = EK.clear(document.getElementById(id));
    const root = EK.svg("svg", { viewBox: `0 0 ${this.W} ${this.H}`, width: this.W, height: this.H, role: "img", "aria-label": title });
    root.append(EK.svg("title", {}, title));
    fig.append(EK.el("h2", {}, title), root);
    if (caption) fig.append(EK.el("figcaption", {}, caption));
    return { fig, root };
  },

  // Round axis values: steps of 1, 2, 2.5 or 5 times a power of ten, covering [low, high] with about `count` intervals.
  niceTicks(low, high, count = 4) {
    const range = high - low || Math.abs(high) || 1;
    const raw = range / count, power = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw - 1e-12);
    const ticks = [];
    for (let t = Math.floor(low / step + 1e-9) * step; t < high + step - 1e-9 * step; t += step) ticks.push(Math.round(t / step) * step);
    return ticks.map((t) => (Math.abs(t) < step * 1e-9 ? 0 : Number(t.toPrecision(12))));
  },

  axisY(root, y, ticks, format) {
    const { left, right } = this.M;
    for (const t of ticks) {
      root.append(EK.svg("line", { x1: left, x2: this.W - right, y1: y(t), y2: y(t), stroke: t === 0 ? "#888" : "#e5e7eb" }),
        EK.svg("text", { x: left - 6, y: y(t) + 4, "text-anchor": "end", fill: "#555" }, format(t)));
    }
  },

  topic() {
    const D = this.D, s = EK.state, A = D.runs[s.a].values[s.metric], B = D.runs[s.b].values[s.metric];
    const diffs = [];
    for (let q = 0; q < A.length; q++) { const d = B[q] - A[q]; if (!Number.isNaN(d)) diffs.push(d); }
    diffs.sort((x, y) => y - x);
    const better = diffs.filter((d) => d > 0).length, worse = diffs.filter((d) => d < 0).length;
    const title = `Per-query difference B − A on ${s.metric} (topic plot)`;
    const caption = `A = ${D.runs[s.a].name}, B = ${D.runs[s.b].name}; queries sorted by difference: B better on ${better}, ` +
      `A better on ${worse}, equal on ${diffs.length - better - worse} (of ${diffs.length}).`;
    const { root } = this.frame("fig-topic", title, caption);
    const { left, right, top, bottom } = this.M, w = this.W - left - right, h = this.H - top - bottom;
    let span = 0;
    for (const d of diffs) span = Math.max(span, Math.abs(d));
    const half = this.niceTicks(0, span || 1, 2);  // symmetric round ticks: 0, step, 2 step (>= the largest |difference|)
    span = half[half.length - 1];
    const y = (v) => top + h / 2 - (v / span) * (h / 2);
    this.axisY(root, y, [...half.slice(1).reverse().map((t) => -t), ...half], (t) => EK.num(t, 2));
    const n = diffs.length;
    if (n && n <= 1500) {
      const bw = w / n;
      diffs.forEach((d, i) => {
        if (d === 0) return;
        root.append(EK.svg("rect", { x: left + i * bw, width: Math.max(bw - (bw > 3 ? 1 : 0), 0.5), y: Math.min(y(d), y(0)),
          height: Math.abs(y(d) - y(0)), fill: d > 0 ? "#2ca02c" : "#d62728", class: "topic-bar" }));
      });
    } else if (n) {  // many queries: the sorted differences as two filled areas, sampled per pixel column
      const step = Math.max(1, Math.floor(n / w));
      for (const [sign, colour] of [[1, "#2ca02c"], [-1, "#d62728"]]) {
        const points = [];
        for (let i = 0; i < n; i += step) if (Math.sign(diffs[i]) === sign) points.push([left + (i / n) * w, y(diffs[i])]);
        if (!points.length) continue;
        const path = `M${points[0][0]},${y(0)} ` + points.map(([px, py]) => `L${px.toFixed(1)},${py.toFixed(1)}`).join(" ") +
          ` L${points[points.length - 1][0].toFixed(1)},${y(0)} Z`;
        root.append(EK.svg("path", { d: path, fill: colour, class: "topic-area" }));
      }
    }
    root.append(EK.svg("text", { x: left + w / 2, y: this.H - 10, "text-anchor": "middle", fill: "#555" }, "queries, sorted by B − A"));
  },

  bars(id, title, caption, categories, series, yLabel, format, yMax) {
    const { fig, root } = this.frame(id, title, caption);
    const { left, right, top, bottom } = this.M, w = this.W - left - right, h = this.H - top - bottom;
    let max = yMax || 0;
    for (const sr of series) for (const v of sr.values) if (Number.isFinite(v)) max = Math.max(max, v);
    const ticks = this.niceTicks(0, max || 1);  // round values (10 %, 20 %, ...), the top one >= the highest bar
    max = ticks[ticks.length - 1];
    const y = (v) => top + h - (v / max) * h;
    this.axisY(root, y, ticks, format);
    const group = w / categories.length, bw = (group * 0.8) / Math.max(series.length, 1);
    categories.forEach((cat, c) => {
      const x0 = left + c * group + group * 0.1;
      series.forEach((sr, i) => {
        const v = sr.values[c];
        if (!Number.isFinite(v)) return;
        const bar = EK.svg("rect", { x: x0 + i * bw, y: y(v), width: Math.max(bw - 1, 0.5), height: top + h - y(v), fill: sr.colour, class: "bar" });
        bar.append(EK.svg("title", {}, `${sr.name} · ${cat}: ${format(v)}`));
        root.append(bar);
      });
      root.append(EK.svg("text", { x: x0 + group * 0.4, y: top + h + 16, "text-anchor": "middle", fill: "#333" }, cat));
    });
    root.append(EK.svg("text", { x: 12, y: top + h / 2, transform: `rotate(-90 12 ${top + h / 2})`, "text-anchor": "middle", fill: "#555" }, yLabel));
    fig.insertBefore(EK.el("div", { class: "svg-legend" }, series.map((sr) => EK.el("span", { style: `--c: ${sr.colour}` }, sr.name))), root);
  },

  rank() {
    const F = this.D.figures;
    const series = this.shown().map((r) => {
      const run = this.D.runs[r], counts = F.first_relevant[r], total = counts.reduce((a, b) => a + b, 0) || 1;
      return { name: run.name, colour: EK.colour(r), values: counts.map((c) => (100 * c) / total) };
    });
    this.bars("fig-rank", "Rank of the first relevant document",
      "Share of queries whose first relevant document is at rank 1..10, at 11 or later, or not retrieved (none).",
      F.rank_buckets, series, "% of queries", (v) => (Number.isInteger(v) ? v : v.toFixed(1)) + "%");
  },

  length() {
    const D = this.D, F = D.figures, metric = EK.state.metric;
    if (!F.length_buckets.length || !D.queries.length) {
      const fig = EK.clear(document.getElementById("fig-length"));
      fig.append(EK.el("h2", {}, "Effect of query length"), EK.el("p", { class: "muted" }, "No query text, so query length cannot be measured (pass --queries)."));
      return;
    }
    const L = D.queries.length;
    const series = this.shown().map((r) => {
      const run = D.runs[r], values = run.values[metric];
      return { name: run.name, colour: EK.colour(r), values: F.length_buckets.map((b) => {
        let sum = 0, n = 0;
        for (let q = 0; q < L.length; q++) if (L[q] >= b.low && L[q] <= b.high && !Number.isNaN(values[q])) { sum += values[q]; n++; }
        return n ? sum / n : NaN;
      }) };
    });
    this.bars("fig-length", `${metric} by query length`,
      "Mean per bucket of query length (whitespace tokens of the query text; buckets at the quantiles).",
      F.length_buckets.map((b) => `${b.label} (n=${b.n})`), series, metric, (v) => v.toFixed(3));
  },
};
