/* evalkit page: one query in detail (gold documents, every run's values and bounds, rankings side by side). */
"use strict";

EK.detail = {
  allRuns: false,
  runsOpen: false,

  init(D) { this.D = D; },

  docText(d) {
    const docs = this.D.docs, title = docs.title ? docs.title[d] : "", text = docs.text ? docs.text[d] : "";
    return { title: title || "", text: text || "" };
  },

  gradeClass(grade, repeat) {
    if (repeat) return ["repeat", "↺", "repeated document: counts once, at its first position"];
    if (Number.isNaN(grade)) return ["unjudged", "?", "unjudged (counted non-relevant)"];
    if (grade >= this.D.meta.relevance_level) return ["rel", "✓", `relevant (grade ${grade})`];
    return ["nonrel", "✗", `judged non-relevant (grade ${grade})`];
  },

  show(q) {
    const D = this.D, s = EK.state, box = document.getElementById("query-detail");
    box.hidden = false;
    const id = D.queries.ids[q], text = D.queries.text ? D.queries.text[q] : "";
    this.terms = EK.terms(text);
    const close = EK.el("button", { type: "button", class: "close", title: "close", onclick: () => { box.hidden = true; EK.state.selected = -1; } }, "×");
    const head = EK.el("div", { class: "qtitle" }, close, EK.el("strong", {}, `Query ${id}`),
      D.queries.length ? EK.el("span", { class: "muted" }, ` · ${D.queries.length[q]} tokens`) : null);
    EK.clear(box).append(head, text ? EK.el("p", { id: "query-text" }, text) : EK.el("p", { class: "muted" }, "no query text (the gold has none; pass --queries)"));
    box.append(EK.el("h3", {}, "Gold"), this.gold(q));
    const many = D.runs.length > 6;  // many runs: the table folds away, so the rankings stay in view
    box.append(EK.el("details", { id: "query-runs-box", open: !many || this.runsOpen,
      ontoggle: (e) => { this.runsOpen = e.target.open; } },
    EK.el("summary", {}, EK.el("strong", {}, `All ${D.runs.length} runs on this query`),
      EK.el("span", { class: "muted" }, ` (${EK.state.metric}, unjudged as relevant, first relevant rank, Judged@${D.meta.k}, RBO vs A)`)),
    this.values(q)));
    const toggle = EK.el("input", { type: "checkbox", id: "all-runs", checked: this.allRuns,
      onchange: (e) => { this.allRuns = e.target.checked; this.show(q); } });
    box.append(EK.el("h3", {}, `Top ${D.meta.k} side by side `), EK.el("label", { class: "muted" }, toggle, " all runs (otherwise A and B)"));
    const runs = this.allRuns ? D.runs.map((_, i) => i) : (s.a === s.b ? [s.a] : [s.a, s.b]);
    box.append(EK.el("div", { class: "rankings" }, runs.map((r) => this.ranking(q, r))));
  },

  gold(q) {
    const G = this.D.gold, start = G.offsets[q], end = G.offsets[q + 1];
    if (start === end) return EK.el("p", { class: "muted" }, "no judged documents for this query");
    const items = [];
    for (let i = start; i < end; i++) {
      const d = G.doc[i], grade = G.grade[i], [cls, flag] = this.gradeClass(grade, false);
      const where = this.D.runs.map((run) => {
        const rank = this.rankIn(run, q, d);
        return rank ? `${run.name}: ${rank}` : null;
      }).filter(Boolean);
      const doc = this.docText(d);
      items.push(EK.el("li", { class: "gold-doc " + cls, "data-doc": this.D.docs.ids[d] },
        EK.el("span", { class: "flag" }, flag), " ", EK.el("code", {}, this.D.docs.ids[d]), ` grade ${grade}`,
        G.label ? EK.el("span", { class: "gold-label" }, G.labels[G.label[i]]) : null,
        EK.el("span", { class: "muted" }, where.length ? ` · in the top ${this.D.meta.k} of ${where.join(", ")}` : ` · in no run's top ${this.D.meta.k}`),
        doc.title || doc.text ? EK.el("div", { class: "snippet" }, EK.highlight([doc.title, doc.text].filter(Boolean).join(" — "), this.terms)) : null));
    }
    return EK.el("ul", { class: "gold-list", id: "gold-docs" }, items);
  },

  rankIn(run, q, d) {
    const top = run.top;
    for (let i = top.offsets[q]; i < top.offsets[q + 1]; i++) if (top.doc[i] === d) return i - top.offsets[q] + 1;
    return 0;
  },

  values(q) {
    const D = this.D, s = EK.state, metric = s.metric, judged = "Judged@" + D.meta.k;
    const heads = ["run", metric, "unjudged as relevant", "1st relevant rank", judged, "RBO vs A"];
    const rows = D.runs.map((run, r) => {
      const rbo = EK.explorer.rbo(s.a, r);
      return EK.el("tr", { class: r === s.a || r === s.b ? "selected" : "" },
        EK.el("td", { class: "name" }, run.name + (r === s.a ? " (A)" : r === s.b ? " (B)" : "")),
        EK.el("td", {}, EK.num(run.values[metric][q])), EK.el("td", {}, EK.num(run.upper[metric] ? run.upper[metric][q] : NaN)),
        EK.el("td", {}, Number.isFinite(run.first_rel[q]) ? String(run.first_rel[q]) : "none"),
        EK.el("td", {}, EK.num(run.values[judged] ? run.values[judged][q] : NaN, 2)),
        EK.el("td", {}, r === s.a ? "1" : rbo ? EK.num(rbo[q], 3) : "–"));
    });
    return EK.el("div", { class: "scroll" }, EK.el("table", { class: "data", id: "query-runs" },
      EK.el("thead", {}, EK.el("tr", {}, heads.map((h, i) => EK.el("th", { class: i ? "" : "text" }, h)))), EK.el("tbody", {}, rows)));
  },

  ranking(q, r) {
    const D = this.D, run = D.runs[r], top = run.top, metric = EK.state.metric;
    const first = run.first_rel[q], upper = run.upper[metric] ? run.upper[metric][q] : NaN;
    const stats = `${metric} ${EK.num(run.values[metric][q])} (unjudged as relevant ${EK.num(upper)}) · first relevant: ` +
      (Number.isFinite(first) ? first : "none");
    const items = [];
    for (let i = top.offsets[q]; i < top.offsets[q + 1]; i++) items.push(this.doc(run, i, i - top.offsets[q] + 1));
    const label = r === EK.state.a ? "A: " : r === EK.state.b ? "B: " : "";
    return EK.el("div", { class: "ranking", "data-run": run.name },
      EK.el("h3", { style: `border-left: 4px solid ${EK.colour(r)}` }, label + run.name),
      EK.el("div", { class: "stats" }, stats),
      items.length ? EK.el("ol", {}, items) : EK.el("p", { class: "muted", style: "padding: 4px 10px" }, "no documents retrieved"));
  },

  doc(run, i, rank) {
    const top = run.top, d = top.doc[i], id = this.D.docs.ids[d];
    const [cls, flag, meaning] = this.gradeClass(top.grade[i], top.repeat[i] === 1);
    const doc = this.docText(d), full = [doc.title, doc.text].filter(Boolean).join(" — ");
    const snippet = full.length > 150 ? full.slice(0, 149) + "…" : full;
    const li = EK.el("li", { class: "doc " + cls, "data-doc": id },
      EK.el("span", { class: "rank" }, String(rank)), EK.el("span", { class: "flag" }, flag),
      EK.el("span", { class: "id" }, id, top.label ? EK.el("span", { class: "label" }, top.labels[top.label[i]]) : null),
      snippet ? EK.el("span", { class: "snippet" }, EK.highlight(snippet, this.terms)) : null);
    EK.tip(li, () => `${id}: ${meaning}` + (full ? `\n${full}` : "\n(no document text: pass --corpus)"));
    li.addEventListener("mouseenter", () => { for (const n of document.querySelectorAll(`.doc[data-doc="${CSS.escape(id)}"]`)) n.classList.add("same"); });
    li.addEventListener("mouseleave", () => { for (const n of document.querySelectorAll(".doc.same")) n.classList.remove("same"); });
    li.addEventListener("click", () => {
      const open = li.querySelector(".full");
      if (open) { open.remove(); return; }
      li.append(EK.el("div", { class: "full" }, full ? EK.highlight(full, this.terms) : "no document text (pass --corpus)"));
    });
    return li;
  },
};
