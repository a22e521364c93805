/* evalkit page: the leaderboard (sortable by any column, marks against the baseline, rank intervals, letters, tied groups, bounds). */
"use strict";

EK.board = {
  sort: { key: "rank", dir: 1 },

  init(D) {
    this.D = D;
    this.table = document.getElementById("board-table");
    this.bounds = document.getElementById("show-bounds");
    this.bounds.addEventListener("change", () => this.render());
    this.best = D.board.columns.map((_, c) => {
      let best = -Infinity;
      for (const row of D.board.rows) if (Number.isFinite(row.values[c]) && row.values[c] > best) best = row.values[c];
      return best;
    });
    this.render();
    this.legend();
    this.notRanked();
  },

  keyOf(row, key) {
    if (key === "rank") return row.rank;
    if (key === "name") return row.name.toLowerCase();
    if (key === "file") return row.file.toLowerCase();
    if (key === "next") return row.vs_next ? row.vs_next.p_adjusted : Infinity;
    if (key === "ranks") return row.rank_interval ? row.rank_interval[0] * 100000 + row.rank_interval[1] : row.rank;
    if (key === "letters") return row.letters;
    const value = row.values[key];
    return Number.isFinite(value) ? value : -Infinity;
  },

  order() {
    const { key, dir } = this.sort;
    const rows = this.D.board.rows.map((row, i) => ({ row, i }));
    rows.sort((x, y) => {
      const a = this.keyOf(x.row, key), b = this.keyOf(y.row, key);
      if (a < b) return -dir;
      if (a > b) return dir;
      return x.i - y.i;
    });
    return rows.map((x) => x.row);
  },

  header(label, key, className, title) {
    const active = this.sort.key === key;
    const th = EK.el("th", { class: "sortable " + (className || ""), "data-col": String(key), scope: "col",
      "aria-sort": active ? (this.sort.dir > 0 ? "ascending" : "descending") : "none",
      onclick: () => this.sortBy(key) }, label);
    if (title) EK.tip(th, title);
    return th;
  },

  sortBy(key) {
    if (this.sort.key === key) this.sort.dir = -this.sort.dir;
    else this.sort = { key, dir: typeof key === "number" ? -1 : 1 };
    this.render();
  },

  render() {
    const D = this.D, board = D.board, showBounds = this.bounds.checked, leaderboard = D.meta.kind === "leaderboard";
    const pairs = board.all_pairs;
    const heads = [this.header("#", "rank", "", "official rank (equal scores share a rank)")];
    if (pairs) {
      heads.push(this.header("ranks", "ranks", "", "rank interval: the ranks not ruled out by the all-pairs comparison (" +
        pairs.procedure + ", alpha " + pairs.alpha + "): [1 + runs significantly better, k - runs significantly worse]"));
      heads.push(this.header("letters", "letters", "text", "runs sharing a letter are not significantly different"));
    }
    heads.push(this.header(leaderboard ? "run (file)" : "run", "name", "text", "click to sort by name"));
    board.columns.forEach((col, c) => {
      heads.push(this.header(col.official ? col.label + " (official)" : col.label, c, col.official ? "official" : "",
        (col.official ? "official score; " : "") + "click to sort" + (col.tested ? "" : "; no significance test on this column")));
    });
    heads.push(this.header("vs next rank", "next", "text", board.legend.adjacent || "no adjacent tests"));
    const body = this.order().map((row) => {
      const cells = [EK.el("td", {}, String(row.rank))];
      if (pairs) cells.push(this.ranksCell(row), EK.el("td", { class: "letters text" }, row.letters));
      const nameCell = EK.el("td", { class: "name" }, EK.el("span", { class: "run-name" }, row.name),
        leaderboard ? EK.el("div", { class: "file" }, row.file) : null);
      cells.push(nameCell);
      board.columns.forEach((col, c) => cells.push(this.cell(row, col, c, showBounds)));
      cells.push(this.nextCell(row));
      const shade = pairs ? (row.tied_with_top ? "top-group" : "") : (row.group % 2 ? "group-odd" : "");
      const tr = EK.el("tr", { class: [shade, row.baseline ? "baseline" : ""].join(" ").trim(),
        "data-run": row.name, "data-group": String(row.group) }, cells);
      EK.tip(nameCell, () => `${row.file}\n` + (pairs ? (row.tied_with_top ? "tied with #1" : "significantly below #1") : `tied group ${row.group + 1}`) +
        (row.unjudged_added ? `\n${row.unjudged_added} retrieved (query, document) pairs are unjudged` : ""));
      return tr;
    });
    EK.clear(this.table).append(EK.el("thead", {}, EK.el("tr", {}, heads)), EK.el("tbody", {}, body));
  },

  cell(row, col, c, showBounds) {
    const value = row.values[c], upper = row.upper[c], mark = row.marks[c];
    const best = Number.isFinite(value) && Math.abs(value - this.best[c]) <= 1e-12;
    const td = EK.el("td", { class: best ? "best" : "", "data-value": String(value) },
      EK.num(value));
    if (mark) td.append(" ", EK.el("span", { class: mark === "▲" ? "mark-better" : "mark-worse" }, mark));
    if (showBounds) td.append(EK.el("div", { class: "bound" }, Number.isFinite(upper) ? "↑ " + EK.num(upper) : "↑ n/a"));
    EK.tip(td, () => {
      let text = `${row.name} · ${col.label} = ${EK.num(value)}`;
      text += Number.isFinite(upper) ? `\nunjudged as relevant: ${EK.num(upper)}` : "\nno bound (not a per-query metric)";
      if (mark) text += `\n${mark} significantly ${mark === "▲" ? "higher" : "lower"} than the baseline ${this.D.meta.baseline}`;
      return text;
    });
    return td;
  },

  ranksCell(row) {
    const [low, high] = row.rank_interval, [blow, bhigh] = row.bootstrap_rank_interval;
    const text = low === high ? String(low) : `${low}-${high}`;
    const td = EK.el("td", { class: "ranks" + (low === high ? " exact" : "") }, text);
    EK.tip(td, `${row.name}: rank ${row.rank}; the ranks it may really hold: ${text} (all-pairs comparison)\n` +
      `bootstrap rank interval: ${blow === bhigh ? blow : blow + "-" + bhigh}` + (row.tied_with_top ? "\ntied with #1" : "") +
      (row.letters ? `\nletters ${row.letters}: not significantly different from the runs that share one` : ""));
    return td;
  },

  nextCell(row) {
    const t = row.vs_next;
    if (!t) return EK.el("td", { class: "next" }, "");
    const corrected = this.D.board.rows.length > 2;
    const text = `${t.significant ? ">" : "≈"} p ${EK.pvalue(t.p, 3)}` + (corrected ? ` · adj. ${EK.pvalue(t.p_adjusted, 3)}` : "");
    const td = EK.el("td", { class: "next " + (t.significant ? "apart" : "tied") }, text);
    EK.tip(td, `vs ${t.next}: mean difference ${EK.signed(t.difference)} on ${t.n} queries; ` +
      (t.significant ? "significantly better than the next rank" : "statistically tied with the next rank"));
    return td;
  },

  legend() {
    const L = this.D.board.legend, box = document.getElementById("board-legend");
    const lines = ["Best value per column in bold.", ...(L.all_pairs || []), L.baseline, L.adjacent, L.groups, L.bounds, ...this.D.board.notes];
    EK.clear(box).append(...lines.filter(Boolean).map((line) => EK.el("p", {}, line)));
  },

  notRanked() {
    const box = EK.clear(document.getElementById("not-ranked")), B = this.D.board;
    if (!B.not_ranked.length) box.append(EK.el("p", { class: "muted" }, this.D.meta.kind === "leaderboard" ? "Every file was ranked." : "Every run was ranked."));
    else {
      const rows = B.not_ranked.map((r) => EK.el("tr", {}, EK.el("td", { class: "text" }, r.file), EK.el("td", { class: "text" }, r.problem),
        EK.el("td", { class: "text" }, r.reason)));
      box.append(EK.el("table", { class: "data", id: "not-ranked-table" },
        EK.el("thead", {}, EK.el("tr", {}, EK.el("th", { class: "text" }, "file"), EK.el("th", { class: "text" }, "problem"),
          EK.el("th", { class: "text" }, "reason"))), EK.el("tbody", {}, rows)));
    }
    if (B.skipped.length) box.append(EK.el("p", { class: "muted" }, "Skipped (not run files): " + B.skipped.join(", ")));
  },
};
