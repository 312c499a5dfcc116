// a2a-capture view: the exchange list, filters, the detail pane and the figures of a session.
// Everything that comes from a capture is put in as text (textContent), never as markup; the
// figures are the report's own SVG, drawn by the server (escaped there) and parsed as SVG.
"use strict";
(function () {
  const token = new URLSearchParams(location.search).get("token") || "";
  const $ = (id) => document.getElementById(id);
  const ROW = () => (matchMedia("(max-width: 700px)").matches ? 52 : 28);
  let C = {};                // column name -> position in a row
  let rows = [];             // every row, by index
  let shown = [];            // indices of the rows the filters let through
  let selected = -1;         // a row index
  let origin = null;         // the session's first start, for relative times
  let whole = false;
  let bodyHits = null;       // row indices the server found the search in (null: no body search)
  let version = 0;
  let stems = [];            // each file's name without folder and suffix
  const facets = { agent: new Set(), op: new Set(), rule: new Set() };

  function api(path) {
    return fetch(path, { headers: { "X-View-Token": token } }).then((r) => {
      if (!r.ok) throw new Error(r.status + " " + r.statusText);
      return r;
    });
  }
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  // -- data -------------------------------------------------------------------------------------
  function take(list, live) {
    let added = false;
    const now = Date.now() / 1000;
    for (const r of list) {
      // a row pushed while recording: how long after its exchange ended it reached the page (bench/proxy.py)
      if (live && r[C.index] >= rows.length && r[C.started] !== null && r[C.duration] !== null) {
        performance.mark("row-lag", { detail: now - r[C.started] - r[C.duration] });
      }
      const i = r[C.index];
      if (i >= rows.length) added = true;
      rows[i] = r;
      if (r[C.started] !== null && (origin === null || r[C.started] < origin)) origin = r[C.started];
      facet("agent", r[C.agent]); facet("op", r[C.operation]);
      for (const f of r[C.findings]) facet("rule", f[0]);
    }
    return added;
  }
  function facet(name, value) {
    if (!value || facets[name].has(value)) return;
    facets[name].add(value);
    const select = $({ agent: "f-agent", op: "f-op", rule: "f-rule" }[name]);
    const option = el("option", "", value); option.value = value;
    select.appendChild(option);
    const wanted = filterState()[name];
    if (wanted === value) select.value = value;
  }
  async function load() {
    const meta = await (await api("/api/meta")).json();
    meta.columns.forEach((name, i) => (C[name] = i));
    $("files").textContent = meta.files.join(", ");
    stems = meta.files.map((f) => f.split("/").pop().replace(/\.[^.]*$/, ""));
    document.body.classList.toggle("one-file", meta.files.length === 1);
    readHash();
    let from = 0, first = true;
    for (;;) {
      const page = await (await api("/api/rows?from=" + from)).json();
      if (first) { version = page.version; first = false; }
      take(page.rows);
      from += page.rows.length;
      refilter();
      if (from >= page.total) break;
    }
    const wanted = parseInt(new URLSearchParams(location.hash.slice(1)).get("x"), 10);
    if (wanted >= 0 && wanted < rows.length) select(wanted, true);
    live();
  }
  function live() {
    const events = new EventSource("/api/events?token=" + encodeURIComponent(token) + "&since=" + version);
    events.onmessage = (message) => {
      const payload = JSON.parse(message.data);
      version = payload.version;
      take(payload.rows, true);
      refilter();
      if (selected >= 0 && payload.rows.some((r) => r[C.index] === selected)) openDetail(selected, false);
    };
  }

  // -- filters (kept in the address's #fragment, so a view can be shared) ------------------------
  function filterState() {
    return { agent: $("f-agent").value, op: $("f-op").value, rule: $("f-rule").value,
      outcome: $("f-outcome").value, task: $("f-task").value.trim(), q: $("f-q").value.trim() };
  }
  function readHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    const set = (id, key) => { if (h.has(key)) { const node = $(id); if (node.tagName === "SELECT" && ![...node.options].some((o) => o.value === h.get(key))) { const o = el("option", "", h.get(key)); o.value = h.get(key); node.appendChild(o); } node.value = h.get(key); } };
    set("f-agent", "agent"); set("f-op", "op"); set("f-rule", "rule"); set("f-outcome", "outcome");
    set("f-task", "task"); set("f-q", "q");
    if (h.get("q")) searchBodies(h.get("q"));
  }
  function writeHash() {
    const f = filterState(), h = new URLSearchParams();
    for (const [k, v] of Object.entries(f)) if (v) h.set(k, v);
    if (selected >= 0) h.set("x", selected);
    history.replaceState(null, "", location.pathname + location.search + (h.toString() ? "#" + h : ""));
  }
  function passes(r, f, q) {
    if (f.agent && r[C.agent] !== f.agent) return false;
    if (f.op && r[C.operation] !== f.op) return false;
    if (f.task && !(r[C.task].includes(f.task) || r[C.context].includes(f.task))) return false;
    const found = r[C.findings];
    if (f.rule && !found.some((x) => x[0] === f.rule)) return false;
    if (f.outcome === "flagged" && !found.length) return false;
    if (f.outcome === "failed" && !r[C.failed]) return false;
    if (["wasted", "fragile", "advice"].includes(f.outcome) && !found.some((x) => x[2] === f.outcome)) return false;
    if (q) {
      const inTitle = r[C.title].toLowerCase().includes(q) || r[C.target].toLowerCase().includes(q);
      if (!inTitle && !(bodyHits && bodyHits.has(r[C.index]))) return false;
    }
    return true;
  }
  function refilter() {
    const began = performance.now();  // "filter" entries: how long a filter takes (bench/view.py reads them)
    const f = filterState(), q = f.q.toLowerCase();
    shown = [];
    for (let i = 0; i < rows.length; i++) if (rows[i] && passes(rows[i], f, q)) shown.push(i);
    $("spacer").style.height = shown.length * ROW() + "px";
    summarize(f);
    render(true);
    performance.measure("filter", { start: began, detail: { rows: rows.length, shown: shown.length } });
    if (!firstRows && shown.length) { firstRows = true; performance.mark("first-rows"); }
  }
  let firstRows = false;
  function summarize(f) {
    let wasted = 0, fragile = 0, findings = 0, failed = 0;
    for (const i of shown) {
      const found = rows[i][C.findings];
      findings += found.length;
      if (found.some((x) => x[2] === "wasted")) wasted++;
      else if (rows[i][C.worked] && found.some((x) => x[2] === "fragile")) fragile++;  // a failed call worked for nothing
      if (rows[i][C.failed]) failed++;
    }
    const filtered = Object.values(f).some(Boolean) ? ` (filtered from ${rows.length})` : "";
    $("summary").textContent = `${shown.length} exchanges${filtered}: ${wasted} wasted round trips, ` +
      `${fragile} that worked only because the agent was lenient, ${failed} failed calls, ${findings} findings`;
  }
  let searchTimer = 0;
  function searchBodies(q) {
    clearTimeout(searchTimer);
    if (q.length < 2) { bodyHits = null; refilter(); return; }
    searchTimer = setTimeout(async () => {
      const found = await (await api("/api/search?q=" + encodeURIComponent(q))).json();
      if (found.q === $("f-q").value.trim()) { bodyHits = new Set(found.rows); refilter(); }
    }, 200);
  }

  // -- the list, virtualized: only the rows in view are in the page ------------------------------
  let drawn = "";
  function render(force) {
    const list = $("list"), height = ROW();
    const first = Math.max(0, Math.floor(list.scrollTop / height) - 10);
    const last = Math.min(shown.length, Math.ceil((list.scrollTop + list.clientHeight) / height) + 10);
    const key = first + ":" + last + ":" + selected;
    if (!force && key === drawn) return;
    drawn = key;
    const spacer = $("spacer"), fragment = document.createDocumentFragment();
    for (let p = first; p < last; p++) fragment.appendChild(rowNode(rows[shown[p]], p * height));
    spacer.replaceChildren(fragment);
  }
  function rowNode(r, top) {
    const node = el("div", "row"), found = r[C.findings];
    node.style.top = top + "px";
    node.setAttribute("role", "option");
    node.dataset.index = r[C.index];
    if (r[C.index] === selected) { node.classList.add("sel"); node.setAttribute("aria-selected", "true"); }
    if (r[C.failed]) node.classList.add("failed");
    if (found.length) node.classList.add("flagged");
    const started = r[C.started], duration = r[C.duration];
    node.append(
      el("span", "c-n", r[C.label]),
      el("span", "c-file", stems[r[C.file]] || ""),
      el("span", "c-t", started !== null && origin !== null ? "+" + (started - origin).toFixed(3) + " s" : ""),
      el("span", "c-agent", r[C.agent]),
      el("span", "c-op", r[C.operation] || r[C.method] + " " + r[C.target]),
      el("span", "c-task", r[C.task] ? r[C.task].slice(0, 8) : ""),
      el("span", "c-status" + (r[C.failed] ? "" : " ok"), r[C.outcome]),
      el("span", "c-frames", r[C.frames] || ""),
      el("span", "c-dur", duration !== null ? (duration * 1000).toFixed(1) : ""));
    const badges = el("span", "c-badges");
    for (const f of found) {
      const badge = el("span", "badge " + f[2], ({ wasted: "✕ ", fragile: "! ", advice: "i " }[f[2]] || "") + f[0]);
      badge.title = `${f[2]}: ${f[3]}`;
      badges.appendChild(badge);
    }
    node.appendChild(badges);
    node.title = r[C.title];
    return node;
  }

  // -- selection and the detail pane -------------------------------------------------------------
  function select(index, open) {
    selected = index;
    const position = shown.indexOf(index);
    if (position >= 0) {
      const list = $("list"), height = ROW(), top = position * height;
      if (top < list.scrollTop) list.scrollTop = top;
      else if (top + height > list.scrollTop + list.clientHeight) list.scrollTop = top + height - list.clientHeight;
    }
    render(true);
    writeHash();
    if (open || $("side").classList.contains("open") && !$("detail-pane").hidden) openDetail(index, true);
  }
  function showTab(which) {
    const detail = which === "detail";
    $("detail-pane").hidden = !detail;
    $("figures").hidden = detail;
    $("t-detail").setAttribute("aria-selected", String(detail));
    $("g-sequence").setAttribute("aria-selected", String(which === "diagram"));
    $("g-timeline").setAttribute("aria-selected", String(which === "timeline"));
    $("side").classList.add("open");
  }
  async function openDetail(index, scrollTop) {
    const pane = $("detail-pane");
    showTab("detail");
    const detail = await (await api("/api/exchange/" + index + (whole ? "?whole=1" : ""))).json();
    if (index !== selected) return;
    const r = rows[index];
    $("d-title").textContent = `${detail.file} · ${r[C.label]} · ${r[C.title] || r[C.operation]}`;
    $("d-whole").setAttribute("aria-pressed", String(whole));
    $("d-listing").textContent = detail.listing || detail.error || "";
    $("d-note").textContent = detail.note || "";
    const findings = $("d-findings");
    findings.replaceChildren();
    for (const f of detail.row.findings) {
      const box = el("div", "finding " + f.outcome);
      box.append(el("p", "", `${f.outcome} · ${f.rule} (${f.severity}) · ${f.title}`), el("p", "", f.message));
      if (f.fix) box.appendChild(el("p", "fix", "Fix: " + f.fix));
      if (f.spec) box.appendChild(el("p", "muted", "Spec: " + f.spec));
      if (f.related.length) {
        const p = el("p", "", "Already answered by ");
        f.related.forEach((label, n) => {
          const target = detail.related[label];
          if (n) p.append(", ");
          if (target === undefined) { p.append("exchange " + label); return; }
          const link = el("button", "link", "exchange " + label);
          link.type = "button";
          link.addEventListener("click", () => select(target, true));
          p.appendChild(link);
        });
        box.appendChild(p);
      }
      findings.appendChild(box);
    }
    const card = $("d-card");
    card.replaceChildren();
    if (detail.card) {
      const c = detail.card, box = el("details", "card");
      const caps = ["streaming", "push_notifications", "extended_card"]
        .map((k) => `${k.replace("_", " ")}: ${c[k] ? "yes" : "no"}`).join(", ");
      box.appendChild(el("summary", "", `Card held: ${c.name || c.origin} (${caps})`));
      const how = el("p", "muted");
      how.append("fetched by ");
      if (c.fetched_row !== null) {
        const link = el("button", "link", "exchange " + c.fetched_by);
        link.type = "button";
        link.addEventListener("click", () => select(c.fetched_row, true));
        how.appendChild(link);
      } else how.append("exchange " + c.fetched_by);
      box.appendChild(how);
      const table = el("table");
      for (const [binding, url, v] of c.interfaces) {
        const tr = el("tr");
        tr.append(el("td", "", binding), el("td", "", url), el("td", "", v));
        table.appendChild(tr);
      }
      for (const [name, said] of Object.entries(c.stated)) {
        const tr = el("tr");
        tr.append(el("td", "", name), el("td", "", said));
        table.appendChild(tr);
      }
      box.appendChild(table);
      card.appendChild(box);
    }
    const frames = $("d-frames");
    frames.replaceChildren();
    if (detail.frames && detail.frames.length) {
      frames.appendChild(el("h3", "", `SSE frames (${detail.frames.length})`));
      const table = el("table"), head = el("tr");
      for (const name of ["#", "arrived", "kind", "state", "data"]) head.appendChild(el("th", "", name));
      table.appendChild(head);
      for (const f of detail.frames) {
        const tr = el("tr");
        tr.append(el("td", "", f.n), el("td", "", f.at !== null ? "+" + (f.at * 1000).toFixed(1) + " ms" : ""),
          el("td", "", f.kind), el("td", "", f.state), el("td", "", f.data));
        table.appendChild(tr);
      }
      frames.appendChild(table);
    }
    if (scrollTop) pane.scrollTop = 0;
  }
  function closeDetail() {
    $("side").classList.remove("open");
    $("list").focus();
  }

  // -- figures: the report's own, for the filtered rows ------------------------------------------
  async function figure(kind) {
    showTab(kind);
    const picked = shown.slice(0, 80);
    const response = await api(`/api/${kind}?rows=` + picked.join(","));
    const text = await response.text();
    const doc = new DOMParser().parseFromString(text, "image/svg+xml");
    const svgNode = doc.documentElement;
    const target = $("figure");
    target.replaceChildren();
    if (svgNode && svgNode.nodeName === "svg") target.appendChild(document.importNode(svgNode, true));
    $("g-note").textContent = shown.length > picked.length
      ? `the first ${picked.length} of ${shown.length} filtered exchanges` : `${shown.length} exchanges`;
  }
  $("figure").addEventListener("click", (event) => {
    const link = event.target.closest("a");
    if (!link) return;
    event.preventDefault();
    const href = link.getAttribute("href") || link.getAttribute("xlink:href") || "";
    const index = parseInt(href.replace(/^#x/, ""), 10);
    if (index >= 0) select(index, true);
  });

  // -- wiring --------------------------------------------------------------------------------------
  $("list").addEventListener("scroll", () => render(false), { passive: true });
  $("list").addEventListener("click", (event) => {
    const node = event.target.closest(".row");
    if (node) select(parseInt(node.dataset.index, 10), true);
  });
  for (const id of ["f-agent", "f-op", "f-rule", "f-outcome"]) $(id).addEventListener("change", () => { refilter(); writeHash(); });
  $("f-task").addEventListener("input", () => { refilter(); writeHash(); });
  $("f-q").addEventListener("input", () => { searchBodies($("f-q").value.trim()); refilter(); writeHash(); });
  $("filters").addEventListener("submit", (event) => event.preventDefault());
  $("f-clear").addEventListener("click", () => {
    for (const id of ["f-agent", "f-op", "f-rule", "f-outcome", "f-task", "f-q"]) $(id).value = "";
    bodyHits = null; refilter(); writeHash();
  });
  $("d-close").addEventListener("click", closeDetail);
  $("t-detail").addEventListener("click", () => (selected >= 0 ? openDetail(selected, false) : showTab("detail")));
  $("d-whole").addEventListener("click", () => { whole = !whole; if (selected >= 0) openDetail(selected, false); });
  $("g-sequence").addEventListener("click", () => figure("diagram"));
  $("g-timeline").addEventListener("click", () => figure("timeline"));
  window.addEventListener("resize", () => refilter());
  document.addEventListener("keydown", (event) => {
    const typing = ["INPUT", "SELECT", "TEXTAREA"].includes(document.activeElement.tagName);
    if (event.key === "Escape") {
      if (typing) { document.activeElement.blur(); $("list").focus(); }
      else if ($("side").classList.contains("open")) closeDetail();
      return;
    }
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    const position = shown.indexOf(selected);
    if (event.key === "j" || event.key === "ArrowDown") {
      event.preventDefault();
      if (shown.length) select(shown[Math.min(position + 1, shown.length - 1)], false);
    } else if (event.key === "k" || event.key === "ArrowUp") {
      event.preventDefault();
      if (shown.length) select(shown[Math.max(position - 1, 0)], false);
    } else if (event.key === "Enter") {
      if (selected >= 0) openDetail(selected, true);
    } else if (event.key === "/") {
      event.preventDefault();
      $("f-q").focus();
    }
  });
  load().catch((error) => { $("summary").textContent = "Could not read the session: " + error.message; });
})();
