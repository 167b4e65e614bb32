// purser's web chat: one websocket to /v1/ws, the inbox over HTTP.
// Everything the server sends is shown with textContent, never as HTML:
// answers can quote mail and statements.
"use strict";

const store = window.sessionStorage; // this tab only
const $ = (id) => document.getElementById(id);

const state = {
  token: store.getItem("purser.token") || "",
  conversation: store.getItem("purser.conversation") || "",
  // baseSeq: the seq just before the first frame this tab showed (-1 until
  // then); a reload replays from it. lastSeq: the last frame shown.
  baseSeq: Number(store.getItem("purser.baseSeq") ?? -1),
  lastSeq: -1,
  // The person's own messages, which the server does not replay: kept
  // here with the seq they followed, to put them back in place on reload.
  sent: JSON.parse(store.getItem("purser.sent") || "[]"),
  pendingSent: [],
  // Decisions this tab sent, by proposal id, so a replayed proposal shows
  // its outcome rather than live buttons.
  decided: JSON.parse(store.getItem("purser.decided") || "{}"),
  ws: null,
  opened: false,
  failures: 0,
  retry: null,
  streaming: new Map(), // turn id -> bubble being streamed
  notifications: new Map(), // id -> notification
};

function randomId(prefix) {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return prefix + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

function setStatus(text) { $("status").textContent = text; }

function bubble(kind, text) {
  const li = document.createElement("li");
  li.className = kind;
  li.textContent = text;
  $("transcript").appendChild(li);
  li.scrollIntoView({ block: "end" });
  return li;
}

// ---- connection ----

function signIn(message) {
  state.token = "";
  store.removeItem("purser.token");
  $("chat").hidden = true;
  $("inbox").hidden = true;
  $("signin").hidden = false;
  setStatus(message || "not connected");
}

function connect() {
  clearTimeout(state.retry);
  $("signin").hidden = true;
  $("chat").hidden = false;
  $("inbox").hidden = false;
  setStatus("connecting…");
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  // Browsers cannot set headers on a websocket: the token travels as a
  // subprotocol; the server answers with purser.v1 only.
  const ws = new WebSocket(scheme + "//" + location.host + "/v1/ws", ["purser.v1", "purser.bearer." + state.token]);
  state.ws = ws;
  state.opened = false;
  ws.onopen = () => {
    state.opened = true;
    state.failures = 0;
    setStatus("connected");
    $("send").disabled = false;
    if (state.baseSeq >= 0) {
      // Catch up: after a reload, everything this tab showed; after a
      // drop, what was missed.
      const after = state.lastSeq >= 0 ? state.lastSeq : state.baseSeq;
      if (state.lastSeq < 0) state.lastSeq = state.baseSeq;
      ws.send(JSON.stringify({ type: "resume", after_seq: after }));
    }
    ws.send(JSON.stringify({ type: "ping" }));
    loadInbox();
  };
  ws.onmessage = (ev) => {
    let f;
    try { f = JSON.parse(ev.data); } catch { return; }
    handle(f);
  };
  ws.onclose = (ev) => {
    $("send").disabled = true;
    if (state.ws !== ws) return;
    if (ev.code === 4001) { signIn("Your session expired: paste a new token."); return; }
    if (!state.opened && ++state.failures >= 3) { signIn("Could not connect: check the token."); return; }
    const wait = ev.code === 1008 ? 0 : Math.min(15000, 1000 * 2 ** state.failures);
    setStatus(ev.code === 1008 ? "catching up…" : "disconnected; retrying");
    state.retry = setTimeout(connect, wait);
  };
}

function send(frame) {
  if (!state.ws || state.ws.readyState !== WebSocket.OPEN) return false;
  state.ws.send(JSON.stringify(frame));
  return true;
}

// ---- frames ----

function handle(f) {
  if (f.seq) {
    if (f.seq <= state.lastSeq) return; // shown already
    if (state.baseSeq < 0) {
      state.baseSeq = f.seq - 1;
      store.setItem("purser.baseSeq", String(state.baseSeq));
    }
    flushSent(f.seq);
    state.lastSeq = f.seq;
  }
  switch (f.type) {
    case "ack": {
      const mine = f.ack && document.querySelector(`li.user[data-id="${CSS.escape(f.ack.id)}"]`);
      if (mine) mine.classList.add("acked");
      break;
    }
    case "pong":
      flushSent(Infinity);
      break;
    case "token": {
      let b = state.streaming.get(f.turn_id);
      if (!b) { b = bubble("assistant streaming", ""); state.streaming.set(f.turn_id, b); }
      b.textContent += f.token.text;
      break;
    }
    case "clarify":
      finish(f.turn_id, "assistant clarify", f.clarify.question);
      break;
    case "answer":
      finish(f.turn_id, "assistant answer", f.answer.content);
      break;
    case "proposal":
      proposal(f);
      break;
    case "error":
      finish(f.turn_id, "error", f.error.message);
      break;
    case "tool_start":
      bubble("tool", "Running " + f.tool.tool.replaceAll("_", " ") + "…");
      break;
    case "tool_result":
      bubble("tool", f.tool.tool.replaceAll("_", " ") + (f.tool.status === "failed" ? " failed" : " done"));
      break;
    case "notification":
      bubble("notification", f.notification.title);
      addNotification(f.notification, true);
      break;
  }
}

// finish ends a turn's bubble: the streamed one becomes the final text.
function finish(turnID, kind, text) {
  const b = turnID && state.streaming.get(turnID);
  if (b) {
    state.streaming.delete(turnID);
    b.className = kind;
    b.textContent = text;
    return b;
  }
  return bubble(kind, text);
}

function proposal(f) {
  const p = f.proposal;
  const li = finish(f.turn_id, "assistant proposal", "");
  li.dataset.proposalId = p.proposal_id;
  const text = document.createElement("div");
  text.textContent = p.summary;
  li.appendChild(text);
  const actions = document.createElement("div");
  actions.className = "actions";
  const decided = document.createElement("div");
  decided.className = "decided";
  const decide = (decision, label) => {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    b.dataset.decision = decision;
    if (decision !== "approve") b.className = "secondary";
    b.onclick = () => {
      // No client id: the server makes the decision itself the identity,
      // so a double click is one confirm.
      if (!send({ type: "confirm", conversation_id: f.conversation_id, proposal_id: p.proposal_id, decision })) return;
      state.decided[p.proposal_id] = decision;
      store.setItem("purser.decided", JSON.stringify(state.decided));
      close(decision === "approve" ? "Approved" : "Declined");
    };
    actions.appendChild(b);
  };
  const close = (label) => {
    for (const x of actions.querySelectorAll("button")) x.disabled = true;
    decided.textContent = label;
  };
  decide("approve", "Yes, do it");
  decide("reject", "No");
  const earlier = state.decided[p.proposal_id];
  if (earlier) close(earlier === "approve" ? "Approved" : "Declined");
  else if (new Date(p.expires_at) < new Date()) close("Expired");
  li.append(actions, decided);
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
  if (!send(frame)) return false;
  userBubble(id, text);
  state.sent.push({ id, text, after: state.lastSeq });
  store.setItem("purser.sent", JSON.stringify(state.sent.slice(-200)));
  return true;
}

function userBubble(id, text) {
  const li = bubble("user", text);
  li.dataset.id = id;
}

// flushSent shows the remembered messages that came before seq, on a
// replay after reload.
function flushSent(seq) {
  while (state.pendingSent.length && state.pendingSent[0].after < seq) {
    const m = state.pendingSent.shift();
    userBubble(m.id, m.text);
  }
}

// ---- inbox ----

async function api(method, path) {
  const resp = await fetch(path, { method, headers: { Authorization: "Bearer " + state.token } });
  if (resp.status === 401) { signIn("Your session expired: paste a new token."); throw new Error("unauthorized"); }
  if (!resp.ok) throw new Error("HTTP " + resp.status);
  return resp.json();
}

async function loadInbox() {
  try {
    const { notifications } = await api("GET", "/v1/notifications");
    for (const n of notifications.slice().reverse()) addNotification(n, false);
  } catch { /* shown again on the next connect */ }
}

// addNotification shows n once. The inbox (live false) is the authority
// on read state: a replayed frame carries the state at delivery time.
function addNotification(n, live) {
  const known = state.notifications.get(n.id);
  if (known) {
    if (!live && n.read && !known.read) {
      known.read = true;
      const li = document.querySelector(`#notifications li[data-id="${CSS.escape(n.id)}"]`);
      if (li) li.className = "";
      countUnread();
    }
    return;
  }
  state.notifications.set(n.id, n);
  const li = document.createElement("li");
  li.dataset.id = n.id;
  if (!n.read) li.className = "unread";
  const title = document.createElement("strong");
  title.textContent = n.title;
  li.appendChild(title);
  if (n.body) {
    const body = document.createElement("p");
    body.textContent = n.body;
    li.appendChild(body);
  }
  li.onclick = async () => {
    if (n.read) return;
    try {
      await api("POST", "/v1/notifications/" + encodeURIComponent(n.id) + "/read");
      n.read = true;
      li.className = "";
      countUnread();
    } catch { /* stays unread */ }
  };
  $("notifications").prepend(li);
  countUnread();
  if (live) li.scrollIntoView({ block: "nearest" });
}

function countUnread() {
  const unread = [...state.notifications.values()].filter((n) => !n.read).length;
  $("unread").textContent = String(unread);
  $("unread").hidden = unread === 0;
}

// ---- start ----

function start() {
  // A token handed over in the fragment (never sent to the server) is
  // kept in this tab and removed from the address bar.
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) {
    state.token = fromHash;
    store.setItem("purser.token", fromHash);
    history.replaceState(null, "", location.pathname + location.search);
  }
  state.pendingSent = state.baseSeq >= 0 ? state.sent.slice() : [];
  $("signin-form").onsubmit = (ev) => {
    ev.preventDefault();
    const t = $("token").value.trim();
    if (!t) return;
    state.token = t;
    store.setItem("purser.token", t);
    $("token").value = "";
    connect();
  };
  $("composer").onsubmit = (ev) => {
    ev.preventDefault();
    const text = $("message").value.trim();
    if (text && say(text)) $("message").value = "";
  };
  $("send").disabled = true;
  if (state.token) connect(); else signIn();
}

start();
