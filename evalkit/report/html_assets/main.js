/* evalkit page: start-up (decode the embedded data, build each part, tabs, notes and manifest). */
"use strict";

EK.tabs = function tabs() {
  const buttons = document.querySelectorAll("#tabs button");
  const show = (name) => {
    for (const b of buttons) b.setAttribute("aria-selected", String(b.dataset.tab === name));
    for (const section of document.querySelectorAll("section.tab")) section.hidden = section.id !== "tab-" + name;
    if (location.hash !== "#" + name) history.replaceState(null, "", "#" + name);
  };
  for (const b of buttons) b.addEventListener("click", () => show(b.dataset.tab));
  const wanted = location.hash.slice(1);
  if ([...buttons].some((b) => b.dataset.tab === wanted)) show(wanted);
};

EK.about = function about(D) {
  const box = EK.clear(document.getElementById("about")), M = D.meta;
  box.append(EK.el("h2", {}, "How the numbers were computed"),
    EK.el("ul", {}, [...M.policy, `queries on this page: ${M.n_queries} (gold: ${M.n_gold}); documents shown: top ${M.k} of each run`,
      `RBO: extrapolated rank-biased overlap (Webber, Moffat & Zobel 2010), persistence p = ${M.rbo_p}, over each run's whole ranking` +
      (M.depth ? ` (top ${M.depth})` : ""),
      `Judged@${M.k}: share of the retrieved top ${M.k} that is judged (ir_measures' Judged@k)`,
      "unjudged as relevant: every metric recomputed with each retrieved, unjudged document relevant (a bound on what the judgments leave open)",
    ].map((line) => EK.el("li", {}, line))));
  if (D.board.notes.length) box.append(EK.el("h2", {}, "Notes"), EK.el("ul", {}, D.board.notes.map((n) => EK.el("li", {}, n))));
  box.append(EK.el("h2", {}, "Manifest"), EK.el("pre", { class: "manifest", id: "manifest" }, JSON.stringify(D.manifest, null, 2)));
};

/* A run's top rows carry sparse grades and repeats: expand them to one entry per row (NaN: unjudged). */
EK.expandTop = function expandTop(top) {
  const n = top.doc.length;
  top.grade = new Float32Array(n).fill(NaN);
  top.judged_at.forEach((row, i) => { top.grade[row] = top.judged_grade[i]; });
  top.repeat = new Uint8Array(n);
  top.repeat_at.forEach((row) => { top.repeat[row] = 1; });
};

EK.start = function start() {
  const t0 = performance.now();
  const raw = JSON.parse(document.getElementById("evalkit-data").textContent);
  const D = EK.decode(raw);
  for (const run of D.runs || []) EK.expandTop(run.top);
  EK.data = D;
  const M = D.meta;
  document.getElementById("subtitle").textContent = [
    `task ${M.task || "?"}`, `gold ${M.gold} (${M.n_gold.toLocaleString("en")} queries)`, `${D.board.rows.length} runs ranked`,
    M.baseline ? `baseline ${M.baseline}` : "", `official ${M.official}`, `evalkit ${M.evalkit_version}`, M.created,
  ].filter(Boolean).join(" · ");
  EK.tabs();
  EK.board.init(D);
  if (D.runs && D.runs.length) {
    EK.detail.init(D);
    EK.explorer.init(D);
    EK.figures.init(D);
  } else {
    document.getElementById("query-count").textContent = "No run could be ranked, so there are no queries to explore.";
  }
  EK.about(D);
  window.evalkitPage = { ready: true, buildMs: performance.now() - t0, queries: M.n_queries, runs: D.board.rows.length };
  document.body.dataset.ready = "true";
};

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", EK.start);
else EK.start();
