// The live page for the hall's projector (docs/club.md, "The page").
//
// The board arrives by server-sent events (/events) on every change (with no
// EventSource it is fetched from /board.json each second).  The page is a
// cycle of full-screen pages: "find your seat" for the round on, the tables,
// the standings, the corrections; each list is laid out in columns and split
// into as many pages as the screen needs (measured, so any size of screen and
// any length of name fits), and the pages turn by themselves every
// PAGE_S seconds.  `?seconds=N` sets that; `?page=N` holds page N (pictures).
//
// Names are never markup: everything is built with textContent.
"use strict";

const params = new URLSearchParams(location.search);
const PAGE_S = Number(params.get("seconds")) > 0 ? Number(params.get("seconds")) : 12;
const HOLD = params.has("page") ? Number(params.get("page")) : null;
const SEAT_WORDS = {N: "North", E: "East", S: "South", W: "West"};

let board = null;          // the last board received
let receivedAt = 0;        // performance.now() when it came
let built = -1;            // the version the pages were built from
let builtStage = null;     // the round and whether final, when the pages were last built
let builtAt = 0;
let pages = [];            // the page elements, in turn order
let current = 0;
let shownAt = 0;
let link = "connecting";   // the page's own link to the director: connecting, live, lost
let lostAt = null;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function clockTime(seconds) {
  const d = new Date(seconds * 1000);
  return String(d.getHours()).padStart(2, "0") + ":" + String(d.getMinutes()).padStart(2, "0");
}

function byName(a, b) {
  return a.localeCompare(b, undefined, {sensitivity: "base"}) || (a < b ? -1 : a > b ? 1 : 0);
}

// --- what each table's state means on the page -------------------------------

function stateOf(t) {
  // [words, kind]: kind "ok", "done", "warn" (amber) or "alert" (red)
  if (t.ended) return ["ended by the director", "warn"];
  if (t.verdict && t.verdict.verdict === "disputed") {
    return ["disputed by " + t.verdict.by + ": see the director", "alert"];
  }
  if (t.verdict) return ["done: " + t.verdict.by + " accepted", "done"];
  if (t.done || (board.final !== null && board.final !== undefined)) return ["done", "done"];
  if (t.state === "offline") return ["box offline", "alert"];
  if (t.state === "silent") {
    const minutes = t.heard ? Math.floor(t.heard / 60) : null;
    return ["late: silent" + (minutes ? " " + minutes + " min" : ""), "warn"];
  }
  if (t.state === "not heard from yet") return ["waiting for the box", "warn"];
  if (t.state === "playing") {
    if (board.clock && remaining() <= 0) return ["time: finishing the hand", "warn"];
    return ["playing", "ok"];
  }
  return [t.state, "alert"];  // a refused line, other rules than the round's
}

function remaining() {
  if (!board || !board.clock) return null;
  return Math.max(0, board.clock.remaining - (performance.now() - receivedAt) / 1000);
}

// --- the pages ------------------------------------------------------------------

function newPage(stage, view, title) {
  const page = el("section", "page");
  page.dataset.view = view;
  page.append(el("h2", null, title));
  const body = el("div", "body " + view);
  page.append(body);
  stage.append(page);
  pages.push(page);
  return body;
}

function overflows(body) {  // lists: too tall; cards (in CSS columns): too wide
  return body.scrollHeight > body.clientHeight + 1 || body.scrollWidth > body.clientWidth + 1;
}

// Items into columns (each made by makeColumn(): [column, where items go]),
// `columns` a page, as many pages as it takes.
function columnPages(stage, view, title, items, columns, makeColumn) {
  const first = pages.length;
  let body = null;
  let into = null;
  const nextColumn = () => {
    if (body === null || body.children.length >= columns) {
      body = newPage(stage, view, title);
      body.style.gridTemplateColumns = "repeat(" + columns + ", minmax(0, 1fr))";
    }
    const made = makeColumn();
    body.append(made[0]);
    into = made[1];
  };
  nextColumn();
  for (const item of items) {
    into.append(item);
    if (overflows(body) && into.children.length > 1) {
      item.remove();
      nextColumn();
      into.append(item);
    }
  }
  numberPages(first, title);
}

// Cards into a grid, as many pages as it takes.
function cardPages(stage, view, title, cards) {
  const first = pages.length;
  let body = newPage(stage, view, title);
  for (const card of cards) {
    body.append(card);
    if (overflows(body) && body.children.length > 1) {
      card.remove();
      body = newPage(stage, view, title);
      body.append(card);
    }
  }
  numberPages(first, title);
}

function numberPages(first, title) {
  const count = pages.length - first;
  if (count < 2) return;
  for (let i = first; i < pages.length; i++) {
    pages[i].querySelector("h2").textContent = title + " (" + (i - first + 1) + "/" + count + ")";
  }
}

function tableColumn(headings) {
  const table = el("table", "list");
  const head = el("tr");
  for (const text of headings) head.append(el("th", null, text));
  table.append(el("thead"));
  table.tHead.append(head);
  const body = el("tbody");
  table.append(body);
  return [table, body];
}

function row(cells) {
  const tr = el("tr");
  for (const [text, className] of cells) tr.append(el("td", className, text));
  return tr;
}

function seatRows() {
  const rows = [];
  for (const t of board.tables) {
    for (const seat of ["N", "E", "S", "W"]) rows.push([t.players[seat], t.table, SEAT_WORDS[seat]]);
  }
  for (const name of board.byes) rows.push([name, null, "bye"]);
  rows.sort((a, b) => byName(a[0], b[0]));
  return rows.map(([name, table, seat]) =>
    row([[name], [table === null ? "–" : table, "n"], [seat, table === null ? "bye" : ""]]));
}

function tableCard(t) {
  const card = el("div", "table");
  card.dataset.table = t.table;
  const [words, kind] = stateOf(t);
  card.classList.add("is-" + kind);
  const head = el("div", "head");
  const which = el("span");
  which.append(el("span", "number", "Table " + t.table), " ",
               el("span", "hand", t.hand ? "hand " + t.hand : "no hand yet"));
  head.append(which, el("span", "state " + kind, words));
  card.append(head);
  for (const [side, first, second] of [["NS", "N", "S"], ["EW", "E", "W"]]) {
    const line = el("div", "side");
    line.append(el("span", "names", t.players[first] + " & " + t.players[second]),
                el("span", "points", t.score[side]));
    line.dataset.side = side;
    card.append(line);
  }
  return card;
}

function standingRows() {
  return board.players.map((player, index) => row([[player.rank || index + 1, "n"],
                    [player.name + (player.withdrawn ? " (withdrawn)" : "")],
                    [player.points, "n"], [player.rounds_won, "n"], [player.loners, "n"],
                    [player.euchres, "n"],
                    [player.rounds_played !== undefined ? player.rounds_played : player.rounds,
                     "n"]]));
}

function build() {
  const stage = document.getElementById("stage");
  // The page shown stays shown: the same view's same page (its last, if fewer now).
  const keep = pages[current] ? pages[current].dataset.view : null;
  const ordinal = pages.slice(0, current).filter(page => page.dataset.view === keep).length;
  stage.replaceChildren();
  pages = [];
  const final = board.final !== null && board.final !== undefined;
  const standingsTitle = final ? "Final standings" : "Standings";
  const standings = () => columnPages(stage, "standings", standingsTitle, standingRows(), 2,
    () => tableColumn(["#", "Player", "Points", "Won", "Loners", "Euchres", "Played"]));
  if (final) standings();
  if (board.round && !final) {
    columnPages(stage, "seats", "Find your seat: round " + board.round, seatRows(), 4,
                () => tableColumn(["Player", "Table", "Seat"]));
  }
  if (board.tables.length) {
    cardPages(stage, "tables", (final ? "Tables, round " : "Tables: round ") + board.round,
              board.tables.map(tableCard));
  }
  if (!final) standings();
  // The corrections: a plain audit list, the latest first.
  // A result disputed at its table is listed there too, until a correction settles it.
  const corrections = (board.corrections || []).slice().reverse();
  const disputes = (board.disputes || []).map(d => el("li", d.corrected ? null : "dispute",
    d.when.slice(11, 16) + " " + d.what));
  if (corrections.length || disputes.length) {
    const first = pages.length;
    columnPages(stage, "audit", "Corrections", disputes.concat(corrections.map(c => el("li", null,
      c.when.slice(11, 16) + " " + c.what + " (" + c.who + ": " + c.reason + ")"))), 1,
    () => { const list = el("ol", "list audit"); return [list, list]; });
    const wrapper = el("section");  // #audit: the list's anchor (display: contents)
    wrapper.id = "audit";
    wrapper.append(...pages[first].childNodes);
    pages[first].append(wrapper);
  }
  const stage_ = board.round + (final ? " final" : "");
  let turned = false;
  if (HOLD !== null) {
    current = Math.min(Math.max(HOLD, 0), pages.length - 1);
  } else if (builtStage !== null && stage_ !== builtStage) {
    current = 0;  // a new round: find your seat now; the night final: its standings now
    turned = true;
  } else {
    const same = pages.flatMap((page, index) => page.dataset.view === keep ? [index] : []);
    current = same.length ? same[Math.min(ordinal, same.length - 1)] : 0;
  }
  builtStage = stage_;
  show(turned);
  built = board.version;
  builtAt = performance.now();
}

function show(turned) {
  pages.forEach((page, index) => page.classList.toggle("shown", index === current));
  if (turned) shownAt = performance.now();
  document.body.dataset.page = current;
  document.body.dataset.pages = pages.length;
  const pager = document.getElementById("pager");
  const next = pages[(current + 1) % pages.length];
  pager.textContent = pages.length > 1
    ? "page " + (current + 1) + " of " + pages.length + (HOLD === null
      ? " · next: " + next.querySelector("h2").textContent : "")
    : "";
}

// --- the header and footer --------------------------------------------------------

function drawHeader() {
  document.getElementById("title").textContent = "Euchre club night: " + board.event;
  const final = board.final !== null && board.final !== undefined;
  document.getElementById("round").textContent = final
    ? "Final · after round " + board.round
    : board.round ? "Round " + board.round + " (" + board.format + ")"
      + (board.byes.length ? " · " + board.byes.length + " on a bye" : "")
      : "waiting for the first round";
  document.getElementById("round").className = final ? "final" : "";
  drawClock();
  const status = document.getElementById("link");
  let words = "live";
  let kind = "ok";
  if (link === "lost") {
    words = "director not reached" + (lostAt ? " since " + clockTime(lostAt) : "")
      + " · shown as it was";
    kind = "alert";
  } else if (link === "connecting") {
    words = "connecting…";
    kind = "warn";
  } else if (final) {
    words = "final";
    kind = "done";
  } else if (board.broker === null || board.broker === undefined) {
    words = "broker: connecting…";
    kind = "warn";
  } else if (!board.broker.connected) {
    words = "broker lost since " + clockTime(board.broker.since) + " · the boxes keep scoring";
    kind = "alert";
  }
  status.textContent = words;
  status.className = kind;
  document.getElementById("notes").textContent = (board.notes || []).slice(0, 2).join("\n");
  document.getElementById("problems").textContent = board.problems.slice(0, 2).join("\n");
  document.body.dataset.version = board.version;
}

function drawClock() {
  const clock = document.getElementById("clock");
  const final = board.final !== null && board.final !== undefined;
  if (!board.clock || final) {
    clock.hidden = true;
    return;
  }
  clock.hidden = false;
  const left = Math.ceil(remaining());
  clock.className = left <= 0 ? "alert" : left <= 120 ? "warn" : "";
  clock.textContent = left <= 0
    ? "time: finish the hand in play"
    : "ends " + clockTime(board.clock.ends) + " · " + Math.floor(left / 60) + ":"
      + String(left % 60).padStart(2, "0") + " left";
}

// --- the loop --------------------------------------------------------------------

function receive(next) {
  board = next;
  receivedAt = performance.now();
  drawHeader();
  if (built < 0 || performance.now() - builtAt > 1000) build();
}

function tick() {
  if (!board) return;
  drawClock();
  if (built !== board.version && performance.now() - builtAt > 1000) build();
  if (HOLD === null && pages.length > 1 && performance.now() - shownAt >= PAGE_S * 1000) {
    current = (current + 1) % pages.length;
    show(true);
  }
}

function connect() {
  if (!window.EventSource) {
    setInterval(() => fetch("/board.json").then(r => r.json()).then(next => {
      link = "live";
      receive(next);
    }, () => { if (link !== "lost") lostAt = Date.now() / 1000; link = "lost"; drawHeader(); }),
    1000);
    return;
  }
  const source = new EventSource("/events");
  source.addEventListener("board", event => {
    link = "live";
    receive(JSON.parse(event.data));
  });
  source.onerror = () => {
    if (link !== "lost") lostAt = Date.now() / 1000;
    link = "lost";
    if (board) drawHeader();
  };
}

window.addEventListener("resize", () => { if (board) build(); });
setInterval(tick, 250);
// The board now, then the live stream (opened a moment later: a headless
// browser that dumps the page after a virtual-time budget sees the first draw).
fetch("/board.json").then(r => r.json()).then(next => {
  link = "live";
  receive(next);
}).finally(() => setTimeout(connect, 500));
