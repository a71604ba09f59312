// The actloop page: ask, watch the run live, decide approvals, browse past threads.
// Everything the model or a tool produced is written with textContent, never as HTML.
"use strict";

const state = {
  token: "", durable: false, thread: null, lastEvent: -1, tokensLine: null,
  lastAct: [], // the call lines of the latest step, which a resumed run announces again
  resuming: false,
};
const $ = (id) => document.getElementById(id);

// `?token=` as the server reads it: percent-decoded only, so a base64 token's "+" stays "+"
// (URLSearchParams would turn it into a space).
function queryToken() {
  for (const pair of window.location.search.slice(1).split("&")) {
    const cut = pair.indexOf("=");
    if (cut < 0 || pair.slice(0, cut) !== "token") continue;
    try { return decodeURIComponent(pair.slice(cut + 1)); } catch (e) { return pair.slice(cut + 1); }
  }
  return "";
}

function readToken() {
  const url = new URL(window.location.href);
  const given = queryToken();
  if (given) {
    sessionStorage.setItem("actloop-token", given);
    url.searchParams.delete("token");
    history.replaceState(null, "", url.pathname + url.search);
  }
  state.token = sessionStorage.getItem("actloop-token") || "";
}

function headers(extra) {
  const h = Object.assign({ "Content-Type": "application/json" }, extra || {});
  if (state.token) h.Authorization = "Bearer " + state.token;
  return h;
}

async function api(method, path, body) {
  const response = await fetch(path, { method, headers: headers(), body: body ? JSON.stringify(body) : undefined });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.error || "HTTP " + response.status);
  return data;
}

// Server-sent events over fetch (so the token goes in a header); calls onEvent(id, name, data).
async function readEvents(response, onEvent) {
  if (!response.ok) {
    const data = await response.json().catch(() => ({}));
    throw new Error(data.error || "HTTP " + response.status);
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let id = null, name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("id: ")) id = Number(line.slice(4));
        else if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data.push(line.slice(6));
      }
      const text = data.join("\n");
      onEvent(id, name, text ? JSON.parse(text) : null);
    }
  }
}

function text(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function addLine(kind, content) {
  const li = document.createElement("li");
  li.className = kind;
  li.textContent = content;
  $("trajectory").appendChild(li);
  return li;
}

function clearRun() {
  $("trajectory").replaceChildren();
  $("approvals").replaceChildren();
  $("answer").textContent = "";
  state.tokensLine = null;
  state.lastEvent = -1;
  state.lastAct = [];
  state.resuming = false;
}

function callText(tool, input) {
  return "calling " + tool + "(" + text(input) + ")";
}

function showChunk(chunk) {
  if ("token" in chunk) {
    if (!state.tokensLine) state.tokensLine = addLine("tokens", "");
    state.tokensLine.textContent += chunk.token;
    return;
  }
  state.tokensLine = null;
  const resumed = state.resuming;
  state.resuming = false;
  if (chunk.actions) {
    if (resumed && chunk.actions.length === state.lastAct.length) {
      // a resumed run first announces the step it goes on with: its lines are on the page
      // already; set them again (an edit changed an input) instead of adding them twice
      chunk.actions.forEach((a, i) => { state.lastAct[i].textContent = callText(a.tool, a.tool_input); });
      return;
    }
    state.lastAct = chunk.actions.map((a) => addLine("call", callText(a.tool, a.tool_input)));
  } else if (chunk.steps) {
    for (const s of chunk.steps) addLine("observation", s.action.tool + " \u2192 " + text(s.observation));
  } else if (chunk.pending_approvals) {
    showApprovals(chunk.pending_approvals);
  } else if ("output" in chunk) {
    $("answer").textContent = text(chunk.output);
  }
}

function onEvent(id, name, data) {
  if (id !== null) state.lastEvent = id;
  if (name === "data" && data) showChunk(data);
  else if (name === "error") addLine("error", "the run failed (see the server log)");
  else if (name === "end") $("status").textContent = "";
}

function showApprovals(pending) {
  const box = $("approvals");
  box.replaceChildren();
  for (const call of pending) {
    const card = document.createElement("div");
    card.className = "approval";
    const what = document.createElement("div");
    what.className = "what";
    what.textContent = "waiting for approval [" + call.id + "]: " + call.tool + "(" + text(call.tool_input) + ")";
    const edit = document.createElement("textarea");
    edit.rows = 2;
    edit.value = JSON.stringify(call.tool_input);
    edit.setAttribute("aria-label", "tool input");
    const reason = document.createElement("input");
    reason.placeholder = "reason (for a rejection)";
    const buttons = document.createElement("div");
    buttons.className = "buttons";
    const approve = button("Approve", "approve", () => decide({ approve: [call.id] }));
    const reject = button("Reject", "reject", () => decide({ reject: { [call.id]: reason.value || null } }));
    const save = button("Edit and run", "edit", () => {
      let input;
      try { input = JSON.parse(edit.value); } catch (e) { input = edit.value; }
      decide({ edit: { [call.id]: input } });
    });
    buttons.append(approve, reject, save);
    card.append(what, edit, reason, buttons);
    box.appendChild(card);
  }
}

function button(label, kind, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = kind;
  b.textContent = label;
  b.addEventListener("click", onClick);
  return b;
}

async function decide(decision) {
  $("approvals").replaceChildren();
  try {
    await api("POST", "/threads/" + encodeURIComponent(state.thread) + "/resume", decision);
    state.resuming = true;
    await followThread(state.thread, state.lastEvent);
  } catch (e) {
    addLine("error", e.message);
  }
  loadThreads();
}

async function followThread(thread, after) {
  $("status").textContent = "running\u2026";
  const extra = after >= 0 ? { "Last-Event-ID": String(after) } : {};
  const response = await fetch("/threads/" + encodeURIComponent(thread) + "/events", { headers: headers(extra) });
  await readEvents(response, onEvent);
  $("status").textContent = "";
}

async function ask(question) {
  clearRun();
  $("status").textContent = "running\u2026";
  if (state.durable) {
    const started = await api("POST", "/threads", { input: { input: question } });
    state.thread = started.thread_id;
    await followThread(state.thread, -1);
    loadThreads();
    return;
  }
  const response = await fetch("/agent/stream_events", {
    method: "POST", headers: headers(), body: JSON.stringify({ input: { input: question } }),
  });
  await readEvents(response, (id, name, event) => {
    if (name !== "data") return onEvent(id, name, event);
    if (event.event === "on_chat_model_stream") {
      const content = event.data.chunk && event.data.chunk.content;
      if (typeof content === "string" && content) showChunk({ token: content });
    } else if (event.parent_ids && event.parent_ids.length === 0) {
      // the final chunk is taken from on_chain_end (its stream event may come late or not at all)
      if (event.event === "on_chain_stream" && !("output" in event.data.chunk)) showChunk(event.data.chunk);
      else if (event.event === "on_chain_end") showChunk(event.data.output);
    }
  });
  $("status").textContent = "";
}

async function loadThreads() {
  if (!state.durable) return;
  const list = $("threads");
  const data = await api("GET", "/threads");
  list.replaceChildren();
  for (const t of data.threads) {
    const li = document.createElement("li");
    const status = document.createElement("span");
    status.className = "status";
    status.textContent = t.status;
    const label = document.createElement("span");
    label.textContent = text(t.input == null ? t.thread_id : t.input);
    li.append(status, label);
    li.dataset.thread = t.thread_id;
    li.addEventListener("click", () => showThread(t.thread_id));
    list.appendChild(li);
  }
}

async function showThread(thread) {
  clearRun();
  state.thread = thread;
  const t = await api("GET", "/threads/" + encodeURIComponent(thread));
  addLine("question", "question: " + text(t.input));
  let act = null;
  for (const s of t.steps) {
    const line = addLine("call", callText(s.tool, s.tool_input));
    const step = String(s.id).split("-")[0]; // call ids are "STEP-CALL"
    if (step !== act) state.lastAct = [];
    act = step;
    state.lastAct.push(line);
    if (s.observation !== null) addLine("observation", s.tool + " \u2192 " + text(s.observation));
  }
  if (t.pending_approvals.length) showApprovals(t.pending_approvals);
  if (t.output) $("answer").textContent = text(t.output.output !== undefined ? t.output.output : t.output);
  if (t.error) addLine("error", "failed: " + t.error + " (details in the server log)");
  state.lastEvent = t.events - 1;
  if (t.live) await followThread(thread, state.lastEvent);
}

async function start() {
  readToken();
  try {
    const doc = await api("GET", "/openapi.json");
    state.durable = "/threads" in doc.paths;
  } catch (e) {
    $("status").textContent = e.message;
  }
  $("mode").textContent = state.durable ? "durable threads" : "no --db: runs are not saved";
  $("ask").addEventListener("submit", (event) => {
    event.preventDefault();
    const question = $("question").value.trim();
    if (question) ask(question).catch((e) => addLine("error", e.message));
  });
  loadThreads().catch(() => {});
}

start();
