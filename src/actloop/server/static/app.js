// The actloop page: ask, watch the run live, decide approvals, browse past threads.
// It speaks the Agent Protocol (threads, runs, command.resume) and follows a thread's events
// at /threads/{id}/events. Everything the model or a tool produced is written with
// textContent, never as HTML.
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

async function call(method, path, body) {
  const response = await fetch(path, { method, headers: headers(), body: body ? JSON.stringify(body) : undefined });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.error || "HTTP " + response.status);
  return { data, response };
}

async function api(method, path, body) {
  return (await call(method, path, body)).data;
}

function threadPath(thread, rest) {
  return "/threads/" + encodeURIComponent(thread) + (rest || "");
}

// a run on the thread: a new question, or a decision on the calls waiting for approval
function startRun(thread, body) {
  return api("POST", threadPath(thread, "/runs"), Object.assign({ assistant_id: "agent" }, body));
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
    if (call.questions) {
      box.appendChild(questionCard(call));
      continue;
    }
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

// a call that asked a person for input: its questions, and an answer (JSON), decline or cancel
function questionCard(call) {
  const card = document.createElement("div");
  card.className = "approval question";
  const what = document.createElement("div");
  what.className = "what";
  what.textContent = "waiting for an answer [" + call.id + "]: " + call.tool + "(" + text(call.tool_input) + ")";
  card.appendChild(what);
  for (const q of call.questions) {
    const asked = document.createElement("div");
    asked.className = "asks";
    asked.textContent = q.message + (q.schema ? " \u2014 answer: " + JSON.stringify(q.schema) : "");
    card.appendChild(asked);
  }
  const keys = call.questions.map((q) => q.key);
  const several = keys.length > 1;
  const answer = document.createElement("textarea");
  answer.rows = 2;
  answer.value = several ? JSON.stringify(Object.fromEntries(keys.map((k) => [k, {}]))) : "{}";
  answer.setAttribute("aria-label", "answer");
  const all = (action) => (several ? Object.fromEntries(keys.map((k) => [k, action])) : action);
  const buttons = document.createElement("div");
  buttons.className = "buttons";
  const send = button("Answer", "answer", () => {
    let given;
    try { given = JSON.parse(answer.value); } catch (e) { addLine("error", "the answer is not JSON"); return; }
    decide({ answer: { [call.id]: given } });
  });
  const decline = button("Decline", "decline", () => decide({ answer: { [call.id]: all("decline") } }));
  const cancel = button("Cancel", "cancel", () => decide({ answer: { [call.id]: all("cancel") } }));
  buttons.append(send, decline, cancel);
  card.append(answer, buttons);
  return card;
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
    await startRun(state.thread, { command: { resume: decision } });
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
  const response = await fetch(threadPath(thread, "/events"), { headers: headers(extra) });
  await readEvents(response, onEvent);
  $("status").textContent = "";
}

async function ask(question) {
  clearRun();
  $("status").textContent = "running\u2026";
  const thread = await api("POST", "/threads", {});
  state.thread = thread.thread_id;
  await startRun(state.thread, { input: { input: question } });
  await followThread(state.thread, -1);
  loadThreads();
}

async function loadThreads() {
  const list = $("threads");
  const threads = await api("POST", "/threads/search", { limit: 100 });
  list.replaceChildren();
  for (const t of threads) {
    const li = document.createElement("li");
    const status = document.createElement("span");
    status.className = "status";
    status.textContent = t.status;
    const label = document.createElement("span");
    const input = t.values && t.values.input;
    label.textContent = text(input == null ? t.thread_id : input);
    li.append(status, label);
    li.dataset.thread = t.thread_id;
    li.addEventListener("click", () => showThread(t.thread_id));
    list.appendChild(li);
  }
}

// a saved state's messages as the page's lines: question, calls, observations, answer
function showMessages(messages) {
  for (const m of messages) {
    if (m.type === "human") addLine("question", "question: " + m.content);
    else if (m.type === "tool") addLine("observation", m.name + " \u2192 " + m.content);
    else if (m.type === "ai" && m.tool_calls && m.tool_calls.length) {
      state.lastAct = m.tool_calls.map((c) => addLine("call", callText(c.name, c.args)));
    } else if (m.type === "ai") $("answer").textContent = text(m.content);
  }
}

async function showThread(thread) {
  clearRun();
  state.thread = thread;
  const t = await api("GET", threadPath(thread));
  const { data, response } = await call("GET", threadPath(thread, "/state"));
  showMessages((data.values && data.values.messages) || []);
  for (const i of data.interrupts) {
    showApprovals(i.value.action_requests.map((r) => ({ id: r.id, tool: r.name, tool_input: r.args, questions: r.questions })));
  }
  const failed = data.tasks.find((task) => task.error);
  if (failed) addLine("error", "failed: " + failed.error + " (details in the server log)");
  state.lastEvent = Number(response.headers.get("X-Actloop-Last-Event") || "-1");
  if (t.status === "busy") await followThread(thread, state.lastEvent);
}

async function start() {
  readToken();
  try {
    const doc = await api("GET", "/openapi.json");
    state.durable = doc.info["x-actloop-durable"] === true;
  } catch (e) {
    $("status").textContent = e.message;
  }
  $("mode").textContent = state.durable ? "durable threads" : "no --db: threads end with the server";
  $("ask").addEventListener("submit", (event) => {
    event.preventDefault();
    const question = $("question").value.trim();
    if (question) ask(question).catch((e) => addLine("error", e.message));
  });
  loadThreads().catch(() => {});
}

start();
