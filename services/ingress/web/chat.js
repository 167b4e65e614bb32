// purser's chat, inside the widget's frame (/chat): one websocket to
// /v1/ws, the inbox over HTTP. The host page's widget.js places this frame
// and hands it a token with postMessage; opened on its own, /chat is a
// full-page chat. Everything the server sends is shown as text or as
// markdown built node by node, never as HTML: answers quote mail and
// statements.
"use strict";

const store = window.sessionStorage; // this tab only
const prefs = (() => { try { return window.localStorage; } catch { return null; } })();
const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const embedded = window.parent !== window;
const isMac = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);

// The host that embeds this frame: the browser's own record wins over the
// address's parameter. Messages are taken from it only, and sent to it only.
const hostOrigin = (() => {
  const a = location.ancestorOrigins;
  if (a && a.length) return a[0];
  return params.get("host") || location.origin;
})();

const state = {
  token: "",
  tokenFromHost: false,
  conversation: store.getItem("purser.conversation") || "",
  // baseSeq: the seq just before the first frame this tab showed (-1 until
  // then); a reload replays from it. lastSeq: the last frame shown.
  baseSeq: Number(store.getItem("purser.baseSeq") ?? -1),
  lastSeq: -1,
  // The person's own messages, kept with the seq they followed, to put
  // them back in place on reload when the server does not replay them.
  sent: JSON.parse(store.getItem("purser.sent") || "[]"),
  pendingSent: [],
  // Frames written but not acked yet, by id: sent again, with the same id,
  // after a reconnect (the server treats a repeated id as the same turn).
  outbox: JSON.parse(store.getItem("purser.outbox") || "[]"),
  // Decisions this tab sent, by proposal id, so a replayed proposal shows
  // its outcome rather than live buttons.
  decided: JSON.parse(store.getItem("purser.decided") || "{}"),
  ws: null,
  opened: false,
  failures: 0,
  retry: null,
  catchingUp: false,
  connStatus: "not connected",
  streaming: new Map(), // turn id -> bubble being streamed
  thinking: new Map(), // client frame id -> "Thinking…" bubble
  turnOf: new Map(), // client frame id -> turn id (from its ack)
  cards: new Map(), // turn id of a confirm -> proposal card it decided
  notifications: new Map(), // id -> notification
  layout: { open: !embedded, docked: !embedded, phone: false },
  view: "chat",
};

function randomId(prefix) {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return prefix + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

function save(key, value) { store.setItem("purser." + key, JSON.stringify(value)); }

function toHost(msg) {
  if (embedded) window.parent.postMessage(msg, hostOrigin);
}

// ---- status line in the header ----

function setStatus(text) {
  state.connStatus = text;
  showStatus();
}

function showStatus() {
  const sending = state.outbox.some((o) => o.frame.type === "message");
  $("status").textContent = sending ? "Sending…" : state.connStatus;
}

// ---- layout: closed launcher, floating bubble, docked sidebar ----

function applyLayout() {
  const { open, docked, phone } = state.layout;
  const body = document.body;
  body.classList.toggle("closed", !open);
  body.classList.toggle("bubble", open && !docked);
  body.classList.toggle("docked", open && docked);
  body.classList.toggle("phone", phone);
  body.classList.toggle("standalone", !embedded);
  $("panel").hidden = !open;
  $("launcher").setAttribute("aria-expanded", String(open));
  $("dock-button").setAttribute("aria-pressed", String(open && docked));
  $("dock-button").hidden = !embedded;
  $("close-button").hidden = !embedded;
  showToastsArea();
}

function setLayout(next) {
  const wasOpen = state.layout.open;
  state.layout = Object.assign({}, state.layout, next);
  applyLayout();
  if (state.layout.open && !wasOpen) focusInside();
  if (!state.layout.open && wasOpen && document.hasFocus()) $("launcher").focus();
}

// focusInside puts the keyboard where the person will type.
function focusInside() {
  if (!$("signin").hidden) $("token").focus();
  else if (state.view === "inbox") $("inbox-close").focus();
  else $("message").focus();
}

function toggleOpen(open) {
  if (embedded) toHost({ type: "purser:toggle", open });
}

// ---- theme: the system's, or the person's choice ----

const darkQuery = window.matchMedia("(prefers-color-scheme: dark)");

function theme() {
  const chosen = prefs && prefs.getItem("purser.theme");
  if (chosen === "light" || chosen === "dark") return chosen;
  const asked = params.get("theme");
  return asked === "light" || asked === "dark" ? asked : "system";
}

function isDark() {
  const t = theme();
  return t === "dark" || (t === "system" && darkQuery.matches);
}

function applyTheme() {
  document.documentElement.dataset.theme = theme();
  const b = $("theme-button");
  b.setAttribute("aria-pressed", String(isDark()));
  b.title = isDark() ? "Light theme" : "Dark theme";
}

function toggleTheme() {
  if (prefs) prefs.setItem("purser.theme", isDark() ? "light" : "dark");
  applyTheme();
}

// ---- the conversation ----

function bubble(kind, text) {
  const li = document.createElement("li");
  li.className = kind;
  li.textContent = text;
  append(li);
  return li;
}

function append(li) {
  const t = $("transcript");
  const atEnd = t.scrollHeight - t.scrollTop - t.clientHeight < 40;
  // The "Thinking…" bubbles stay last.
  const firstThinking = t.querySelector(":scope > li.thinking");
  if (firstThinking && !li.classList.contains("thinking")) t.insertBefore(li, firstThinking);
  else t.appendChild(li);
  if (atEnd || li.classList.contains("user")) t.scrollTop = t.scrollHeight;
}

// Minimal markdown, built as DOM nodes: paragraphs, line breaks, lists,
// headings, code, bold, italic and http(s)/mailto links. Anything else,
// HTML included, stays text.
function markdown(text) {
  const root = document.createElement("div");
  root.className = "md";
  const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
  let para = null;
  let list = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^```/.test(line)) {
      const pre = document.createElement("pre");
      const code = document.createElement("code");
      const body = [];
      for (i++; i < lines.length && !/^```/.test(lines[i]); i++) body.push(lines[i]);
      code.textContent = body.join("\n");
      pre.appendChild(code);
      root.appendChild(pre);
      para = list = null;
      continue;
    }
    if (!line.trim()) { para = list = null; continue; }
    const h = /^#{1,6}\s+(.*)$/.exec(line);
    if (h) {
      const el = document.createElement("h3");
      inline(el, h[1]);
      root.appendChild(el);
      para = list = null;
      continue;
    }
    const item = /^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$/.exec(line);
    if (item) {
      const tag = item[1] ? "UL" : "OL";
      if (!list || list.tagName !== tag) {
        list = document.createElement(tag.toLowerCase());
        root.appendChild(list);
      }
      const li = document.createElement("li");
      inline(li, item[3]);
      list.appendChild(li);
      para = null;
      continue;
    }
    list = null;
    if (!para) {
      para = document.createElement("p");
      root.appendChild(para);
    } else {
      para.appendChild(document.createElement("br"));
    }
    inline(para, line);
  }
  return root;
}

const inlinePattern = /`([^`]+)`|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|\[([^\]]+)\]\(([^)\s]+)\)|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/g;

function inline(parent, text) {
  let at = 0;
  for (const m of text.matchAll(inlinePattern)) {
    if (m.index > at) parent.appendChild(document.createTextNode(text.slice(at, m.index)));
    at = m.index + m[0].length;
    let el;
    if (m[1] !== undefined) { el = document.createElement("code"); el.textContent = m[1]; }
    else if (m[2] !== undefined || m[3] !== undefined) { el = document.createElement("strong"); el.textContent = m[2] ?? m[3]; }
    else if (m[4] !== undefined) { el = document.createElement("em"); el.textContent = m[4]; }
    else {
      const href = m[6] ?? m[7];
      el = safeLink(href, m[5] ?? m[7]);
    }
    parent.appendChild(el);
  }
  if (at < text.length) parent.appendChild(document.createTextNode(text.slice(at)));
}

// safeLink is a link for http(s) and mailto addresses, plain text otherwise.
function safeLink(href, label) {
  let u;
  try { u = new URL(href); } catch { return document.createTextNode(label); }
  if (!["http:", "https:", "mailto:"].includes(u.protocol)) return document.createTextNode(label);
  const a = document.createElement("a");
  a.href = u.href;
  a.textContent = label;
  a.target = "_blank";
  a.rel = "noopener noreferrer";
  return a;
}

function humanTool(name) { return String(name || "").replaceAll("_", " "); }

// citations adds the answer's sources: each links to the tool line it
// cites in this conversation, or to its address when the server names one.
function citations(li, answer) {
  const cites = answer.citations || [];
  if (!cites.length) return;
  const box = document.createElement("div");
  box.className = "citations";
  box.setAttribute("aria-label", "Sources");
  box.appendChild(document.createTextNode("Sources:"));
  const changed = answer.added || answer.updated || answer.deleted;
  for (const c of cites) {
    let label = humanTool(c.tool);
    if (changed && /expense$/.test(c.tool || "")) label = "expense #" + changed.id;
    if (c.label) label = c.label;
    let a;
    if (c.url) {
      a = safeLink(c.url, label);
    } else {
      a = document.createElement("a");
      a.href = "#call-" + c.call_id;
      a.textContent = label;
      a.onclick = (ev) => {
        ev.preventDefault();
        const target = document.getElementById("call-" + c.call_id);
        if (!target) return;
        target.classList.add("cited");
        target.scrollIntoView({ block: "center" });
        target.focus();
      };
    }
    a.classList.add("citation");
    if (c.call_id) a.dataset.callId = c.call_id;
    box.appendChild(a);
  }
  li.appendChild(box);
}

// ---- connection ----

function signIn(message) {
  state.token = "";
  store.removeItem("purser.token");
  if (state.ws) { const ws = state.ws; state.ws = null; ws.close(); }
  clearTimeout(state.retry);
  $("chat").hidden = true;
  $("inbox").hidden = true;
  $("signin").hidden = false;
  $("inbox-button").hidden = true;
  setStatus(message || "signed out");
}

function useToken(token, fromHost) {
  if (!token) return;
  const changed = token !== state.token;
  state.token = token;
  state.tokenFromHost = fromHost;
  if (!fromHost) store.setItem("purser.token", token);
  if (changed || !state.ws) connect();
}

// expired asks the host for a fresh token once; without one, sign in.
function expired() {
  if (state.tokenFromHost && !state.askedHost) {
    state.askedHost = true;
    state.token = "";
    setStatus("renewing the session…");
    toHost({ type: "purser:need-token" });
    return;
  }
  signIn("Your session expired: sign in again.");
}

function connect() {
  clearTimeout(state.retry);
  $("signin").hidden = true;
  showView(state.view);
  $("inbox-button").hidden = false;
  if (state.layout.open && document.hasFocus() && document.activeElement === document.body) focusInside();
  setStatus("connecting…");
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  // Browsers cannot set headers on a websocket: the token travels as a
  // subprotocol; the server answers with purser.v1 only.
  if (state.ws) { const old = state.ws; state.ws = null; old.close(); }
  const ws = new WebSocket(scheme + "//" + location.host + "/v1/ws", ["purser.v1", "purser.bearer." + state.token]);
  state.ws = ws;
  state.opened = false;
  ws.onopen = () => {
    state.opened = true;
    state.failures = 0;
    state.askedHost = false;
    setStatus("connected");
    if (state.baseSeq >= 0) {
      // Catch up: after a reload, everything this tab showed; after a
      // drop, what was missed.
      const after = state.lastSeq >= 0 ? state.lastSeq : state.baseSeq;
      if (state.lastSeq < 0) state.lastSeq = state.baseSeq;
      state.catchingUp = true;
      ws.send(JSON.stringify({ type: "resume", after_seq: after }));
    }
    // What was written but never acked goes again, with the same ids.
    for (const o of state.outbox) ws.send(JSON.stringify(o.frame));
    ws.send(JSON.stringify({ type: "ping" }));
    loadInbox();
  };
  ws.onmessage = (ev) => {
    let f;
    try { f = JSON.parse(ev.data); } catch { return; }
    handle(f);
  };
  ws.onclose = (ev) => {
    if (state.ws !== ws) return;
    if (ev.code === 4001) { expired(); return; }
    if (!state.opened && ++state.failures >= 3) {
      if (state.tokenFromHost && !state.askedHost) { expired(); return; }
      signIn("Could not connect: check the token.");
      return;
    }
    const wait = ev.code === 1008 ? 0 : Math.min(15000, 1000 * 2 ** state.failures);
    setStatus(ev.code === 1008 ? "catching up…" : "disconnected; retrying");
    state.retry = setTimeout(connect, wait);
  };
}

// send writes a frame. A frame with an id waits in the outbox until its
// ack, and is written again after a reconnect if the ack never came.
function send(frame) {
  if (frame.id) {
    state.outbox.push({ id: frame.id, frame });
    save("outbox", state.outbox);
    showStatus();
  }
  if (!state.ws || state.ws.readyState !== WebSocket.OPEN) return false;
  state.ws.send(JSON.stringify(frame));
  return true;
}

function settled(id) {
  const i = state.outbox.findIndex((o) => o.id === id);
  if (i < 0) return null;
  const [o] = state.outbox.splice(i, 1);
  save("outbox", state.outbox);
  showStatus();
  return o;
}

// ---- frames ----

function handle(f) {
  if (f.seq) {
    if (f.seq <= state.lastSeq) return; // shown already
    if (state.baseSeq < 0) {
      state.baseSeq = f.seq - 1;
      store.setItem("purser.baseSeq", String(state.baseSeq));
    }
    if (f.type !== "user_message") flushSent(f.seq);
    state.lastSeq = f.seq;
  }
  if (f.turn_id && f.type !== "ack") turnStarted(f.turn_id);
  switch (f.type) {
    case "ack": {
      const id = f.ack && f.ack.id;
      if (!id) break;
      settled(id);
      if (f.turn_id) {
        state.turnOf.set(id, f.turn_id);
        const card = state.cards.get(id);
        if (card) { state.cards.delete(id); state.cards.set(f.turn_id, card); }
      }
      const mine = document.querySelector(`#transcript li.user[data-id="${CSS.escape(id)}"]`);
      if (mine) mine.classList.remove("pending"), mine.classList.add("acked");
      break;
    }
    case "pong":
      state.catchingUp = false;
      flushSent(Infinity);
      break;
    case "user_message": {
      const m = f.user_message || {};
      const id = m.id || f.id || "";
      state.pendingSent = state.pendingSent.filter((s) => s.id !== id);
      if (!id || !document.querySelector(`#transcript li.user[data-id="${CSS.escape(id)}"]`)) userBubble(id, m.text ?? f.text ?? "");
      break;
    }
    case "token": {
      let b = state.streaming.get(f.turn_id);
      if (!b) { b = bubble("assistant streaming", ""); state.streaming.set(f.turn_id, b); }
      const t = $("transcript");
      const atEnd = t.scrollHeight - t.scrollTop - t.clientHeight < 40;
      b.textContent += f.token.text;
      if (atEnd) t.scrollTop = t.scrollHeight;
      break;
    }
    case "clarify":
      finish(f.turn_id, "assistant clarify", f.clarify.question);
      break;
    case "answer": {
      const li = finish(f.turn_id, "assistant answer", f.answer.content);
      citations(li, f.answer);
      break;
    }
    case "proposal":
      proposal(f);
      break;
    case "error":
      onError(f);
      break;
    case "tool_start":
    case "tool_result":
      toolLine(f);
      break;
    case "notification":
      bubble("notification", f.notification.title);
      addNotification(f.notification, true, !state.catchingUp);
      break;
  }
}

// turnStarted ends the "Thinking…" bubble of a turn at its first frame.
function turnStarted(turnID) {
  for (const [id, t] of state.turnOf) {
    if (t !== turnID) continue;
    const li = state.thinking.get(id);
    if (li) { li.remove(); state.thinking.delete(id); }
  }
}

function onError(f) {
  const id = f.error.id;
  if (id) {
    // An error about one of this tab's frames: it was received and
    // refused, so it is not sent again.
    settled(id);
    const li = state.thinking.get(id);
    if (li) { li.remove(); state.thinking.delete(id); }
    const mine = document.querySelector(`#transcript li.user[data-id="${CSS.escape(id)}"]`);
    if (mine) mine.classList.replace("pending", "failed");
  }
  // A refused edit leaves the proposal waiting: its card opens again. A
  // proposal decided elsewhere (another tab) or expired stays closed.
  const card = state.cards.get(f.turn_id) || (id && state.cards.get(id));
  if (card && f.error.code === "proposal_invalid") card.gone();
  else if (card) card.reopen();
  if (f.turn_id) $("tool-status").textContent = "";
  finish(f.turn_id, "error", f.error.message).setAttribute("role", "alert");
}

// finish ends a turn's bubble: the streamed one becomes the final text.
function finish(turnID, kind, text) {
  $("tool-status").textContent = "";
  let b = turnID && state.streaming.get(turnID);
  if (b) {
    // The streamed bubble takes the final frame's place: frames arrive in
    // seq order, so what came meanwhile (a notification) stays above it,
    // as a reload, which replays by seq, shows it.
    state.streaming.delete(turnID);
    b.className = kind;
    b.textContent = "";
    b.remove();
    append(b);
  } else {
    b = bubble(kind, "");
  }
  if (kind.startsWith("assistant")) b.appendChild(markdown(text));
  else b.textContent = text;
  return b;
}

function toolLine(f) {
  const t = f.tool;
  const id = "call-" + t.call_id;
  let li = document.getElementById(id);
  if (!li) {
    li = bubble("tool", "");
    li.id = id;
    li.tabIndex = -1;
  }
  const name = humanTool(t.tool);
  if (f.type === "tool_start") {
    li.textContent = "Running " + name + "…";
    $("tool-status").textContent = "Running " + name + "…";
  } else {
    li.textContent = name + (t.status === "failed" ? " failed" : " done");
    $("tool-status").textContent = "";
  }
}

function proposal(f) {
  const p = f.proposal;
  const li = finish(f.turn_id, "assistant proposal", "");
  li.textContent = "";
  li.dataset.proposalId = p.proposal_id;
  li.setAttribute("role", "group");
  li.setAttribute("aria-label", "Proposal: " + p.summary);
  const text = document.createElement("div");
  text.className = "summary";
  text.textContent = p.summary;
  li.appendChild(text);
  const actions = document.createElement("div");
  actions.className = "actions";
  const decided = document.createElement("div");
  decided.className = "decided";
  decided.setAttribute("role", "status");
  const form = editForm(p);
  form.hidden = true;

  const card = {
    close(label) {
      for (const x of li.querySelectorAll("button, input")) x.disabled = true;
      decided.textContent = label;
    },
    gone() {
      state.decided[p.proposal_id] = "gone";
      save("decided", state.decided);
      card.close(label("gone"));
    },
    reopen() {
      delete state.decided[p.proposal_id];
      save("decided", state.decided);
      for (const x of li.querySelectorAll("button, input")) x.disabled = false;
      decided.textContent = "";
    },
  };
  const decide = (decision, args) => {
    const id = randomId("c");
    const frame = { type: "confirm", id, conversation_id: f.conversation_id, proposal_id: p.proposal_id, decision };
    if (args) frame.args = args;
    state.cards.set(id, card);
    send(frame);
    state.decided[p.proposal_id] = decision;
    save("decided", state.decided);
    card.close(label(decision));
    $("message").focus(); // the buttons it was on are disabled now
  };
  const button = (decision, text, cls) => {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.dataset.decision = decision;
    if (cls) b.className = cls;
    actions.appendChild(b);
    return b;
  };
  button("approve", "Approve").onclick = () => decide("approve");
  const edit = button("edit", "Edit", "secondary");
  edit.setAttribute("aria-expanded", "false");
  edit.onclick = () => {
    form.hidden = !form.hidden;
    edit.setAttribute("aria-expanded", String(!form.hidden));
    if (!form.hidden) { const first = form.querySelector("input"); if (first) first.focus(); }
  };
  button("reject", "Reject", "secondary").onclick = () => decide("reject");
  form.onsubmit = (ev) => {
    ev.preventDefault();
    form.hidden = true;
    edit.setAttribute("aria-expanded", "false");
    decide("edit", form.readArgs());
  };
  form.querySelector("button.cancel").onclick = () => {
    form.hidden = true;
    edit.setAttribute("aria-expanded", "false");
    edit.focus();
  };
  li.append(actions, form, decided);
  const earlier = state.decided[p.proposal_id];
  if (earlier) card.close(label(earlier));
  else if (new Date(p.expires_at) < new Date()) card.close("Expired");
}

function label(decision) {
  return { approve: "Approved", reject: "Declined", edit: "Approved with changes", gone: "No longer open" }[decision] || decision;
}

// editForm is a form with one field per argument of the proposal; the
// server validates what comes back against the same tool's schema.
function editForm(p) {
  const form = document.createElement("form");
  form.className = "edit";
  form.setAttribute("aria-label", "Edit the proposal");
  let args = p.args;
  if (typeof args === "string") { try { args = JSON.parse(args); } catch { args = {}; } }
  if (!args || typeof args !== "object" || Array.isArray(args)) args = {};
  const fields = [];
  for (const [key, value] of Object.entries(args)) {
    const id = randomId("f");
    const lab = document.createElement("label");
    lab.htmlFor = id;
    lab.textContent = humanTool(key);
    const input = document.createElement("input");
    input.id = id;
    input.name = key;
    input.autocomplete = "off";
    const kind = value === null ? "null" : typeof value;
    if (kind === "object") input.value = JSON.stringify(value);
    else if (kind !== "null") input.value = String(value);
    if (kind === "number") input.inputMode = "decimal";
    fields.push({ key, kind, input });
    form.append(lab, input);
  }
  const actions = document.createElement("div");
  actions.className = "actions";
  const ok = document.createElement("button");
  ok.type = "submit";
  ok.textContent = "Save and approve";
  ok.className = "save";
  const cancel = document.createElement("button");
  cancel.type = "button";
  cancel.textContent = "Cancel";
  cancel.className = "secondary cancel";
  actions.append(ok, cancel);
  form.appendChild(actions);
  form.readArgs = () => {
    const out = {};
    for (const { key, kind, input } of fields) {
      const v = input.value.trim();
      if (v === "" && kind !== "string") { out[key] = null; continue; }
      if (kind === "number") { const n = Number(v); out[key] = Number.isFinite(n) ? n : v; continue; }
      if (kind === "boolean") { out[key] = v === "true"; continue; }
      if (kind === "object") { try { out[key] = JSON.parse(v); } catch { out[key] = v; } continue; }
      out[key] = v;
    }
    return out;
  };
  return form;
}

// ---- the person's messages ----

function say(text) {
  if (!state.conversation) {
    state.conversation = randomId("web");
    store.setItem("purser.conversation", state.conversation);
  }
  const id = randomId("m");
  const frame = { type: "message", id, conversation_id: state.conversation, text };
  try { frame.timezone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch { /* the server's default */ }
  userBubble(id, text).classList.add("pending");
  state.sent.push({ id, text, after: state.lastSeq });
  save("sent", state.sent.slice(-200));
  const thinking = bubble("assistant thinking", "Thinking…");
  thinking.setAttribute("aria-label", "The assistant is thinking");
  state.thinking.set(id, thinking);
  send(frame);
}

function userBubble(id, text) {
  const li = bubble("user", text);
  if (id) li.dataset.id = id;
  return li;
}

// flushSent shows the remembered messages that came before seq, on a
// replay after reload.
function flushSent(seq) {
  while (state.pendingSent.length && state.pendingSent[0].after < seq) {
    const m = state.pendingSent.shift();
    if (!document.querySelector(`#transcript li.user[data-id="${CSS.escape(m.id)}"]`)) userBubble(m.id, m.text);
  }
}

// ---- inbox and toasts ----

async function api(method, path) {
  const resp = await fetch(path, { method, headers: { Authorization: "Bearer " + state.token } });
  if (resp.status === 401) { expired(); throw new Error("unauthorized"); }
  if (!resp.ok) throw new Error("HTTP " + resp.status);
  return resp.json();
}

async function loadInbox() {
  try {
    const { notifications } = await api("GET", "/v1/notifications");
    for (const n of notifications.slice().reverse()) addNotification(n, false, false);
  } catch { /* shown again on the next connect */ }
}

// addNotification shows n once. The inbox (live false) is the authority
// on read state: a replayed frame carries the state at delivery time.
function addNotification(n, live, toast) {
  const known = state.notifications.get(n.id);
  if (known) {
    if (!live && n.read && !known.read) markRead(known);
    return;
  }
  state.notifications.set(n.id, n);
  const li = document.createElement("li");
  li.dataset.id = n.id;
  if (!n.read) li.className = "unread";
  const b = document.createElement("button");
  b.type = "button";
  const title = document.createElement("strong");
  title.textContent = n.title;
  b.appendChild(title);
  if (n.body) {
    const body = document.createElement("p");
    body.textContent = n.body;
    b.appendChild(body);
  }
  b.onclick = () => read(n);
  li.appendChild(b);
  $("notifications").prepend(li);
  countUnread();
  if (toast && !n.read) showToast(n);
}

async function read(n) {
  if (n.read) return;
  try {
    await api("POST", "/v1/notifications/" + encodeURIComponent(n.id) + "/read");
    markRead(n);
  } catch { /* stays unread */ }
}

function markRead(n) {
  n.read = true;
  const li = document.querySelector(`#notifications li[data-id="${CSS.escape(n.id)}"]`);
  if (li) li.className = "";
  const toast = document.querySelector(`#toasts .toast[data-id="${CSS.escape(n.id)}"]`);
  if (toast) dismiss(toast);
  countUnread();
}

function countUnread() {
  const unread = [...state.notifications.values()].filter((n) => !n.read).length;
  for (const id of ["unread", "launcher-badge"]) {
    $(id).textContent = String(unread);
    $(id).hidden = unread === 0;
  }
  $("launcher-label").textContent = unread ? `Open the assistant (${unread} unread)` : "Open the assistant";
  $("inbox-button").setAttribute("aria-label", unread ? `Notifications, ${unread} unread` : "Notifications");
}

function showToast(n) {
  const t = document.createElement("div");
  t.className = "toast";
  t.dataset.id = n.id;
  t.setAttribute("role", "status");
  const p = document.createElement("p");
  p.textContent = n.title;
  const open = document.createElement("button");
  open.type = "button";
  open.className = "secondary";
  open.textContent = "View";
  open.onclick = () => {
    dismiss(t);
    if (!state.layout.open) toggleOpen(true);
    showView("inbox");
  };
  const x = document.createElement("button");
  x.type = "button";
  x.className = "icon";
  x.textContent = "✕";
  x.setAttribute("aria-label", "Dismiss");
  x.onclick = () => dismiss(t);
  t.append(p, open, x);
  $("toasts").appendChild(t);
  showToastsArea();
  setTimeout(() => dismiss(t), 12000);
}

function dismiss(t) {
  t.remove();
  showToastsArea();
}

function showToastsArea() {
  const showing = $("toasts").childElementCount > 0;
  toHost({ type: "purser:toasts", showing: showing && !state.layout.open });
}

function showView(view) {
  state.view = view;
  const inbox = view === "inbox";
  $("inbox").hidden = !inbox;
  $("chat").hidden = inbox;
  $("inbox-button").setAttribute("aria-expanded", String(inbox));
  if (inbox) {
    // The inbox shows what the toasts said.
    for (const t of [...$("toasts").children]) dismiss(t);
    $("inbox-close").focus();
  }
}

// ---- keyboard ----

function shortcut(ev) {
  if (ev.code !== "KeyD" && ev.key.toLowerCase() !== "d") return false;
  if (!(isMac ? ev.metaKey : ev.ctrlKey) || ev.altKey) return false;
  ev.preventDefault();
  if (!embedded) return true;
  if (ev.shiftKey) toHost({ type: "purser:dock" });
  else toHost({ type: "purser:toggle" });
  return true;
}

// ---- start ----

function start() {
  applyTheme();
  darkQuery.addEventListener("change", applyTheme);
  applyLayout();
  state.pendingSent = state.baseSeq >= 0 ? state.sent.slice() : [];
  state.outbox = state.outbox.filter((o) => o && o.frame && o.id);
  document.addEventListener("keydown", (ev) => {
    if (shortcut(ev)) return;
    if (ev.key === "Escape" && embedded && state.layout.open) {
      if (state.view === "inbox") { showView("chat"); $("message").focus(); return; }
      if (!state.layout.docked) toggleOpen(false);
    }
  });
  $("launcher").onclick = () => toggleOpen(true);
  $("close-button").onclick = () => toggleOpen(false);
  $("dock-button").onclick = () => toHost({ type: "purser:dock" });
  $("theme-button").onclick = toggleTheme;
  $("inbox-button").onclick = () => showView(state.view === "inbox" ? "chat" : "inbox");
  $("inbox-close").onclick = () => { showView("chat"); $("message").focus(); };
  $("signin-form").onsubmit = (ev) => {
    ev.preventDefault();
    const t = $("token").value.trim();
    if (!t) return;
    $("token").value = "";
    useToken(t, false);
    $("message").focus();
  };
  const message = $("message");
  const grow = () => {
    message.style.height = "auto";
    message.style.height = Math.min(message.scrollHeight + 2, 144) + "px";
  };
  message.addEventListener("input", grow);
  message.addEventListener("keydown", (ev) => {
    // Enter sends; Shift+Enter is a new line (the textarea's own).
    if (ev.key !== "Enter" || ev.shiftKey || ev.isComposing) return;
    ev.preventDefault();
    const text = message.value.trim();
    if (!text) return;
    say(text);
    message.value = "";
    grow();
  });
  $("composer").onsubmit = (ev) => ev.preventDefault();

  window.addEventListener("message", (ev) => {
    if (!embedded || ev.source !== window.parent || ev.origin !== hostOrigin) return;
    const m = ev.data || {};
    if (m.type === "purser:state") {
      setLayout({ open: !!m.open, docked: !!m.docked, phone: !!m.phone });
    } else if (m.type === "purser:token") {
      if (m.token) useToken(String(m.token), true);
      else if (state.tokenFromHost || !state.token) {
        const pasted = store.getItem("purser.token");
        if (pasted) useToken(pasted, false); else signIn();
      }
    }
  });

  const pasted = store.getItem("purser.token");
  if (!embedded) {
    // /chat opened on its own takes a token in the fragment, as / did.
    const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
    if (fromHash) {
      store.setItem("purser.token", fromHash);
      history.replaceState(null, "", location.pathname + location.search);
    }
    const t = fromHash || pasted;
    if (t) useToken(t, false); else signIn();
    focusInside();
  } else {
    // The host hands the token over when it hears ready; a token pasted
    // in this tab earlier serves until then.
    setStatus("waiting for the host…");
    if (pasted) useToken(pasted, false);
    toHost({ type: "purser:ready" });
  }
}

start();
