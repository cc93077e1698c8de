/* fluke report: the run explorer. Reads the embedded JSON with JSON.parse and writes every
   string with textContent, never innerHTML: trajectories are untrusted input. */
(function () {
  "use strict";
  var node = document.getElementById("fluke-data");
  var list = document.getElementById("run-list");
  var detail = document.getElementById("run-detail");
  var filter = document.getElementById("run-filter");
  var shown = document.getElementById("run-count");
  if (!node || !list || !detail) { return; }
  var runs = JSON.parse(node.textContent).runs || [];
  var byHash = {};
  runs.forEach(function (r) { byHash[r.hash] = r; });

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function outcomeBadge(r) {
    if (r.passed === true) { return el("span", "badge pass", "pass"); }
    if (r.passed === false) { return el("span", "badge fail", r.outcome || "fail"); }
    return el("span", "badge unknown", "no outcome");
  }

  function renderList() {
    var needle = (filter && filter.value || "").toLowerCase();
    list.replaceChildren();
    var count = 0;
    runs.forEach(function (r) {
      var hay = (r.scenario + " " + r.label + " " + (r.outcome || "") + " " + r.hash).toLowerCase();
      if (needle && hay.indexOf(needle) < 0) { return; }
      count += 1;
      var li = el("li");
      var b = el("button");
      b.type = "button";
      b.setAttribute("data-run", r.hash);
      b.setAttribute("aria-pressed", "false");
      b.title = r.scenario + (r.condition ? " [" + r.condition + "]" : "") + " · trial " + r.trial;
      b.appendChild(el("span", "mono", r.scenario));
      b.appendChild(document.createTextNode(" · trial " + r.trial));
      b.appendChild(outcomeBadge(r));
      if (r.violations.length) { b.appendChild(el("span", "badge hard", r.violations.length + " violation" + (r.violations.length > 1 ? "s" : ""))); }
      b.appendChild(el("div", "sub", r.label + (r.condition ? " · " + r.condition : "")));
      li.appendChild(b);
      list.appendChild(li);
    });
    if (shown) { shown.textContent = count + " of " + runs.length + " runs listed"; }
  }

  function eventBody(ev) {
    if (ev.kind === "tool") {
      var text = ev.tool + "(" + ev.args + ")";
      if (ev.ok === true) { text += "\n→ " + ev.result; }
      else if (ev.ok === false) { text += "\n✗ " + (ev.error || ev.result); }
      else { text += "\n… no result came back"; }
      return text;
    }
    return ev.text;
  }

  function show(r) {
    detail.replaceChildren();
    var head = el("h3", null, r.scenario + " · trial " + r.trial);
    head.appendChild(outcomeBadge(r));
    detail.appendChild(head);
    var facts = "version " + r.version.slice(0, 12) + " (" + r.label + ")" +
      (r.condition ? " · condition " + r.condition : "") +
      (r.reward === null ? "" : " · reward " + r.reward) +
      (r.died_at === null ? "" : " · died at event " + r.died_at) + " · run " + r.hash.slice(0, 12);
    detail.appendChild(el("p", "sub", facts));
    var atIndex = {};
    var loose = [];
    r.violations.forEach(function (v) {
      if (v.index === null || v.index === undefined) { loose.push(v); }
      else { (atIndex[v.index] = atIndex[v.index] || []).push(v); }
    });
    function violationList(vs) {
      var ul = el("ul", "viol");
      vs.forEach(function (v) {
        var li = el("li");
        li.appendChild(el("span", "badge " + v.severity, v.severity));
        li.appendChild(document.createTextNode(" " + v.check + ": " + v.message));
        ul.appendChild(li);
      });
      return ul;
    }
    if (loose.length) { detail.appendChild(violationList(loose)); }
    var ol = el("ol", "traj");
    ol.setAttribute("aria-label", "trajectory of " + r.events.length + " events");
    r.events.forEach(function (ev) {
      var li = el("li", "ev-" + ev.kind);
      li.setAttribute("data-index", String(ev.index));
      if (ev.kind === "tool" && ev.ok === false) { li.classList.add("tool-error"); }
      if (atIndex[ev.index]) { li.classList.add("violated"); }
      if (r.died_at === ev.index) { li.classList.add("died"); }
      var who = ev.kind === "tool" ? "tool call" + (ev.actor ? " by " + ev.actor : "") : ev.kind + (ev.actor ? " · " + ev.actor : "");
      li.appendChild(el("div", "ev-head", "#" + ev.index + " " + who + (r.died_at === ev.index ? " · the run died here" : "")));
      li.appendChild(el("pre", "ev-body", eventBody(ev)));
      if (atIndex[ev.index]) { li.appendChild(violationList(atIndex[ev.index])); }
      ol.appendChild(li);
    });
    detail.appendChild(ol);
  }

  function select(b) {
    list.querySelectorAll("button[aria-pressed=true]").forEach(function (x) { x.setAttribute("aria-pressed", "false"); });
    b.setAttribute("aria-pressed", "true");
    show(byHash[b.getAttribute("data-run")]);
  }
  list.addEventListener("click", function (e) {
    var b = e.target.closest("button[data-run]");
    if (b) { select(b); }
  });
  /* Keyboard: Tab reaches the list; arrow keys, Home and End move through the runs and show each. */
  list.addEventListener("keydown", function (e) {
    var buttons = Array.prototype.slice.call(list.querySelectorAll("button[data-run]"));
    var at = buttons.indexOf(document.activeElement);
    if (at < 0 || !buttons.length) { return; }
    var to = {ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: buttons.length - 1}[e.key];
    if (to === undefined) { return; }
    e.preventDefault();
    var b = buttons[Math.max(0, Math.min(buttons.length - 1, to))];
    b.focus();
    select(b);
  });
  if (filter) { filter.addEventListener("input", renderList); }
  renderList();
}());
