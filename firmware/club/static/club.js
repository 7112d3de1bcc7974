// The live standings: the board arrives by server-sent events (/events) on
// every change; with no EventSource it is fetched from /board.json each second.
"use strict";

function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = String(text);
  if (className) td.className = className;
  return td;
}

function draw(board) {
  document.getElementById("title").textContent = "Euchre club night: " + board.event;
  document.getElementById("round").textContent = board.round
    ? "Round " + board.round + " (" + board.format + ")"
      + (board.byes.length ? " · bye: " + board.byes.join(", ") : "")
    : "waiting for the first round";
  const tables = document.getElementById("tables");
  tables.replaceChildren();
  for (const t of board.tables) {
    const box = document.createElement("div");
    const alert = !t.online || !["playing", "done"].includes(t.state);
    box.className = "table" + (t.done ? " done" : "") + (alert ? " alert" : "");
    box.dataset.table = t.table;
    const p = t.players;
    box.innerHTML = "";
    const head = document.createElement("div");
    head.className = "head";
    head.textContent = "Table " + t.table + " · hand " + t.hand;
    const score = document.createElement("div");
    score.className = "score";
    score.textContent = "NS " + t.score.NS + " – EW " + t.score.EW;
    const names = document.createElement("div");
    names.className = "names";
    names.textContent = p.N + " & " + p.S + " v " + p.E + " & " + p.W;
    const state = document.createElement("div");
    state.className = "state";
    state.textContent = t.online || t.state === "offline" ? t.state : "offline · " + t.state;
    box.append(head, score, names, state);
    tables.append(box);
  }
  const body = document.querySelector("#standings tbody");
  body.replaceChildren();
  board.players.forEach((player, index) => {
    const row = document.createElement("tr");
    row.append(cell(index + 1, "n"), cell(player.name), cell(player.points, "n"),
               cell(player.rounds_won, "n"), cell(player.loners, "n"),
               cell(player.euchres, "n"));
    body.append(row);
  });
  document.getElementById("problems").textContent = board.problems.slice(0, 5).join("\n");
  document.body.dataset.version = board.version;
}

function connect() {
  const link = document.getElementById("link");
  if (!window.EventSource) {
    setInterval(() => fetch("/board.json").then(r => r.json()).then(draw), 1000);
    return;
  }
  link.textContent = "connecting…";
  const source = new EventSource("/events");
  source.addEventListener("board", event => {
    link.textContent = "live";
    link.className = "";
    draw(JSON.parse(event.data));
  });
  source.onerror = () => { link.textContent = "reconnecting…"; link.className = "offline"; };
}

// The board now, then the live stream (opened a moment later: a headless
// browser that dumps the page after a virtual-time budget sees the first draw).
fetch("/board.json").then(r => r.json()).then(draw).finally(() => setTimeout(connect, 500));
