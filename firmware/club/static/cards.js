// The players' scorecards for phones (GET /cards, /cards?name=Anna), from
// /scorecards.json.  Names are user input: every text is set with
// textContent, never as markup.
"use strict";

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function table(headings, rows) {
  const list = el("table");
  const head = el("tr");
  for (const [text, numeric] of headings) head.append(el("th", numeric ? "n" : null, text));
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  for (const row of rows) body.append(row);
  list.append(thead, body);
  return list;
}

function cell(row, text, numeric) {
  row.append(el("td", numeric ? "n" : null, text));
}

function index(data) {
  document.getElementById("title").textContent = "Scorecards: " + data.event;
  const rows = data.cards.map(card => {
    const row = el("tr");
    cell(row, card.rank, true);
    const name = el("td");
    const link = el("a", null, card.name + (card.withdrawn ? " (withdrawn)" : ""));
    link.href = "/cards?name=" + encodeURIComponent(card.name);
    name.append(link);
    row.append(name);
    cell(row, card.points, true);
    return row;
  });
  document.getElementById("card").replaceChildren(
    table([["#", true], ["Player (tap for the card)"], ["Points", true]], rows));
}

function scorecard(data, name) {
  const card = data.cards.find(c => c.name === name);
  const title = document.getElementById("title");
  if (!card) {
    title.textContent = "No player called " + name;
    return;
  }
  title.textContent = card.name + (card.withdrawn ? " (withdrawn)" : "");
  document.getElementById("summary").textContent =
    data.event + " · rank " + card.rank + " · " + card.points + " points";
  const rows = card.rows.map(r => {
    const row = el("tr", r.kind);
    cell(row, r.round === null ? "" : r.round, true);
    if (r.kind === "table") {
      cell(row, r.table + " " + r.seat);
      cell(row, r.partner);
      cell(row, r.opponents.join(" & "));
      cell(row, r.us + "-" + r.them + (r.won === null ? "" : r.won ? " won" : " lost"));
    } else {
      const what = el("td", null, r.note);
      what.colSpan = 4;
      row.append(what);
    }
    cell(row, r.points, true);
    cell(row, r.total, true);
    if (r.kind === "table" && r.note) row.title = r.note;
    return row;
  });
  document.getElementById("card").replaceChildren(table(
    [["Rd", true], ["Table"], ["Partner"], ["Opponents"], ["Score"], ["Pts", true],
     ["Total", true]], rows));
  const notes = card.rows.filter(r => r.kind === "table" && r.note);
  for (const r of notes) {
    document.getElementById("card").append(el("p", null, "Round " + r.round + ": " + r.note));
  }
}

async function load() {
  const answer = await fetch("/scorecards.json", {cache: "no-store"});
  const data = await answer.json();
  const name = new URLSearchParams(location.search).get("name");
  if (name === null) index(data); else scorecard(data, name);
  document.body.dataset.loaded = "yes";
}

load();
