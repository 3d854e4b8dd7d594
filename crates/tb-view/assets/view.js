// tb view: the tasks grid, filters, keyboard navigation and live updates.
// Every text from a record is put in the page with textContent, never as HTML.
"use strict";

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

const SYMBOL = { pass: "\u2713", fail: "\u2717", rubric: "R", error: "!" };

function consistency(t) {
  const n = t.attempts.length;
  if (n > 0 && t.passed === n) return "all";
  if (t.passed === 0) return "never";
  return "flaky";
}

const CONSISTENCY_RANK = { never: 0, flaky: 1, all: 2 };

function fillSelect(sel, values) {
  const keep = sel.value;
  while (sel.options.length > 1) sel.remove(1);
  for (const v of values) sel.appendChild(el("option", { value: v }, v));
  if (values.includes(keep)) sel.value = keep;
}

function grid() {
  const form = document.getElementById("filters");
  if (!form) return;
  const run = form.dataset.run;
  const body = document.querySelector("#grid tbody");
  const count = document.getElementById("count");
  let data = null;
  const params = new URLSearchParams(location.search);
  for (const el2 of form.elements) {
    if (params.has(el2.name)) {
      if (el2.tagName === "SELECT" && ![...el2.options].some((o) => o.value === params.get(el2.name))) {
        el2.appendChild(el("option", { value: params.get(el2.name) }, params.get(el2.name)));
      }
      el2.value = params.get(el2.name);
    }
  }

  function render() {
    if (!data) return;
    const f = Object.fromEntries(new FormData(form).entries());
    const q = (f.q || "").toLowerCase();
    let tasks = data.tasks.filter((t) => {
      if (f.domain && t.domain !== f.domain) return false;
      if (f.file && t.file !== f.file) return false;
      if (f.status && !t.attempts.some((a) => a[2] === f.status)) return false;
      if (f.sig && !t.attempts.some((a) => a[3] === f.sig)) return false;
      if (f.tool && !t.tools.includes(f.tool)) return false;
      if (f.consistency && consistency(t) !== f.consistency) return false;
      if (q && !t.uid.toLowerCase().includes(q) && !t.query.toLowerCase().includes(q)) return false;
      return true;
    });
    if (f.sort === "consistency") {
      tasks = tasks.slice().sort((a, b) =>
        CONSISTENCY_RANK[consistency(a)] - CONSISTENCY_RANK[consistency(b)] ||
        a.passed / a.attempts.length - b.passed / b.attempts.length ||
        a.uid.localeCompare(b.uid));
    } else if (f.sort === "uid") {
      tasks = tasks.slice().sort((a, b) => a.uid.localeCompare(b.uid));
    }
    const rows = document.createDocumentFragment();
    for (const t of tasks) {
      const tr = el("tr", { "data-consistency": consistency(t) });
      tr.appendChild(el("td", { class: "uid" }, t.uid));
      tr.appendChild(el("td", {}, t.domain));
      tr.appendChild(el("td", { class: "num" }, t.passed + "/" + t.attempts.length));
      const cells = el("td", { class: "cells" });
      for (const a of t.attempts) {
        const title = "repetition " + (a[1] === null ? "?" : a[1]) + " \u00b7 line " + a[0] + " \u00b7 " + a[2] + (a[3] ? " \u00b7 " + a[3] : "");
        cells.appendChild(el("a", { class: "cell s-" + a[2], href: "/runs/" + run + "/attempts/" + a[0], title: title }, SYMBOL[a[2]] || "?"));
      }
      tr.appendChild(cells);
      tr.appendChild(el("td", { class: "q", title: t.query }, t.query));
      rows.appendChild(tr);
    }
    body.replaceChildren(rows);
    const attempts = tasks.reduce((n, t) => n + t.attempts.length, 0);
    count.textContent = tasks.length + " of " + data.tasks.length + " tasks, " + attempts + " attempts shown";
    const p = new URLSearchParams();
    for (const k in f) if (f[k]) p.set(k, f[k]);
    const qs = p.toString();
    history.replaceState(null, "", location.pathname + (qs ? "?" + qs : ""));
  }

  function load() {
    fetch("/api/runs/" + run + "/tasks").then((r) => r.json()).then((d) => {
      data = d;
      const uniq = (xs) => [...new Set(xs)].sort();
      fillSelect(form.elements.domain, uniq(d.tasks.map((t) => t.domain)));
      fillSelect(form.elements.file, uniq(d.tasks.map((t) => t.file)));
      fillSelect(form.elements.sig, uniq(d.tasks.flatMap((t) => t.attempts.map((a) => a[3]).filter((s) => s))));
      fillSelect(form.elements.tool, uniq(d.tasks.flatMap((t) => t.tools)));
      for (const [k, v] of params) if (form.elements[k]) form.elements[k].value = v;
      render();
      document.body.dataset.loaded = "yes";
    });
  }
  form.addEventListener("input", render);
  form.addEventListener("change", render);
  form.addEventListener("submit", (e) => e.preventDefault());
  window.tbReload = load;
  load();
}

function keys() {
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
    const id = { j: "next", k: "prev", n: "next-failure" }[e.key];
    if (!id) return;
    const a = document.getElementById(id);
    if (a) { e.preventDefault(); location.href = a.getAttribute("href"); }
  });
  for (const b of document.querySelectorAll("button.toggle-all")) {
    b.addEventListener("click", () => {
      const open = b.textContent === "expand all";
      for (const d of b.closest("section, main").querySelectorAll(".timeline details")) d.open = open;
      b.textContent = open ? "collapse all" : "expand all";
    });
  }
}

function live() {
  const page = document.body.dataset.page;
  let gen = document.body.dataset.generation;
  const badge = document.getElementById("live");
  setInterval(() => {
    fetch("/api/state").then((r) => r.json()).then((s) => {
      const writing = s.runs.some((r) => r.writing);
      if (badge) badge.textContent = writing ? "a run is being written" : "";
      if (String(s.generation) === gen) return;
      gen = String(s.generation);
      if (page === "tasks" && window.tbReload) window.tbReload();
      else if (page === "runs" || page === "compare") location.reload();
      else if (badge) badge.textContent = "the runs changed; reload to see";
    }).catch(() => { if (badge) badge.textContent = "tb view is not answering"; });
  }, 2000);
}

document.addEventListener("DOMContentLoaded", () => { grid(); keys(); live(); });
