/* evalkit page: the per-query explorer (two runs side by side, filters, orders, search, pages of 50 queries). */
"use strict";

EK.explorer = {
  init(D) {
    this.D = D;
    const names = D.runs.map((r) => r.name);
    const pair = D.meta.pair || [names[0], names[0]];
    EK.state.a = Math.max(0, names.indexOf(pair[0]));
    EK.state.b = Math.max(0, names.indexOf(pair[1]));
    EK.state.metric = D.meta.metric;
    this.lowerIds = D.queries.ids.map((q) => q.toLowerCase());
    this.lowerTexts = D.queries.text ? D.queries.text.map((t) => t.toLowerCase()) : null;
    this.byId = new Map(D.queries.ids.map((q, i) => [q, i]));
    this.select("run-a", names, EK.state.a, (v) => { EK.state.a = +v; EK.state.page = 0; EK.changed("pair"); });
    this.select("run-b", names, EK.state.b, (v) => { EK.state.b = +v; EK.state.page = 0; EK.changed("pair"); });
    this.select("metric", D.meta.metrics, D.meta.metrics.indexOf(EK.state.metric), (v) => { EK.state.metric = D.meta.metrics[+v]; EK.changed("metric"); });
    const k = D.meta.k;
    this.filters = [
      ["all", "all queries"], ["bwins", "B better than A"], ["awins", "A better than B"], ["ties", "A and B equal"],
      ["norel_a", `no relevant in A's top ${k}`], ["norel_b", `no relevant in B's top ${k}`], ["norel_any", `no relevant in any run's top ${k}`],
      ["unjudged_a", `A's top ${k} not fully judged`], ["open_a", "A's value would change with unjudged as relevant"],
    ];
    this.orders = [
      ["gold", "gold order"], ["diff_desc", "B − A, largest first"], ["diff_asc", "B − A, smallest first"],
      ["absdiff", "|B − A|, largest first"], ["rbo", "RBO(A, B), lowest first"], ["a_asc", "A's value, lowest first"],
      ["first_a", "A's first relevant rank, deepest first"],
    ];
    this.select("filter", this.filters.map((f) => f[1]), 0, (v) => { EK.state.filter = this.filters[+v][0]; EK.state.page = 0; this.render(); });
    this.select("order", this.orders.map((o) => o[1]), 0, (v) => { EK.state.order = this.orders[+v][0]; EK.state.page = 0; this.render(); });
    const search = document.getElementById("query-search");
    let timer = null;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => { EK.state.search = search.value.trim(); EK.state.page = 0; this.render(true); }, 120);
    });
    search.addEventListener("keydown", (e) => { if (e.key === "Enter") { clearTimeout(timer); EK.state.search = search.value.trim(); EK.state.page = 0; this.render(true); } });
    EK.onChange(() => this.render());
    this.render();
  },

  select(id, labels, chosen, onchange) {
    const node = EK.clear(document.getElementById(id));
    labels.forEach((label, i) => node.append(EK.el("option", { value: String(i), selected: i === chosen }, label)));
    node.addEventListener("change", () => onchange(node.value));
  },

  values(run, metric) { return this.D.runs[run].values[metric || EK.state.metric]; },

  rbo(a, b) {
    if (a === b) return null;
    for (const [i, j, values] of this.D.rbo.pairs) if ((i === a && j === b) || (i === b && j === a)) return values;
    return null;
  },

  matches() {
    const D = this.D, s = EK.state, n = D.queries.ids.length, k = D.meta.k;
    const A = this.values(s.a), B = this.values(s.b), needle = s.search.toLowerCase();
    const firstA = D.runs[s.a].first_rel, firstB = D.runs[s.b].first_rel;
    const judgedA = D.runs[s.a].values["Judged@" + k], upperA = D.runs[s.a].upper[s.metric];
    const keep = [];
    for (let q = 0; q < n; q++) {
      if (needle && !this.lowerIds[q].includes(needle) && !(this.lowerTexts && this.lowerTexts[q].includes(needle))) continue;
      switch (s.filter) {
        case "bwins": if (!(B[q] > A[q])) continue; break;
        case "awins": if (!(A[q] > B[q])) continue; break;
        case "ties": if (A[q] !== B[q]) continue; break;
        case "norel_a": if (firstA[q] <= k) continue; break;
        case "norel_b": if (firstB[q] <= k) continue; break;
        case "norel_any": if (D.runs.some((r) => r.first_rel[q] <= k)) continue; break;
        case "unjudged_a": if (!(judgedA && judgedA[q] < 1)) continue; break;
        case "open_a": if (!(upperA && Math.abs(upperA[q] - A[q]) > 1e-9)) continue; break;
        default: break;
      }
      keep.push(q);
    }
    this.sortMatches(keep, A, B, firstA);
    if (needle && this.byId.has(s.search)) {  // an exact query id comes first
      const exact = this.byId.get(s.search), at = keep.indexOf(exact);
      if (at > 0) { keep.splice(at, 1); keep.unshift(exact); }
    }
    return keep;
  },

  sortMatches(keep, A, B, firstA) {
    const s = EK.state, rbo = this.rbo(s.a, s.b);
    const finite = (x, fallback) => (Number.isNaN(x) ? fallback : x);
    let key = null;
    if (s.order === "diff_desc") key = (q) => -finite(B[q] - A[q], -Infinity);
    else if (s.order === "diff_asc") key = (q) => finite(B[q] - A[q], Infinity);
    else if (s.order === "absdiff") key = (q) => -finite(Math.abs(B[q] - A[q]), -Infinity);
    else if (s.order === "rbo" && rbo) key = (q) => finite(rbo[q], Infinity);
    else if (s.order === "a_asc") key = (q) => finite(A[q], Infinity);
    else if (s.order === "first_a") key = (q) => -firstA[q];
    if (!key) return;
    const keys = new Float64Array(this.D.queries.ids.length);
    for (const q of keep) keys[q] = key(q);
    keep.sort((x, y) => keys[x] - keys[y] || x - y);
  },

  render(fromSearch) {
    const D = this.D, s = EK.state, k = D.meta.k;
    const keep = this.matches();
    this.keep = keep;
    const pages = Math.max(1, Math.ceil(keep.length / s.pageSize));
    s.page = Math.min(s.page, pages - 1);
    const rows = keep.slice(s.page * s.pageSize, (s.page + 1) * s.pageSize);
    const runA = D.runs[s.a], runB = D.runs[s.b], A = this.values(s.a), B = this.values(s.b), rbo = this.rbo(s.a, s.b);
    const judged = "Judged@" + k;
    const heads = ["query", "text", `A: ${s.metric}`, `B: ${s.metric}`, "B − A", "1st rel. A", "1st rel. B", `RBO(A,B) p=${D.rbo.p}`,
      `${judged} A`, `${judged} B`];
    const thead = EK.el("thead", {}, EK.el("tr", {}, heads.map((h, i) => EK.el("th", { class: i === 1 ? "text" : "" }, h))));
    const rank = (r) => (Number.isFinite(r) ? String(r) : "none");
    const body = rows.map((q) => {
      const text = D.queries.text ? D.queries.text[q] : "";
      const diff = B[q] - A[q];
      const tr = EK.el("tr", { class: "clickable" + (q === s.selected ? " selected" : ""), "data-query": D.queries.ids[q],
        onclick: () => this.choose(q) },
        EK.el("td", { class: "name" }, D.queries.ids[q]),
        EK.el("td", { class: "qtext" }, text.length > 160 ? text.slice(0, 159) + "…" : text),
        EK.el("td", {}, EK.num(A[q])), EK.el("td", {}, EK.num(B[q])),
        EK.el("td", { class: diff > 0 ? "mark-better" : diff < 0 ? "mark-worse" : "" }, EK.signed(diff)),
        EK.el("td", {}, rank(runA.first_rel[q])), EK.el("td", {}, rank(runB.first_rel[q])),
        EK.el("td", {}, rbo ? EK.num(rbo[q], 3) : "–"),
        EK.el("td", {}, EK.num(runA.values[judged] ? runA.values[judged][q] : NaN, 2)),
        EK.el("td", {}, EK.num(runB.values[judged] ? runB.values[judged][q] : NaN, 2)));
      return tr;
    });
    EK.clear(document.getElementById("query-table")).append(thead, EK.el("tbody", {}, body));
    document.getElementById("query-count").textContent =
      `${keep.length.toLocaleString("en")} of ${D.queries.ids.length.toLocaleString("en")} queries · A = ${runA.name} · B = ${runB.name}` +
      (s.order === "rbo" && !rbo ? " · RBO is not embedded for this pair (only pairs with the baseline)" : "");
    this.pager(pages);
    if (fromSearch && s.search && this.byId.has(s.search)) this.choose(this.byId.get(s.search));
    else if (s.selected >= 0) EK.detail.show(s.selected);
  },

  pager(pages) {
    const s = EK.state, box = EK.clear(document.getElementById("pager"));
    const go = (page) => { s.page = Math.max(0, Math.min(pages - 1, page)); this.render(); };
    box.append(
      EK.el("button", { type: "button", disabled: s.page === 0, onclick: () => go(0) }, "« first"),
      EK.el("button", { type: "button", disabled: s.page === 0, onclick: () => go(s.page - 1) }, "‹ previous"),
      EK.el("span", { class: "muted" }, `page ${s.page + 1} of ${pages}`),
      EK.el("button", { type: "button", disabled: s.page >= pages - 1, onclick: () => go(s.page + 1) }, "next ›"),
      EK.el("button", { type: "button", disabled: s.page >= pages - 1, onclick: () => go(pages - 1) }, "last »"));
  },

  choose(q) {
    EK.state.selected = q;
    for (const tr of document.querySelectorAll("#query-table tr.selected")) tr.classList.remove("selected");
    const row = document.querySelector(`#query-table tr[data-query="${CSS.escape(this.D.queries.ids[q])}"]`);
    if (row) row.classList.add("selected");
    EK.detail.show(q);
    const box = document.getElementById("query-detail");
    if (box.scrollIntoView) box.scrollIntoView({ block: "start" });
  },
};
