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
  // The conversation on show: its transcript is the server's history of
  // it (the latest page, older pages as the person scrolls back) and the
  // live frames that name it. New turns go to it.
  conversation: store.getItem("purser.conversation") || "",
  // history: paging state of the conversation on show: {id, oldest (the
  // seq of the oldest frame shown), more, loading, initial, failed,
  // buffer (live frames that came while the first page loaded), pinned
  // (the view follows the newest frame)}.
  history: null,
  titles: new Map(), // conversation id -> title, from the list
  // lastSeq: the last frame seen on the socket, of any conversation; a
  // reconnect resumes after it.
  lastSeq: -1,
  // sink: where frames are rendered; an element off the page while a
  // page of history is built, the transcript otherwise.
  sink: null,
  // Frames written but not acked yet, by id: sent again, with the same id,
  // after a reconnect (the server treats a repeated id as the same turn).
  outbox: JSON.parse(store.getItem("purser.outbox") || "[]"),
  // Frames of the outbox the server could not queue, by id: {tries (how
  // many times it said so), timer (the pending resend, null once fired)}.
  retries: new Map(),
  // Decisions this tab sent, by proposal id, so a replayed proposal shows
  // its outcome rather than live buttons.
  decided: JSON.parse(store.getItem("purser.decided") || "{}"),
  ws: null,
  opened: false,
  failures: 0,
  retry: null,
  catchingUp: false,
  // restarting is set by a 1012 close until a socket opens again.
  restarting: false,
  connStatus: "notConnected", // a string key
  streaming: new Map(), // turn id -> bubble being streamed
  thinking: new Map(), // client frame id -> "Thinking…" bubble
  turnOf: new Map(), // client frame id -> turn id (from its ack)
  cards: new Map(), // turn id of a confirm -> proposal card it decided
  notifications: new Map(), // id -> notification
  // told: the frames the host was told changed the ledger, by seq (and by
  // turn or notification id), so a replay does not tell it twice.
  told: new Set(),
  // streamed: the seqs of frames shown from an upload's event stream
  // before the socket brought them; the socket's copy is not shown again.
  streamed: new Set(),
  // uploads: the documents sent from this tab, by upload id (see attach).
  uploads: new Map(),
  uploading: Promise.resolve(), // the queue: one upload at a time
  layout: { open: !embedded, docked: !embedded, phone: false },
  view: "chat",
  lang: "en", // the chat's language: en or fr (see chosenLanguage)
  languageUnsaved: false, // switched here, not yet in the person's settings
  // proposals: the cards of the conversation on show, by proposal id (see
  // proposal); batch: the Approve all in flight, if any.
  proposals: new Map(),
  batch: null,
  expiryTimer: null,
};

// ---- language: the chat's words (chat-strings.js), and the locale its
// numbers and dates follow ----

// locales are the languages the chat speaks, as the locale each turn
// tells the server.
const locales = { en: "en-GB", fr: "fr-FR" };

// languageKey is where this browser keeps the language of the account
// signed in: each person sharing a browser keeps their own.
function languageKey() {
  const a = state.token && accountOf(state.token);
  return a ? "purser.lang." + a.tenant + "/" + a.user : "";
}

// chosenLanguage is the account's choice on this browser, else this
// browser's last choice, else the host's (?locale=), else the browser's.
function chosenLanguage() {
  const key = languageKey();
  const kept = prefs && ((key && prefs.getItem(key)) || prefs.getItem("purser.lang"));
  if (kept && locales[kept]) return kept;
  for (const l of [params.get("locale"), ...(navigator.languages || [navigator.language])]) {
    const code = String(l || "").slice(0, 2).toLowerCase();
    if (locales[code]) return code;
  }
  return "en";
}

function locale() { return locales[state.lang]; }

// t is the chat's string key in the language on show.
function t(key, ...args) {
  const row = chatStrings[state.lang][key] ?? chatStrings.en[key];
  if (typeof row === "function") return row(...args);
  return row ?? key;
}

// tr shows string key as el's text and marks el, so that a change of
// language says it again in the other.
function tr(el, key, ...args) {
  el.textContent = t(key, ...args);
  el.dataset.i18n = key;
  if (args.length) el.dataset.i18nArgs = JSON.stringify(args);
  else delete el.dataset.i18nArgs;
  return el;
}

// trAttr does as tr for one of el's attributes (aria-label, title…).
function trAttr(el, attr, key, ...args) {
  el.setAttribute(attr, t(key, ...args));
  const all = el.dataset.i18nAttrs ? JSON.parse(el.dataset.i18nAttrs) : {};
  all[attr] = [key, ...args];
  el.dataset.i18nAttrs = JSON.stringify(all);
  return el;
}

// msg is words to show later: a string key and its arguments. put shows
// one, or text as it is (a server's words) when given a string.
function msg(key, ...args) { return { key, args }; }

function put(el, words) {
  if (words && typeof words === "object") return tr(el, words.key, ...words.args);
  el.textContent = words ?? "";
  delete el.dataset.i18n;
  delete el.dataset.i18nArgs;
  return el;
}

function words(w) { return w && typeof w === "object" ? t(w.key, ...w.args) : (w ?? ""); }

// applyLanguage says every marked string of the page again in the
// language chosen, and the words CSS draws.
function applyLanguage() {
  const root = document.documentElement;
  root.lang = state.lang;
  document.title = t("pageTitle");
  for (const el of document.querySelectorAll("[data-i18n]")) {
    el.textContent = t(el.dataset.i18n, ...(el.dataset.i18nArgs ? JSON.parse(el.dataset.i18nArgs) : []));
  }
  for (const el of document.querySelectorAll("[data-i18n-attrs]")) {
    for (const [attr, [key, ...args]] of Object.entries(JSON.parse(el.dataset.i18nAttrs))) el.setAttribute(attr, t(key, ...args));
  }
  root.style.setProperty("--t-empty", JSON.stringify(t("emptyChat")));
  root.style.setProperty("--t-sending", JSON.stringify(t("sendingMark")));
  root.style.setProperty("--t-note", JSON.stringify(t("notificationMark")));
  const b = $("lang-button");
  tr(b.querySelector(".code"), "switchLanguageShort");
  trAttr(b, "aria-label", "switchLanguage");
  trAttr(b, "title", "switchLanguage");
  b.lang = state.lang === "fr" ? "en" : "fr"; // it names the other language in itself
}

// setLanguage switches the chat's language, at once, and keeps the
// choice for the account signed in: on this browser, and, unless the
// choice came from there, in the person's settings on the server, so that
// their other devices and the answers of turns follow it. The next turns
// carry its locale.
function setLanguage(lang, fromSettings) {
  if (!locales[lang] || lang === state.lang) return;
  state.lang = lang;
  if (!fromSettings) {
    state.languageUnsaved = true;
    syncLanguage();
  }
  if (prefs) {
    prefs.setItem("purser.lang", lang);
    const key = languageKey();
    if (key) prefs.setItem(key, lang);
  }
  applyLanguage();
  applyTheme();
  showStatus();
  for (const u of state.uploads.values()) if (u.phase) setUpload(u, u.phase, u.detail);
  countUnread();
  showHistoryStatus();
  showTitle();
  showExpiries();
  showApproveAll();
  fitComposer();
  if (state.view === "conversations") loadConversations(false);
}

// Numbers, sizes and dates the chat formats itself follow the locale.
function number(n, digits) {
  return new Intl.NumberFormat(locale(), { maximumFractionDigits: digits ?? 2, minimumFractionDigits: digits ?? 0 }).format(n);
}

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

// setStatus says how the connection is, by a string key.
function setStatus(key) {
  state.connStatus = key;
  showStatus();
}

function showStatus() {
  const sending = state.outbox.some((o) => o.frame.type === "message");
  const retrying = state.outbox.some((o) => state.retries.has(o.id));
  tr($("status"), retrying ? "retrying" : sending ? "sending" : state.connStatus);
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
  if (state.layout.open && !wasOpen) { revealChat(); focusInside(); }
  if (!state.layout.open && wasOpen && document.hasFocus()) $("launcher").focus();
}

// focusInside puts the keyboard where the person will type.
function focusInside() {
  if (!$("switch").hidden) $("switch-keep").focus();
  else if (!$("signin").hidden) $("token").focus();
  else if (state.view === "inbox") $("inbox-close").focus();
  else if (state.view === "conversations") focusActiveOption();
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
  trAttr(b, "title", isDark() ? "lightTheme" : "darkTheme");
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
  if (state.sink) { state.sink.appendChild(li); return; }
  const t = $("transcript");
  const atEnd = nearEnd();
  // The "Thinking…" bubbles stay last.
  const firstThinking = t.querySelector(":scope > li.thinking");
  if (firstThinking && !li.classList.contains("thinking")) t.insertBefore(li, firstThinking);
  else t.appendChild(li);
  if (atEnd || li.classList.contains("user")) toEnd();
}

// The transcript scrolls inside #scroller, below the history status line.
function nearEnd() {
  const s = $("scroller");
  return s.scrollHeight - s.scrollTop - s.clientHeight < 40;
}

function toEnd() {
  const s = $("scroller");
  s.scrollTop = s.scrollHeight;
  if (state.history) state.history.pinned = true;
}

// shown finds an element of the conversation by selector, in the page of
// history being built as well as in the transcript.
function shown(selector) {
  return (state.sink && state.sink.querySelector(selector)) || $("transcript").querySelector(selector);
}

function mine(id) { return shown(`li.user[data-id="${CSS.escape(id)}"]`); }

// Minimal markdown, built as DOM nodes: paragraphs, line breaks, lists,
// headings, code, bold, italic and http(s)/mailto links. Anything else,
// HTML included, stays text. A backslash before ASCII punctuation makes
// it a literal character, as in CommonMark: the server quotes text from
// outside (a mail's subject, a file name) this way, so "\[x\](https\://…)"
// is text, never a link.
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

// inlinePattern's first alternative is an escaped character: matched
// where it stands, it is text, and no other alternative can start on it
// (an escaped "*" or "]" neither opens nor closes anything, and "https\://"
// is no autolink, since the autolink needs "://" unbroken). Inside bold,
// italic and a link's label an escaped character is skipped over the same
// way, so it cannot close them.
const inlinePattern = /\\([!-\/:-@[-`{-~])|`([^`]+)`|\*\*((?:\\.|[^*\\])+)\*\*|__((?:\\.|[^_\\])+)__|\*((?:\\.|[^*\\\s])(?:\\.|[^*\\])*)\*|\[((?:\\.|[^\]\\])+)\]\(([^)\s]+)\)|(https?:\/\/[^\s<>()\\]+[^\s<>().,;:!?'"\\])/g;

function inline(parent, text) {
  let at = 0;
  for (const m of text.matchAll(inlinePattern)) {
    if (m.index > at) parent.appendChild(document.createTextNode(text.slice(at, m.index)));
    at = m.index + m[0].length;
    let el;
    if (m[1] !== undefined) el = document.createTextNode(m[1]);
    else if (m[2] !== undefined) { el = document.createElement("code"); el.textContent = m[2]; }
    else if (m[3] !== undefined || m[4] !== undefined) { el = document.createElement("strong"); el.textContent = plain(m[3] ?? m[4]); }
    else if (m[5] !== undefined) { el = document.createElement("em"); el.textContent = plain(m[5]); }
    else {
      const href = m[7] ?? m[8];
      el = safeLink(href, m[6] !== undefined ? plain(m[6]) : m[8]);
    }
    parent.appendChild(el);
  }
  if (at < text.length) parent.appendChild(document.createTextNode(text.slice(at)));
}

// plain is markdown text shown as plain text (a proposal's summary, a
// notification): its backslash escapes removed, nothing else changed.
function plain(text) {
  return String(text ?? "").replace(/\\([!-\/:-@[-`{-~])/g, "$1");
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

// humanTool names a tool in the person's language.
function humanTool(name) {
  const own = toolNames[state.lang] && toolNames[state.lang][name];
  return own || String(name || "").replaceAll("_", " ");
}

// citations adds the answer's sources: each links to the tool line it
// cites in this conversation, or to its address when the server names one.
function citations(li, answer) {
  const cites = answer.citations || [];
  if (!cites.length) return;
  const box = document.createElement("div");
  box.className = "citations";
  trAttr(box, "aria-label", "sources");
  box.appendChild(tr(document.createElement("span"), "sourcesLead"));
  const changed = answer.added || answer.updated || answer.deleted;
  for (const c of cites) {
    let label = msg("tool", c.tool);
    if (changed && /expense$/.test(c.tool || "")) label = msg("expenseNumber", changed.id);
    if (c.label) label = c.label;
    let a;
    if (c.kind) {
      // A record found by search: it opens here, fetched with the
      // person's token (a plain link would carry none).
      a = document.createElement("a");
      a.href = "#";
      a.textContent = c.title || c.kind;
      if (typeof c.score === "number") trAttr(a, "title", "relevance", Math.round(c.score * 100));
      a.onclick = (ev) => { ev.preventDefault(); openRecord(li, c); };
      a.dataset.kind = c.kind;
    } else if (c.url) {
      a = safeLink(c.url, words(label));
    } else {
      a = document.createElement("a");
      a.href = "#call-" + c.call_id;
      put(a, label);
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

// openRecord shows the record a citation names below its answer: an
// entry's date, amount, description and category with the statement it
// came from, a document's name and entries with a download, or the
// conversation a message is in. Opening it again closes it.
async function openRecord(li, c) {
  const key = c.kind + ":" + c.id;
  const open = li.querySelector(".record");
  if (open) { open.remove(); if (open.dataset.key === key) return; }
  const box = document.createElement("div");
  box.className = "record";
  box.dataset.key = key;
  box.setAttribute("role", "region");
  box.setAttribute("aria-label", c.title || c.kind);
  li.appendChild(box);
  const row = (key, value) => {
    const p = document.createElement("p");
    const b = tr(document.createElement("b"), "recordField", key);
    p.append(b, document.createTextNode(value));
    box.appendChild(p);
    return p;
  };
  try {
    if (c.kind === "message") {
      const m = /^\/v1\/conversations\/([^/]+)\//.exec(c.url || "");
      row("said", c.title || "");
      if (m) {
        const go = document.createElement("button");
        go.type = "button";
        go.className = "secondary";
        tr(go, "openThatConversation");
        go.onclick = () => openConversation(decodeURIComponent(m[1]));
        box.appendChild(go);
      }
      return;
    }
    if (c.kind === "entry") {
      const e = await api("GET", c.url);
      row("date", dateText(e.date));
      row("amount", moneyText(e.amount));
      row("description", e.description || "");
      row("category", e.category || "");
      if (e.source) await documentRows(box, row, "/v1/documents/" + encodeURIComponent(e.source));
      return;
    }
    await documentRows(box, row, c.url);
  } catch {
    box.textContent = "";
    box.appendChild(tr(document.createElement("p"), "recordFailed"));
  }
}

// documentRows adds a document's name, what was read from it, and a
// download of the file when it is still kept.
async function documentRows(box, row, url) {
  const d = await api("GET", url);
  const p = row("document", d.filename || d.id);
  if (d.entries && d.entries.length) row("entries", number(d.entries.length));
  if (!d.file_kept) return;
  const dl = document.createElement("button");
  dl.type = "button";
  dl.className = "secondary download";
  tr(dl, "download");
  dl.onclick = async () => {
    try {
      const resp = await fetch(url + "?download=1", { headers: { Authorization: "Bearer " + state.token } });
      if (!resp.ok) throw new Error("HTTP " + resp.status);
      const href = URL.createObjectURL(await resp.blob());
      const a = document.createElement("a");
      a.href = href;
      a.download = d.filename || "document";
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(href), 10000);
    } catch {
      tr(dl, "downloadFailed");
    }
  };
  p.appendChild(dl);
}

// moneyText writes signed minor units in their currency, the locale's
// way (£1,234.56; 1 234,56 €).
function moneyText(m) {
  if (!m || typeof m.minor !== "number") return "";
  const digits = ({ JPY: 0, KRW: 0, HUF: 0, ISK: 0, BHD: 3, KWD: 3, OMR: 3, JOD: 3, TND: 3 })[m.currency] ?? 2;
  try {
    return new Intl.NumberFormat(locale(), { style: "currency", currency: m.currency }).format(m.minor / 10 ** digits);
  } catch {
    return number(m.minor / 10 ** digits, digits) + " " + m.currency;
  }
}

// dateText writes a day (2026-11-27) the locale's way (27 Nov 2026,
// 27 nov. 2026); what is not a day stays as it is.
function dateText(day) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(String(day || ""));
  if (!m) return String(day || "");
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return new Intl.DateTimeFormat(locale(), { day: "numeric", month: "short", year: "numeric" }).format(d);
}

// ---- connection ----

// accountOf is who a token says it is for, {user, tenant}, or null when
// it cannot be read. It is only shown: the server checks every token.
function accountOf(token) {
  try {
    const part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const claims = JSON.parse(atob(part.padEnd(part.length + ((4 - (part.length % 4)) % 4), "=")));
    if (typeof claims.sub !== "string" || typeof claims.tenant !== "string") return null;
    return { user: claims.sub, tenant: claims.tenant };
  } catch {
    return null;
  }
}

function accountName(token) {
  const a = accountOf(token);
  return a ? a.user + " (" + a.tenant + ")" : msg("unreadableAccount");
}

function sameAccount(a, b) {
  const x = accountOf(a), y = accountOf(b);
  return !!x && !!y && x.user === y.user && x.tenant === y.tenant;
}

// askSwitch asks, before anything is done with it, whether a token from
// the address's fragment for another account than the tab's may replace
// the tab's: a link can carry anyone's token. Until the person says yes
// the tab's own token stays the one stored (the Gmail page reads it).
function askSwitch(next, current) {
  clearTimeout(state.retry);
  $("signin").hidden = true;
  $("chat").hidden = true;
  $("inbox").hidden = true;
  $("conversations").hidden = true;
  $("inbox-button").hidden = true;
  $("conversations-button").hidden = true;
  for (const id of ["switch-to", "switch-accept-name"]) put($(id), accountName(next));
  for (const id of ["switch-from", "switch-keep-name"]) put($(id), accountName(current));
  $("switch").hidden = false;
  setStatus("askSwitch");
  $("switch-keep").onclick = () => {
    $("switch").hidden = true;
    useToken(current, false);
  };
  $("switch-accept").onclick = () => {
    $("switch").hidden = true;
    forgetAccount();
    useToken(next, false);
  };
  $("switch-keep").focus();
}

// forgetAccount drops what this tab kept for the account it leaves: its
// conversation, the decisions it made and what it never got acked (which
// must not be sent again as someone else).
function forgetAccount() {
  for (const key of ["token", "conversation", "outbox", "decided"]) store.removeItem("purser." + key);
  state.conversation = "";
  state.outbox = [];
  state.decided = {};
  state.history = null;
}

function signIn(message) {
  state.token = "";
  store.removeItem("purser.token");
  $("account").hidden = true;
  if (state.ws) { const ws = state.ws; state.ws = null; ws.close(); }
  clearTimeout(state.retry);
  $("chat").hidden = true;
  $("inbox").hidden = true;
  $("conversations").hidden = true;
  $("signin").hidden = false;
  $("inbox-button").hidden = true;
  $("conversations-button").hidden = true;
  setStatus(message || "signedOut");
}

function useToken(token, fromHost) {
  if (!token) return;
  const changed = token !== state.token;
  state.token = token;
  state.tokenFromHost = fromHost;
  if (!fromHost) store.setItem("purser.token", token);
  put($("account"), accountName(token));
  $("account").hidden = false;
  // Each person keeps their own language: the account's, when it chose one.
  const key = languageKey();
  const kept = prefs && key && prefs.getItem(key);
  if (kept && locales[kept]) setLanguage(kept);
  else if (prefs && key) prefs.setItem(key, state.lang);
  if (changed || !state.ws) connect();
}

// expired asks the host for a fresh token once; without one, sign in.
function expired() {
  if (state.tokenFromHost && !state.askedHost) {
    state.askedHost = true;
    state.token = "";
    setStatus("renewing");
    toHost({ type: "purser:need-token" });
    return;
  }
  signIn("sessionExpired");
}

function connect() {
  clearTimeout(state.retry);
  $("signin").hidden = true;
  showView(state.view);
  $("inbox-button").hidden = false;
  $("conversations-button").hidden = false;
  if (state.layout.open && document.hasFocus() && document.activeElement === document.body) focusInside();
  setStatus("connecting");
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
    state.restarting = false;
    state.askedHost = false;
    setStatus("connected");
    if (state.lastSeq >= 0) {
      // Catch up after a drop: what was missed. (A reload shows the
      // conversation from its history instead.)
      state.catchingUp = true;
      ws.send(JSON.stringify({ type: "resume", after_seq: state.lastSeq }));
    }
    // What was written but never acked goes again, with the same ids; a
    // resend still waiting out its back-off would repeat this: dropped.
    for (const r of state.retries.values()) { clearTimeout(r.timer); r.timer = null; }
    for (const o of state.outbox) ws.send(JSON.stringify(o.frame));
    ws.send(JSON.stringify({ type: "ping" }));
    loadInbox();
    syncLanguage();
    // The first time (or after the history could not be read): the
    // conversation of this tab, from the server's history. The socket is
    // open first, so nothing falls between the page and the live frames.
    const h = state.history;
    if (!h && !state.conversation) openLatest();
    else if (!h || (h.initial && h.failed)) openConversation(state.conversation, !state.conversation);
  };
  ws.onmessage = (ev) => {
    let f;
    try { f = JSON.parse(ev.data); } catch { return; }
    handle(f);
  };
  ws.onclose = (ev) => {
    if (state.ws !== ws) return;
    if (ev.code === 4001) { expired(); return; }
    // 1012: the server is restarting (a rolling deploy): connect again at
    // once, which reaches another replica, and resume; until a socket
    // opens, failures mean the restart is not over, not a refusal.
    if (ev.code === 1012) state.restarting = true;
    if (!state.opened && ++state.failures >= 3 && !state.restarting) {
      if (state.tokenFromHost && !state.askedHost) { expired(); return; }
      signIn("couldNotConnect");
      return;
    }
    const now = state.opened && (ev.code === 1008 || ev.code === 1012);
    const wait = now ? 0 : Math.min(15000, 1000 * 2 ** state.failures);
    setStatus(now ? "catchingUp" : "disconnected");
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
  forgetRetry(id);
  const i = state.outbox.findIndex((o) => o.id === id);
  if (i < 0) return null;
  const [o] = state.outbox.splice(i, 1);
  save("outbox", state.outbox);
  showStatus();
  return o;
}

// Back-offs before each resend of a frame the server could not queue
// ("unavailable": the bus or the notifier did not answer in time). Such a
// frame may have been queued all the same (a publish that timed out), so
// it goes again with its own id, which the server takes as the same turn;
// after the last one, the error stands.
const retryWaits = [1000, 2000, 4000, 8000, 8000];

// retryLater keeps a frame of the outbox the server could not queue and
// writes it again after a back-off. False when the error is final: another
// code, a frame not (or no longer) waiting, or the tries spent.
function retryLater(err) {
  if (!err || !err.id || err.code !== "unavailable") return false;
  if (!state.outbox.some((o) => o.id === err.id)) return false;
  const r = state.retries.get(err.id) || { tries: 0, timer: null };
  if (r.tries >= retryWaits.length) return false;
  clearTimeout(r.timer);
  r.timer = setTimeout(() => resend(err.id), retryWaits[r.tries]);
  r.tries++;
  state.retries.set(err.id, r);
  showStatus();
  return true;
}

// resend writes a frame again when its back-off is over, unless it was
// answered meanwhile (settled) or a reconnect wrote it already (which
// clears the timer). With the socket down, the next connect writes it.
function resend(id) {
  const r = state.retries.get(id);
  if (!r || !r.timer) return;
  r.timer = null;
  const o = state.outbox.find((x) => x.id === id);
  if (!o || !state.ws || state.ws.readyState !== WebSocket.OPEN) return;
  state.ws.send(JSON.stringify(o.frame));
}

// forgetRetry ends the retries of a frame that was answered.
function forgetRetry(id) {
  const r = state.retries.get(id);
  if (!r) return;
  clearTimeout(r.timer);
  state.retries.delete(id);
}

// ---- frames ----

// handle takes one frame from the socket, or (streamed) from an upload's
// event stream. Frames of every conversation of the person come on the
// socket; the transcript shows those of the one on show. A frame of an
// upload comes both ways, in either order, with the same seq: it is shown
// once. Only the socket moves lastSeq, so that it still brings, in order,
// the frames before a streamed one.
function handle(f, streamed) {
  if (f.seq) {
    if (f.seq <= state.lastSeq) return; // shown already
    if (streamed) {
      if (state.streamed.has(f.seq)) return;
      state.streamed.add(f.seq);
    } else {
      state.lastSeq = f.seq;
      if (state.streamed.delete(f.seq)) return; // shown from the stream
    }
  }
  tellChanged(f);
  switch (f.type) {
    case "ack": {
      const id = f.ack && f.ack.id;
      if (!id) return;
      settled(id);
      if (f.turn_id) {
        state.turnOf.set(id, f.turn_id);
        const card = state.cards.get(id);
        if (card) { state.cards.delete(id); state.cards.set(f.turn_id, card); }
      }
      const li = mine(id);
      if (li) li.classList.remove("pending"), li.classList.add("acked");
      return;
    }
    case "pong":
      state.catchingUp = false;
      return;
  }
  const conv = f.conversation_id;
  if (conv && conv !== state.conversation) {
    if (!state.conversation) {
      // A tab with no conversation of its own follows the one the person
      // is having elsewhere.
      openConversation(conv, false);
      state.history.buffer.push(f);
      return;
    }
    // Another conversation's frame: refused frames of this tab's are
    // settled (but for those to retry); the list, when open, shows the
    // conversation moved up.
    if (f.type === "error" && f.error && f.error.id && !retryLater(f.error)) settled(f.error.id);
    if (f.type === "user_message" && state.view === "conversations") loadConversations(false);
    return;
  }
  const h = state.history;
  if (h && h.initial) { h.buffer.push(f); return; } // shown after the first page
  render(f, true);
}

// ledgerChange is what a frame says changed in the person's money data,
// as the host is told it, or null: an answer after an approved change, a
// finished import.
function ledgerChange(f) {
  if (f.type === "answer" && f.answer) {
    for (const change of ["added", "updated", "deleted"]) {
      const e = f.answer[change];
      if (e) return { what: "expense", change, ids: Number.isInteger(e.id) ? [e.id] : [] };
    }
  }
  if (f.type === "notification" && f.notification && f.notification.kind === "import_completed") {
    const doc = f.notification.data && f.notification.data.document_id;
    return { what: "import", change: "imported", ids: typeof doc === "string" ? [doc] : [] };
  }
  return null;
}

// tellChanged tells the host page, once per frame, that a live frame
// changed the ledger, whichever conversation it is of. A frame seen again
// (resumed after a reconnect, redelivered) is known by its seq or by its
// turn or notification id.
function tellChanged(f) {
  const c = ledgerChange(f);
  if (!c) return;
  const keys = [];
  if (f.seq) keys.push("seq:" + f.seq);
  if (f.type === "answer" && f.turn_id) keys.push("turn:" + f.turn_id);
  if (f.type === "notification" && f.notification.id) keys.push("note:" + f.notification.id);
  if (keys.some((k) => state.told.has(k))) return;
  for (const k of keys) state.told.add(k);
  const msg = { type: "purser:changed", what: c.what, change: c.change };
  if (c.ids.length) msg.ids = c.ids;
  toHost(msg);
}

// render shows one frame of the conversation on show: live (from the
// socket) or from its history (while state.sink is set).
function render(f, live) {
  if (live && f.turn_id) turnStarted(f.turn_id);
  switch (f.type) {
    case "user_message": {
      const m = f.user_message || {};
      const id = m.id || f.id || "";
      // An upload of this tab shows as its card, which has the text.
      if (live && f.turn_id && uploadCard(f.turn_id)) break;
      // A file sent with the message (from history, or another device)
      // shows by its name.
      let text = m.text ?? f.text ?? "";
      if (m.upload && m.upload.filename) text = "📎 " + m.upload.filename + (text ? " · " + text : "");
      if (!id || !mine(id)) userBubble(id, text).dataset.turnId = f.turn_id || "";
      showTitle();
      break;
    }
    case "token": {
      let b = state.streaming.get(f.turn_id);
      if (!b) { b = bubble("assistant streaming", ""); state.streaming.set(f.turn_id, b); }
      const atEnd = nearEnd();
      b.textContent += f.token.text;
      if (atEnd) toEnd();
      break;
    }
    case "clarify":
      finish(f.turn_id, "assistant clarify", f.clarify.question);
      break;
    case "answer": {
      const li = finish(f.turn_id, "assistant answer", f.answer.content);
      citations(li, f.answer);
      // The answer to an Approve all of this tab: it went through.
      const batch = live && state.cards.get(f.turn_id);
      if (batch && batch.batch) { state.cards.delete(f.turn_id); batch.settle(f.answer.batch); }
      break;
    }
    case "proposal":
      proposal(f);
      break;
    case "error":
      onError(f, live);
      break;
    case "tool_start":
    case "tool_result":
      toolLine(f);
      break;
    case "notification": {
      const n = f.notification;
      bubble("notification", plain(n.title));
      if (live) addNotification(n, true, !state.catchingUp);
      // A proposal that expired closes, saying so, wherever it shows.
      const expired = /expired$/.test(n.kind || "") && n.data && state.proposals.get(n.data.proposal_id);
      if (expired && expired.phase !== "closed") expired.expire();
      break;
    }
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

function onError(f, live) {
  if (!live) {
    finish(f.turn_id, "error", f.error.message);
    return;
  }
  let id = f.error.id;
  // A frame the server could not read is refused with no id (a server
  // that does not know Approve all refuses its frame so): while one is in
  // flight, that is taken as it, so that the proposals open again and it
  // is not sent again after a reconnect.
  if (!id && f.error.code === "bad_frame" && state.batch) id = state.batch.id;
  // Not queued, maybe for a moment: the frame waits, pending, and goes again.
  if (retryLater(f.error)) return;
  if (id) {
    // An error about one of this tab's frames: it was received and
    // refused, so it is not sent again.
    settled(id);
    const thinking = state.thinking.get(id);
    if (thinking) { thinking.remove(); state.thinking.delete(id); }
    const li = mine(id);
    if (li) li.classList.replace("pending", "failed");
  }
  // A refused edit leaves the proposal waiting: its card opens again. A
  // proposal decided elsewhere (another tab) or expired stays closed.
  const card = state.cards.get(f.turn_id) || (id && state.cards.get(id));
  if (card && f.error.code === "proposal_invalid") card.gone(f.error.message, f.error.refused);
  else if (card && f.error.code === "proposal_expired" && !card.batch) card.expire();
  else if (card) card.reopen();
  if (f.turn_id) put($("tool-status"), "");
  finish(f.turn_id, "error", f.error.message).setAttribute("role", "alert");
  if (card && card.batch) toEnd(); // the refusal of what the person just did, in view
}

// finish ends a turn's bubble: the streamed one becomes the final text.
function finish(turnID, kind, text) {
  if (!state.sink) put($("tool-status"), "");
  let b = !state.sink && turnID && state.streaming.get(turnID);
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
  let li = shown("#" + CSS.escape(id));
  if (state.sink && !state.sink.contains(li) && li) return; // a later page has its outcome
  if (!li) {
    li = bubble("tool", "");
    li.id = id;
    li.tabIndex = -1;
  }
  const name = t.tool; // said by the strings, in the language on show
  const status = state.sink ? document.createElement("div") : $("tool-status");
  if (f.type === "tool_start") {
    // A start that comes after its call's result (redelivered after a
    // crash) changes nothing: the call is over.
    if (li.dataset.done) return;
    tr(li, "toolRunning", name);
    tr(status, "toolRunning", name);
  } else {
    li.dataset.done = "1";
    tr(li, t.status === "failed" ? "toolFailed" : "toolDone", name);
    put(status, "");
  }
}

// proposal shows a change waiting for a yes as a card: its summary, when
// it expires, and Approve, Edit and Reject. The card (see state.proposals)
// is open while it waits, busy while an Approve all takes it, closed once
// decided or expired; an expired card says so, never "declined".
function proposal(f) {
  const p = f.proposal;
  const li = finish(f.turn_id, "assistant proposal", "");
  li.textContent = "";
  li.dataset.proposalId = p.proposal_id;
  li.setAttribute("role", "group");
  trAttr(li, "aria-label", "proposalLabel", plain(p.summary));
  const text = document.createElement("div");
  text.className = "summary";
  text.textContent = plain(p.summary);
  li.appendChild(text);
  const expires = document.createElement("time");
  expires.className = "expires";
  const actions = document.createElement("div");
  actions.className = "actions";
  const decided = document.createElement("div");
  decided.className = "decided";
  decided.setAttribute("role", "status");
  const form = editForm(p);
  form.hidden = true;
  const controls = (on) => { for (const x of li.querySelectorAll("button, input")) x.disabled = !on; };

  const card = {
    id: p.proposal_id,
    li,
    expires,
    expiresAt: new Date(p.expires_at),
    phase: "open",
    open() { return card.phase === "open" && !card.expired(); },
    expired() { return !(card.expiresAt > new Date()); },
    close(words) {
      card.phase = "closed";
      controls(false);
      put(decided, words);
      showExpiry(card);
      showApproveAll();
    },
    // busy: an Approve all takes this card; it waits for the outcome.
    busy() {
      card.phase = "busy";
      controls(false);
      tr(decided, "approving");
    },
    // settle: the Approve all that took this card went through; the
    // tool may still have refused this one (failed, with the reason).
    settle(item) {
      if (item && item.status === "failed") {
        card.close(msg("notDone", plain(item.summary)));
        return;
      }
      state.decided[card.id] = "approve";
      save("decided", state.decided);
      card.close(label("approve"));
    },
    gone() {
      if (card.expired()) { card.expire(); return; }
      state.decided[card.id] = "gone";
      save("decided", state.decided);
      card.close(label("gone"));
    },
    reopen() {
      delete state.decided[card.id];
      save("decided", state.decided);
      if (card.expired()) { card.expire(); return; }
      card.phase = "open";
      controls(true);
      put(decided, "");
      showExpiry(card);
      showApproveAll();
    },
    expire() {
      li.classList.add("expired");
      card.close(msg("expired"));
    },
  };
  const decide = (decision, args) => {
    if (!card.open()) return;
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
  const button = (decision, key, cls) => {
    const b = tr(document.createElement("button"), key);
    b.type = "button";
    b.dataset.decision = decision;
    if (cls) b.className = cls;
    actions.appendChild(b);
    return b;
  };
  button("approve", "approve").onclick = () => decide("approve");
  const edit = button("edit", "edit", "secondary");
  edit.setAttribute("aria-expanded", "false");
  edit.onclick = () => {
    form.hidden = !form.hidden;
    edit.setAttribute("aria-expanded", String(!form.hidden));
    if (!form.hidden) { const first = form.querySelector("input"); if (first) first.focus(); }
  };
  button("reject", "reject", "secondary").onclick = () => decide("reject");
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
  li.append(expires, actions, form, decided);
  // A proposal of a newer turn replaces those still waiting from before
  // (the server's rule: one yes must not run a stale change).
  for (const old of state.proposals.values()) {
    if (old.turn !== (p.turn_id || f.turn_id) && old.phase === "open") old.close(msg("superseded"));
  }
  card.turn = p.turn_id || f.turn_id;
  state.proposals.set(card.id, card);
  const earlier = state.decided[p.proposal_id];
  if (p.status === "expired" || earlier === "expired") card.expire();
  else if (earlier) card.close(label(earlier));
  else if (p.status && p.status !== "pending") card.close(outcome(p.status)); // decided elsewhere (a replay says so)
  else if (card.expired()) card.expire();
  else { showExpiry(card); showApproveAll(); if (card.expiresAt - new Date() < 30000) showExpiries(); }
}

// outcome is what a replayed proposal's status reads as.
function outcome(status) {
  return msg({ approved: "approved", executed: "approved", rejected: "declined", expired: "expired", superseded: "superseded" }[status] || "noLongerOpen");
}

function label(decision) {
  return msg({ approve: "approved", reject: "declined", edit: "approvedWithChanges", gone: "noLongerOpen", expired: "expired" }[decision] || "noLongerOpen");
}

// showExpiry says, on an open card, when it expires ("Expires in 23 h"),
// the exact time in its tooltip; a card decided or expired says nothing
// more of it.
function showExpiry(card) {
  const el = card.expires;
  if (card.phase === "closed" || Number.isNaN(card.expiresAt.getTime())) {
    el.hidden = true;
    el.textContent = "";
    return;
  }
  el.hidden = false;
  el.dateTime = card.expiresAt.toISOString();
  el.textContent = expiryText(card.expiresAt - new Date());
  el.title = t("expiresAt", new Intl.DateTimeFormat(locale(), { dateStyle: "full", timeStyle: "short" }).format(card.expiresAt));
}

// expiryText is how long is left, in whole units, rounded down: a card
// never claims more time than it has.
function expiryText(ms) {
  const minutes = Math.floor(ms / 60000);
  if (minutes < 1) return t("expiresSoon");
  if (minutes < 60) return t("expiresIn", number(minutes) + " min");
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return t("expiresIn", number(hours) + " h");
  return t("expiresIn", t("days", Math.floor(hours / 24)));
}

// showExpiries updates every card's time left, and closes those whose
// time is up: an expired proposal cannot be approved any more. It runs
// again when the next card expires, or in half a minute at the latest.
function showExpiries() {
  clearTimeout(state.expiryTimer);
  let next = 30000;
  for (const card of state.proposals.values()) {
    if (card.phase === "closed") continue;
    if (card.expired()) { card.expire(); continue; }
    showExpiry(card);
    next = Math.min(next, card.expiresAt - new Date() + 50);
  }
  showApproveAll();
  state.expiryTimer = setTimeout(showExpiries, Math.max(250, next));
}

// pendingCards are the cards of the conversation on show that wait for a
// yes, oldest first.
function pendingCards() {
  return [...state.proposals.values()].filter((c) => c.open() && c.li.isConnected);
}

// showApproveAll shows Approve all above the message box while more than
// one proposal waits, and while one it sent is in flight (disabled).
function showApproveAll() {
  const b = $("approve-all");
  const batch = state.batch;
  const n = batch ? batch.cards.length : Math.min(pendingCards().length, maxBatch);
  b.hidden = n < 2;
  b.disabled = !!batch;
  if (b.hidden) return;
  tr(b.querySelector(".label"), batch ? "approving" : "approveAll", n);
  trAttr(b, "aria-label", batch ? "approving" : "approveAllLabel", n);
}

// maxBatch is how many proposals one approve_all may name (the server's
// limit); more wait for the next.
const maxBatch = 20;

// approveAll approves every pending proposal shown, in one confirm: the
// server takes all or none (one stale proposal refuses the batch), so
// the cards wait, busy, for the outcome, and open again if refused.
function approveAll() {
  const cards = pendingCards().slice(0, maxBatch);
  if (cards.length < 2 || state.batch) return;
  const id = randomId("c");
  const end = (how, items) => {
    if (state.batch === batch) state.batch = null;
    for (const c of cards) c[how]((items || []).find((i) => i && i.proposal_id === c.id));
    showApproveAll();
  };
  const batch = {
    id,
    cards,
    batch: true,
    // settle takes the answer's report of each proposal ran, if any.
    settle: (items) => end("settle", items),
    reopen: () => end("reopen"),
    // gone: refused as a whole, nothing done. The refusal lists the
    // proposals that made it refuse: those close (saying expired, for an
    // expired one); the others open again.
    gone: (why, refused) => {
      if (state.batch === batch) state.batch = null;
      for (const c of cards) {
        const r = (refused || []).find((x) => x && x.proposal_id === c.id);
        if (!r) c.reopen();
        else if (r.reason === "expired") c.expire();
        else c.gone();
      }
      showApproveAll();
    },
  };
  state.batch = batch;
  state.cards.set(id, batch);
  for (const c of cards) c.busy();
  showApproveAll();
  $("message").focus(); // the button it was on is disabled now
  send({ type: "confirm", id, conversation_id: state.conversation, decision: "approve_all", proposal_ids: cards.map((c) => c.id) });
}

// editForm is a form with one field per argument of the proposal; the
// server validates what comes back against the same tool's schema.
function editForm(p) {
  const form = document.createElement("form");
  form.className = "edit";
  trAttr(form, "aria-label", "editProposal");
  let args = p.args;
  if (typeof args === "string") { try { args = JSON.parse(args); } catch { args = {}; } }
  if (!args || typeof args !== "object" || Array.isArray(args)) args = {};
  const fields = [];
  for (const [key, value] of Object.entries(args)) {
    const id = randomId("f");
    const lab = document.createElement("label");
    lab.htmlFor = id;
    tr(lab, "argName", key);
    const input = document.createElement("input");
    input.id = id;
    input.name = key;
    input.autocomplete = "off";
    const kind = value === null ? "null" : typeof value;
    if (kind === "object") input.value = JSON.stringify(value);
    else if (kind === "number") input.value = decimalText(value);
    else if (kind !== "null") input.value = String(value);
    if (kind === "number") input.inputMode = "decimal";
    fields.push({ key, kind, input });
    form.append(lab, input);
  }
  const actions = document.createElement("div");
  actions.className = "actions";
  const ok = tr(document.createElement("button"), "saveAndApprove");
  ok.type = "submit";
  ok.className = "save";
  const cancel = tr(document.createElement("button"), "cancel");
  cancel.type = "button";
  cancel.className = "secondary cancel";
  actions.append(ok, cancel);
  form.appendChild(actions);
  form.readArgs = () => {
    const out = {};
    for (const { key, kind, input } of fields) {
      const v = input.value.trim();
      if (v === "" && kind !== "string") { out[key] = null; continue; }
      if (kind === "number") { const n = parseDecimal(v); out[key] = Number.isFinite(n) ? n : v; continue; }
      if (kind === "boolean") { out[key] = v === "true"; continue; }
      if (kind === "object") { try { out[key] = JSON.parse(v); } catch { out[key] = v; } continue; }
      out[key] = v;
    }
    return out;
  };
  return form;
}

// decimalText is a number as the person writes it in their language
// (12,5 in French), without grouping, so it reads back as typed.
function decimalText(n) {
  return new Intl.NumberFormat(locale(), { useGrouping: false, maximumFractionDigits: 20 }).format(n);
}

// parseDecimal reads a number typed either way: 12.50, 12,50, 1 234,56
// or 1,234.56.
function parseDecimal(text) {
  let v = String(text).replace(/[\s\u00a0\u202f]/g, "");
  if (v.includes(",") && !v.includes(".")) v = v.replace(",", ".");
  else v = v.replaceAll(",", "");
  return v === "" ? NaN : Number(v);
}

// ---- the person's messages ----

// ensureConversation gives the tab a conversation when it has none: the
// first message (or document) starts it.
function ensureConversation() {
  if (state.conversation) return;
  state.conversation = randomId("web");
  store.setItem("purser.conversation", state.conversation);
  if (state.history) state.history.id = state.conversation;
}

function say(text) {
  ensureConversation();
  const id = randomId("m");
  const frame = { type: "message", id, conversation_id: state.conversation, text };
  try { frame.timezone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch { /* the server's default */ }
  frame.locale = locale(); // the language the person reads the chat in: the answer's
  userBubble(id, text).classList.add("pending");
  showTitle();
  const thinking = tr(bubble("assistant thinking", ""), "thinking");
  trAttr(thinking, "aria-label", "thinkingLabel");
  state.thinking.set(id, thinking);
  send(frame);
}

function userBubble(id, text) {
  const li = bubble("user", text);
  if (id) li.dataset.id = id;
  return li;
}


// ---- documents: the paperclip, drop and paste ----

// A document goes to POST /v1/uploads as multipart form data, with what
// the person typed as its message. It goes by XMLHttpRequest, since fetch
// cannot tell how much of a body has gone, and asks for server-sent
// events: "uploaded" once the file is stored, the turn's frames while it
// is read (tool_start … tool_result), then the frame that ends the turn (a
// proposal, mostly) and "done". Those frames reach the socket as well;
// handle shows each once, whichever way it comes first, so the proposal
// shows even while the socket is down.
//
// An upload is {id, file, message, conversation, li (its card in the
// transcript), turn (its turn id, from the stream's ack), kind (statement,
// receipt or document, from "uploaded"), tools (how many tool calls of its
// turn ended: reading it is one), ended (the type of the frame that ended
// its turn), phase}.

// canUpload: a document needs someone signed in.
function canUpload() {
  return !!state.token && $("signin").hidden && $("switch").hidden;
}

// attach uploads files one after another, into the conversation on show;
// what is in the composer goes with the first.
function attach(files) {
  files = [...(files || [])];
  if (!files.length || !canUpload()) return;
  if (state.view !== "chat") showView("chat");
  ensureConversation();
  const message = $("message");
  let text = message.value.trim();
  message.value = "";
  fitComposer();
  for (const file of files) {
    queueUpload(newUpload(file, text));
    text = "";
  }
}

function newUpload(file, text) {
  const u = { id: randomId("u"), file, message: text, conversation: state.conversation, turn: "", kind: "", ended: "", phase: "" };
  u.li = uploadBubble(u);
  state.uploads.set(u.id, u);
  showTitle();
  return u;
}

// queueUpload sends u after the uploads before it: one file at a time
// keeps the person within the rate limit and the turns in their order.
function queueUpload(u) {
  u.turn = u.kind = u.ended = "";
  u.tools = 0;
  delete u.li.dataset.turnId;
  setUpload(u, "queued");
  state.uploading = state.uploading.then(() => sendUpload(u));
}

// sendUpload posts u and follows its answer; it settles when the request
// is over, whatever its outcome.
function sendUpload(u) {
  if (!state.uploads.has(u.id)) return Promise.resolve(); // removed while it waited
  if (!state.token) {
    setUpload(u, "failed", msg("signedOutUpload"));
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    const body = new FormData();
    body.append("file", u.file, u.file.name || "pasted");
    if (u.message) body.append("message", u.message);
    if (u.conversation) body.append("conversation_id", u.conversation);
    xhr.open("POST", "/v1/uploads");
    xhr.setRequestHeader("Authorization", "Bearer " + state.token);
    xhr.setRequestHeader("Accept", "text/event-stream");
    setUpload(u, "sending", 0);
    xhr.upload.onprogress = (ev) => {
      if (ev.lengthComputable && ev.total > 0) setUpload(u, "sending", ev.loaded / ev.total);
    };
    xhr.upload.onload = () => setUpload(u, "reading");
    // The events so far: the response grows while the turn goes on.
    let read = 0;
    const events = () => {
      if (xhr.status !== 200 || !/^text\/event-stream/i.test(xhr.getResponseHeader("Content-Type") || "")) return;
      const text = xhr.responseText;
      for (let end; (end = text.indexOf("\n\n", read)) >= 0; read = end + 2) uploadEvent(u, text.slice(read, end));
    };
    xhr.onprogress = events;
    xhr.onload = () => {
      events();
      uploadAnswered(u, xhr);
      resolve();
    };
    xhr.onerror = xhr.ontimeout = () => {
      setUpload(u, "failed", msg("didNotReach"));
      resolve();
    };
    xhr.onabort = () => resolve();
    xhr.send(body);
  });
}

// kindNames name what the server read a file as (by its content, never
// its name), as the kinds of chat-strings.js.
const kindNames = { text: "statement", statement: "statement", image: "receipt", receipt: "receipt", pdf: "document", document: "document" };

// uploadEvent takes one server-sent event of u's stream.
function uploadEvent(u, block) {
  let event = "message";
  let data = "";
  for (const raw of block.split("\n")) {
    const line = raw.replace(/\r$/, "");
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data += (data ? "\n" : "") + line.slice(5).replace(/^ /, "");
  }
  let f;
  try { f = JSON.parse(data); } catch { return; }
  if (!f || typeof f !== "object") return;
  switch (event) {
    case "uploaded":
      u.kind = kindNames[f.kind] || "";
      setUpload(u, "reading");
      return;
    case "ack":
      bindTurn(u, f.turn_id);
      return;
    case "done":
      if (!u.ended) u.ended = f.ended_by || "done";
      return;
    case "token":
      return; // the socket streams the tokens; the answer frame follows
  }
  if (!f.type) f.type = event;
  bindTurn(u, f.turn_id);
  if (f.type === "tool_result") u.tools++;
  // A frame without a seq never reaches the socket (the stream's own
  // timeout): it is shown from here. Tool progress is live only, never
  // replayed when the socket comes back, so it shows from here too (a
  // call's line is one, whichever way its frames come).
  if (f.seq || f.type === "error" || f.type === "tool_start" || f.type === "tool_result") handle(f, true);
  if (["proposal", "clarify", "answer", "error"].includes(f.type)) {
    u.ended = f.type;
    setUpload(u, f.type === "error" ? "unread" : "done");
  }
}

// bindTurn learns u's turn id. The socket may have shown the upload's
// message as a bubble of its own before: the card stands for it.
function bindTurn(u, turn) {
  if (!turn || u.turn === turn) return;
  u.turn = turn;
  u.li.dataset.turnId = turn;
  const twin = shown(`li.user:not(.upload)[data-turn-id="${CSS.escape(turn)}"]`);
  if (twin) twin.remove();
}

// uploadTitle names a conversation begun with an upload: what was said
// with it, else the file's name.
function uploadTitle(li) {
  const said = li.querySelector(".said");
  return said ? said.textContent : li.querySelector(".name").textContent;
}

// uploadCard is the card of the upload whose turn is turn, if shown.
function uploadCard(turn) {
  return shown(`li.upload[data-turn-id="${CSS.escape(turn)}"]`);
}

// uploadAnswered ends u when its request is over.
function uploadAnswered(u, xhr) {
  if (xhr.status === 200) {
    // Without an ending frame (a plain JSON answer, a stream cut short)
    // the turn's outcome comes on the socket.
    if (!u.ended || u.ended === "done") setUpload(u, "sent");
    return;
  }
  if (xhr.status === 401) {
    setUpload(u, "failed", msg("sessionExpiredUpload"));
    expired();
    return;
  }
  const err = apiError(xhr.responseText);
  // The same file again would be refused again: it can only be removed.
  const final = [400, 413, 415].includes(xhr.status);
  setUpload(u, final ? "refused" : "failed", uploadProblem(xhr.status, err));
}

// apiError reads an HTTP API error, {"error": code, "detail": message}
// (or {"error": {code, message}}), as {code, message}; empty when the body
// is not one.
function apiError(body) {
  let e;
  try { e = JSON.parse(body); } catch { return {}; }
  if (!e || typeof e !== "object") return {};
  if (e.error && typeof e.error === "object") return { code: e.error.code, message: e.error.message };
  return { code: e.error, message: e.detail };
}

// uploadProblem says in plain words why the server refused a file: the
// server's own message, which names the limit or the kinds it reads, or
// else what the status means.
function uploadProblem(status, err) {
  const said = sentence(plain(err.message));
  if (said) return said;
  switch (status) {
    case 413: return msg("tooBig");
    case 415: return msg("cannotRead");
    case 429: return msg("tooMany");
    case 400: return msg("uploadRefused");
  }
  if (status >= 500) return msg("serverBusy");
  return msg("uploadFailed", status);
}

// sentence makes a server's message a sentence: capital first, full stop.
function sentence(text) {
  const t = String(text || "").trim();
  if (!t) return "";
  return t[0].toUpperCase() + t.slice(1) + (/[.!?…]$/.test(t) ? "" : ".");
}

// uploadBubble is u's card: the file, the message with it, a progress bar
// and what is happening; after a failure, Try again and Remove.
function uploadBubble(u) {
  const li = document.createElement("li");
  li.className = "user upload";
  li.dataset.upload = u.id;
  const name = u.file.name || t("pastedFile");
  const file = document.createElement("div");
  file.className = "file";
  const title = document.createElement("span");
  title.className = "name";
  title.textContent = name;
  const size = document.createElement("span");
  size.className = "size";
  size.textContent = byteSize(u.file.size);
  u.size = size; // said again in another language by setUpload
  file.append(documentIcon(), title, size);
  li.appendChild(file);
  if (u.message) {
    const said = document.createElement("p");
    said.className = "said";
    said.textContent = u.message;
    li.appendChild(said);
  }
  const bar = document.createElement("div");
  bar.className = "bar";
  bar.setAttribute("role", "progressbar");
  trAttr(bar, "aria-label", "uploadOf", name);
  bar.setAttribute("aria-valuemin", "0");
  bar.setAttribute("aria-valuemax", "100");
  bar.appendChild(document.createElement("div")).className = "fill";
  const line = document.createElement("p");
  line.className = "state";
  const words = document.createElement("span");
  words.className = "phase";
  const pct = document.createElement("span");
  pct.className = "pct";
  pct.setAttribute("aria-hidden", "true"); // the bar says it, once
  line.append(words, pct);
  const actions = document.createElement("div");
  actions.className = "actions";
  actions.hidden = true;
  const again = tr(document.createElement("button"), "tryAgain");
  again.type = "button";
  again.className = "retry";
  trAttr(again, "aria-label", "tryAgainUpload", name);
  again.onclick = () => {
    queueUpload(u);
    $("message").focus(); // the button it was on hides
  };
  const drop = tr(document.createElement("button"), "remove");
  drop.type = "button";
  drop.className = "secondary remove";
  trAttr(drop, "aria-label", "removeFile", name);
  drop.onclick = () => {
    state.uploads.delete(u.id);
    li.remove();
    $("message").focus();
  };
  actions.append(again, drop);
  li.append(bar, line, actions);
  append(li);
  return li;
}

// setUpload shows u's phase: queued, sending (with the fraction sent),
// reading, done, sent (the outcome comes on the socket), unread (its turn
// ended in an error), failed (with the reason why; it may go another
// time) or refused (with the reason why; the same file would be again).
function setUpload(u, phase, detail) {
  u.phase = phase;
  u.detail = detail; // for saying it again in another language
  const li = u.li;
  const bar = li.querySelector(".bar");
  const fill = bar.firstChild;
  const said = li.querySelector(".state .phase");
  const pct = li.querySelector(".state .pct");
  const failed = phase === "failed" || phase === "unread" || phase === "refused";
  const kind = u.kind || "document";
  const old = li.querySelector(".problem");
  if (old) old.remove();
  li.classList.toggle("failed", failed);
  li.classList.toggle("done", phase === "done" || phase === "sent");
  li.querySelector(".actions").hidden = !failed;
  li.querySelector(".actions .retry").hidden = phase === "refused";
  bar.hidden = !["queued", "sending", "reading"].includes(phase);
  bar.classList.toggle("indeterminate", phase === "reading");
  pct.textContent = "";
  u.size.textContent = byteSize(u.file.size);
  switch (phase) {
    case "queued":
    case "sending": {
      const n = Math.round(100 * Math.min(1, Math.max(0, Number(detail) || 0)));
      const percent = new Intl.NumberFormat(locale(), { style: "percent" }).format(n / 100);
      bar.setAttribute("aria-valuenow", String(n));
      bar.setAttribute("aria-valuetext", phase === "queued" ? t("waiting") : t("percentSent", percent));
      fill.style.width = n + "%";
      said.textContent = t(phase === "queued" ? "waitingToUpload" : "uploading");
      if (phase === "sending") pct.textContent = percent;
      break;
    }
    case "reading":
      // How long reading takes is not known: the bar says it is busy.
      bar.removeAttribute("aria-valuenow");
      bar.setAttribute("aria-valuetext", t("readingShort", kind));
      fill.style.width = "";
      said.textContent = t("reading", kind);
      break;
    case "done":
      // Read only if a tool looked at it; the turn may have done otherwise.
      said.textContent = t(u.tools ? "read" : "uploaded", kind);
      break;
    case "sent":
      said.textContent = t("sentReplyInChat");
      break;
    case "unread":
      said.textContent = t("unread", kind);
      break;
    case "failed":
    case "refused": {
      said.textContent = t("notUploaded");
      const p = document.createElement("p");
      p.className = "problem";
      p.setAttribute("role", "alert");
      p.textContent = words(detail);
      li.querySelector(".state").after(p);
      break;
    }
  }
}

// byteSize is a file's size in the locale's numbers and units (1.5 KB,
// 1,5 Ko).
function byteSize(n) {
  if (!(n >= 0)) return "";
  const [b, kb, mb] = t("bytes");
  if (n < 1024) return number(n) + " " + b;
  if (n < 1024 * 1024) return number(n / 1024, n < 10 * 1024 ? 1 : 0) + " " + kb;
  return number(n / 1024 / 1024, 1) + " " + mb;
}

function documentIcon() {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  for (const [k, v] of Object.entries({ "aria-hidden": "true", viewBox: "0 0 24 24", width: "18", height: "18", fill: "none",
    stroke: "currentColor", "stroke-width": "2", "stroke-linecap": "round", "stroke-linejoin": "round" })) svg.setAttribute(k, v);
  for (const d of ["M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8z", "M14 2v6h6", "M8 13h8M8 17h5"]) {
    const path = document.createElementNS(ns, "path");
    path.setAttribute("d", d);
    svg.appendChild(path);
  }
  return svg;
}

// hasFiles: a drag that carries files (not text or a link).
function hasFiles(ev) {
  return !!ev.dataTransfer && [...ev.dataTransfer.types].includes("Files");
}

// dropping wires the panel as a drop target: while files are dragged over
// it, it says what dropping does; dropped, they are uploaded. A file
// dropped anywhere else in the frame is not opened by the browser.
function dropping() {
  const panel = $("panel");
  const target = $("drop-target");
  let depth = 0; // enters minus leaves: children fire their own
  const show = (on) => { target.hidden = !on; panel.classList.toggle("dragging", on); };
  panel.addEventListener("dragenter", (ev) => {
    if (!hasFiles(ev) || !canUpload()) return;
    ev.preventDefault();
    depth++;
    show(true);
  });
  panel.addEventListener("dragover", (ev) => {
    if (!hasFiles(ev) || !canUpload()) return;
    ev.preventDefault();
    ev.dataTransfer.dropEffect = "copy";
  });
  panel.addEventListener("dragleave", (ev) => {
    if (!hasFiles(ev)) return;
    depth = Math.max(0, depth - 1);
    if (!depth) show(false);
  });
  panel.addEventListener("drop", (ev) => {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    depth = 0;
    show(false);
    attach(ev.dataTransfer.files);
  });
  for (const type of ["dragover", "drop"]) {
    document.addEventListener(type, (ev) => { if (hasFiles(ev)) ev.preventDefault(); });
  }
  // A file pasted (a screenshot, a copied file) is uploaded; text pastes
  // as text.
  document.addEventListener("paste", (ev) => {
    const files = ev.clipboardData ? [...ev.clipboardData.files] : [];
    if (!files.length || !canUpload()) return;
    ev.preventDefault();
    attach(files);
  });
}

// ---- inbox and toasts ----

async function api(method, path, body) {
  const headers = { Authorization: "Bearer " + state.token };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (resp.status === 401) { expired(); throw new Error("unauthorized"); }
  if (!resp.ok) throw new Error("HTTP " + resp.status);
  return resp.json();
}

// syncLanguage agrees the chat's language with the person's settings
// once connected: a choice not yet saved is saved (again, after a failure);
// otherwise the language saved, from any device, is the chat's.
async function syncLanguage() {
  if (!state.token || !state.ws || state.ws.readyState !== WebSocket.OPEN) return;
  try {
    if (state.languageUnsaved) {
      const lang = state.lang;
      await api("PUT", "/v1/settings", { language: lang });
      if (state.lang === lang) state.languageUnsaved = false;
      return;
    }
    const { language } = await api("GET", "/v1/settings");
    if (language && !state.languageUnsaved) setLanguage(language, true);
  } catch { /* tried again on the next connect */ }
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
  title.textContent = plain(n.title);
  b.appendChild(title);
  if (n.body) {
    const body = document.createElement("p");
    body.textContent = plain(n.body);
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
  tr($("launcher-label"), unread ? "openAssistantUnread" : "openAssistant", ...(unread ? [number(unread)] : []));
  trAttr($("inbox-button"), "aria-label", unread ? "notificationsUnread" : "notifications", ...(unread ? [unread] : []));
}

function showToast(n) {
  const t = document.createElement("div");
  t.className = "toast";
  t.dataset.id = n.id;
  t.setAttribute("role", "status");
  const p = document.createElement("p");
  p.textContent = plain(n.title);
  const open = document.createElement("button");
  open.type = "button";
  open.className = "secondary";
  tr(open, "view");
  open.onclick = () => {
    dismiss(t);
    if (!state.layout.open) toggleOpen(true);
    showView("inbox");
  };
  const x = document.createElement("button");
  x.type = "button";
  x.className = "icon";
  x.textContent = "✕";
  trAttr(x, "aria-label", "dismiss");
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

// showView shows the chat, the inbox or the list of conversations.
function showView(view) {
  state.view = view;
  $("inbox").hidden = view !== "inbox";
  $("conversations").hidden = view !== "conversations";
  $("chat").hidden = view !== "chat";
  $("inbox-button").setAttribute("aria-expanded", String(view === "inbox"));
  $("conversations-button").setAttribute("aria-expanded", String(view === "conversations"));
  if (view === "inbox") {
    // The inbox shows what the toasts said.
    for (const t of [...$("toasts").children]) dismiss(t);
    $("inbox-close").focus();
  }
  if (view === "chat") revealChat();
}

function backToChat() {
  showView("chat");
  $("message").focus();
}

// ---- conversations: the list, switching, history ----

// Frames shown when a conversation opens, and per page of scroll-back.
const historyPage = 30;

// openConversation shows conversation id (fresh: just started, nothing
// to load; id "": none yet, the first message starts one): its latest
// page of history, then its live frames. New turns go to it.
function openConversation(id, fresh) {
  state.conversation = id;
  if (id) store.setItem("purser.conversation", id);
  else store.removeItem("purser.conversation");
  $("transcript").textContent = "";
  put($("tool-status"), "");
  state.streaming.clear();
  state.thinking.clear();
  state.proposals.clear();
  state.batch = null;
  showApproveAll();
  const h = { id, oldest: 0, more: false, loading: false, initial: !fresh && !!id, failed: false, buffer: [], pinned: true };
  state.history = h;
  showTitle();
  showHistoryStatus();
  if (h.initial) loadPage(h);
  else restorePending();
}

// loadPage reads the page of h's history before the oldest frame shown
// (the latest page at first) and puts it above what is shown, keeping
// what the person was looking at where it was.
async function loadPage(h) {
  if (h.loading) return;
  h.loading = true;
  h.failed = false;
  showHistoryStatus();
  const t = $("transcript");
  t.setAttribute("aria-busy", "true");
  let page;
  try {
    const q = "?limit=" + historyPage + (h.oldest ? "&before_seq=" + h.oldest : "");
    page = await api("GET", "/v1/conversations/" + encodeURIComponent(h.id) + "/frames" + q);
  } catch {
    if (state.history !== h) return;
    h.loading = false;
    h.failed = true;
    t.removeAttribute("aria-busy");
    showHistoryStatus();
    return;
  }
  if (state.history !== h) return; // the person moved on meanwhile
  const frames = [];
  for (const raw of page.frames || []) {
    const f = typeof raw === "string" ? JSON.parse(raw) : raw;
    if (f && f.type && f.type !== "token") frames.push(f);
  }
  h.loading = false;
  h.more = !!page.more;
  if (frames.length) h.oldest = frames[0].seq;
  const built = document.createElement("ol");
  state.sink = built;
  try {
    for (const f of frames) render(f, false);
  } finally {
    state.sink = null;
  }
  const s = $("scroller");
  if (h.initial) {
    h.initial = false;
    t.prepend(...built.children);
    const newest = frames.length ? frames[frames.length - 1].seq : 0;
    if (newest > state.lastSeq) state.lastSeq = newest;
    const waiting = h.buffer;
    h.buffer = [];
    for (const f of waiting) if (!f.seq || f.seq > newest) render(f, true);
    restorePending();
    toEnd();
  } else {
    // Content added above moves what is shown down by its height: scroll
    // by as much, so the same message stays under the person's eyes.
    const fromBottom = s.scrollHeight - s.scrollTop;
    t.prepend(...built.children);
    s.scrollTop = s.scrollHeight - fromBottom;
  }
  t.removeAttribute("aria-busy");
  showTitle();
  showHistoryStatus();
  fillUp();
}

// fillUp loads older pages while the transcript does not fill its box
// (nothing to scroll, so no way to ask for more).
function fillUp() {
  const h = state.history;
  const s = $("scroller");
  if (!h || h.loading || h.initial || !h.more || s.clientHeight === 0) return;
  if (s.scrollHeight <= s.clientHeight + 80) loadPage(h);
}

// loadOlder is the scroll-back: near the top, the page before.
function loadOlder() {
  const h = state.history;
  const s = $("scroller");
  if (!h) return;
  h.pinned = nearEnd();
  if (s.scrollTop < 120 && !h.loading && (h.failed || (!h.initial && h.more))) loadPage(h);
}

// revealChat, when the chat becomes visible, shows the newest frame if
// the view was following it (a hidden box cannot scroll), and fills it.
function revealChat() {
  fitComposer();
  const h = state.history;
  if (h && h.pinned && !$("chat").hidden) toEnd();
  fillUp();
}

function showHistoryStatus() {
  const h = state.history;
  const el = $("history-status");
  let text = "";
  if (h && h.loading) text = msg(h.initial ? "loadingConversation" : "loadingEarlier");
  else if (h && h.failed) text = msg(h.initial ? "couldNotLoadConversation" : "couldNotLoadEarlier");
  else if (h && !h.more) text = msg("beginning");
  put(el, text);
  el.classList.toggle("end", !!h && !h.loading && !h.failed && !h.more);
}

// restorePending shows this conversation's messages that wait for their
// ack (written before a reload, say): they are not in the history yet.
function restorePending() {
  for (const o of state.outbox) {
    const f = o.frame;
    if (f.type !== "message" || f.conversation_id !== state.conversation || mine(f.id)) continue;
    userBubble(f.id, f.text).classList.add("pending");
  }
  showTitle();
}

// showTitle names the conversation on show above its transcript: its
// title from the list, else its first message when that is shown.
function showTitle() {
  const id = state.conversation;
  const h = state.history;
  const first = $("transcript").querySelector("li.user");
  let title = id && state.titles.get(id);
  if (!title && first && h && !h.more && !h.initial) title = first.classList.contains("upload") ? uploadTitle(first) : first.textContent;
  if (!title) title = msg(id && h && (h.more || h.initial) ? "conversation" : "newConversation");
  put($("conversation-title"), title);
  if (id && !state.titles.has(id) && (h && (h.more || h.initial)) && !state.askedTitles) {
    // Opened without the list (after a reload): ask it once for titles.
    state.askedTitles = true;
    api("GET", "/v1/conversations").then(({ conversations }) => {
      for (const c of conversations || []) if (c.title) state.titles.set(c.id, c.title);
      showTitle();
    }).catch(() => {});
  }
}

// openLatest opens, in a tab with no conversation of its own (a new
// device, a first visit), the person's most recently used conversation,
// so that both sides of it show wherever they sign in; with none, or
// when the list cannot be read, the first message starts one.
async function openLatest() {
  let latest = "";
  try {
    const { conversations: list } = await api("GET", "/v1/conversations?limit=1");
    if (list && list.length) latest = list[0].id;
  } catch { /* a new conversation, then */ }
  if (state.history || state.conversation) return; // a frame chose one meanwhile
  openConversation(latest, !latest);
}

async function showConversations() {
  showView("conversations");
  $("conversation-list").textContent = "";
  await loadConversations(true);
}

// loadConversations reads the person's conversations, the latest used
// first, and lists them; focus goes to the one on show when asked.
async function loadConversations(focus) {
  const status = $("conversations-status");
  tr(status, "loadingConversations");
  let list;
  try {
    ({ conversations: list } = await api("GET", "/v1/conversations"));
  } catch {
    tr(status, "couldNotLoadConversations");
    if (focus) $("new-conversation").focus();
    return;
  }
  if (state.view !== "conversations") return;
  const items = (list || []).slice();
  // A conversation just started is not listed until its first message.
  if (state.conversation && !items.some((c) => c.id === state.conversation)) {
    items.unshift({ id: state.conversation, title: "" });
  }
  const ul = $("conversation-list");
  const focused = ul.contains(document.activeElement) ? document.activeElement.dataset.id : null;
  ul.textContent = "";
  for (const c of items) {
    if (c.title) state.titles.set(c.id, c.title);
    const li = document.createElement("li");
    li.setAttribute("role", "option");
    li.dataset.id = c.id;
    li.tabIndex = -1;
    li.setAttribute("aria-selected", String(c.id === state.conversation));
    const title = document.createElement("span");
    title.className = "title";
    title.textContent = c.title || (c.id === state.conversation ? $("conversation-title").textContent : "") || t("newConversation");
    li.appendChild(title);
    if (c.updated_at) {
      const when = document.createElement("time");
      when.dateTime = c.updated_at;
      when.textContent = whenText(new Date(c.updated_at));
      li.appendChild(when);
    }
    li.onclick = () => chooseConversation(c.id);
    ul.appendChild(li);
  }
  put(status, items.length ? "" : msg("noConversations"));
  // The option that had the keyboard keeps it when the list is read again.
  const active = [...ul.children].find((li) => li.dataset.id === focused) ||
    ul.querySelector('[aria-selected="true"]') || ul.firstElementChild;
  if (active) active.tabIndex = 0;
  showTitle();
  if (focus || focused !== null) focusActiveOption();
}

function whenText(d) {
  if (Number.isNaN(d.getTime())) return "";
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString(locale(), { hour: "2-digit", minute: "2-digit" })
    : d.toLocaleDateString(locale(), { day: "numeric", month: "short", year: "numeric" });
}

function focusActiveOption() {
  const o = $("conversation-list").querySelector('li[tabindex="0"]');
  (o || $("new-conversation")).focus();
}

// The list is a listbox: one option takes Tab (the one on show), arrows,
// Home and End move, Enter or Space opens.
function listKeys(ev) {
  const options = [...$("conversation-list").children];
  const at = options.indexOf(document.activeElement);
  if (at < 0) return;
  let next = -1;
  if (ev.key === "ArrowDown") next = Math.min(at + 1, options.length - 1);
  else if (ev.key === "ArrowUp") next = Math.max(at - 1, 0);
  else if (ev.key === "Home") next = 0;
  else if (ev.key === "End") next = options.length - 1;
  else if (ev.key === "Enter" || ev.key === " ") {
    ev.preventDefault();
    chooseConversation(options[at].dataset.id);
    return;
  } else return;
  ev.preventDefault();
  for (const o of options) o.tabIndex = -1;
  options[next].tabIndex = 0;
  options[next].focus();
}

function chooseConversation(id) {
  if (id !== state.conversation) openConversation(id, false);
  backToChat();
}

// newConversation asks the server for a new conversation's id and
// switches to it, empty.
async function newConversation() {
  const b = $("new-conversation");
  b.disabled = true;
  try {
    const { id } = await api("POST", "/v1/conversations");
    openConversation(id, true);
    backToChat();
  } catch {
    tr($("conversations-status"), "couldNotStart");
    b.disabled = false;
    b.focus();
    return;
  }
  b.disabled = false;
}

// fitComposer sizes the message box to what it holds, up to six lines:
// its placeholder too, which beside the paperclip wraps on a phone.
function fitComposer() {
  const message = $("message");
  if (!message.offsetParent) return; // hidden: nothing to measure
  message.style.height = "auto";
  message.style.height = Math.min(message.scrollHeight + 2, 144) + "px";
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
  state.lang = chosenLanguage();
  applyLanguage();
  applyTheme();
  darkQuery.addEventListener("change", applyTheme);
  applyLayout();
  state.outbox = state.outbox.filter((o) => o && o.frame && o.id);
  document.addEventListener("keydown", (ev) => {
    if (shortcut(ev)) return;
    if (ev.key === "Escape" && state.view !== "chat" && $("signin").hidden) { backToChat(); return; }
    if (ev.key === "Escape" && embedded && state.layout.open && !state.layout.docked) toggleOpen(false);
  });
  $("launcher").onclick = () => toggleOpen(true);
  $("close-button").onclick = () => toggleOpen(false);
  $("dock-button").onclick = () => toHost({ type: "purser:dock" });
  $("theme-button").onclick = toggleTheme;
  $("lang-button").onclick = () => setLanguage(state.lang === "fr" ? "en" : "fr");
  $("approve-all").onclick = approveAll;
  // The cards' time left, and their expiry, without waiting for the server.
  showExpiries();
  document.addEventListener("visibilitychange", () => { if (!document.hidden) showExpiries(); });
  $("inbox-button").onclick = () => showView(state.view === "inbox" ? "chat" : "inbox");
  $("inbox-close").onclick = backToChat;
  $("conversations-button").onclick = () => (state.view === "conversations" ? backToChat() : showConversations());
  $("conversations-close").onclick = backToChat;
  $("new-conversation").onclick = newConversation;
  $("conversation-list").addEventListener("keydown", listKeys);
  $("scroller").addEventListener("scroll", loadOlder, { passive: true });
  $("signin-form").onsubmit = (ev) => {
    ev.preventDefault();
    const t = $("token").value.trim();
    if (!t) return;
    $("token").value = "";
    useToken(t, false);
    $("message").focus();
  };
  const message = $("message");
  message.addEventListener("input", fitComposer);
  window.addEventListener("resize", fitComposer);
  message.addEventListener("keydown", (ev) => {
    // Enter sends; Shift+Enter is a new line (the textarea's own).
    if (ev.key !== "Enter" || ev.shiftKey || ev.isComposing) return;
    ev.preventDefault();
    const text = message.value.trim();
    if (!text) return;
    say(text);
    message.value = "";
    fitComposer();
  });
  $("composer").onsubmit = (ev) => ev.preventDefault();
  const picker = $("file-input");
  $("attach-button").onclick = () => picker.click();
  picker.onchange = () => {
    attach(picker.files);
    picker.value = ""; // the same file can be chosen again
  };
  dropping();

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
    // /chat opened on its own takes a token in the fragment, as / did;
    // one for another account than the tab's waits for a yes.
    const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
    if (fromHash) history.replaceState(null, "", location.pathname + location.search);
    if (fromHash && pasted && !sameAccount(fromHash, pasted)) {
      askSwitch(fromHash, pasted);
      return;
    }
    const t = fromHash || pasted;
    if (t) useToken(t, false); else signIn();
    focusInside();
  } else {
    // The host hands the token over when it hears ready; a token pasted
    // in this tab earlier serves until then.
    setStatus("waitingForHost");
    if (pasted) useToken(pasted, false);
    toHost({ type: "purser:ready" });
  }
}

start();
