// purser's widget loader: one script tag puts the assistant into any page.
//
//   <script src="https://purser.example/widget.js" defer
//           data-token-url="/purser-token" data-theme="system" data-docked="false"
//           data-locale="fr-FR"></script>
//
// or, for a host that hands the token over itself:
//
//   window.PurserSettings = { getToken: async () => (await fetch("/t")).text(), theme: "dark" };
//   <script src="https://purser.example/widget.js" defer></script>
//
// or Purser.mount({...}) later. The chat itself runs in an iframe served by
// purser under purser's own strict Content-Security-Policy; this script only
// places that frame (bubble, docked sidebar, closed launcher), carries the
// keyboard shortcuts while focus is in the host page, and passes the token
// the host gives it to the frame with postMessage, addressed to purser's
// origin only. The host page needs script-src and frame-src for purser's
// origin, and purser needs the host's origin in PURSER_ALLOWED_ORIGINS.
// When the person's money data changes through the chat, the page hears
// it: window.addEventListener("purser:changed", (e) => refresh(e.detail)).
// Styles are set through the CSSOM, which a host's CSP does not block.
(function () {
  "use strict";
  if (window.Purser && window.Purser.mounted) return;

  const script = document.currentScript;
  const layoutKey = "purser.widget.docked"; // kept while the chat is open docked
  const isMac = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);

  function settingsFromScript() {
    const s = {};
    if (!script) return s;
    const d = script.dataset;
    s.server = d.server || new URL(script.src, location.href).origin;
    if (d.tokenUrl) s.tokenUrl = d.tokenUrl;
    if (d.theme) s.theme = d.theme;
    if (d.locale) s.locale = d.locale;
    if (d.docked) s.docked = d.docked === "true";
    if (d.open) s.open = d.open === "true";
    return s;
  }

  function mount(options) {
    if (api.mounted) return api;
    const opts = Object.assign({ theme: "system", docked: false, open: false }, settingsFromScript(), window.PurserSettings || {}, options || {});
    const server = new URL(opts.server || location.origin, location.href).origin;
    const state = { open: false, docked: false, ready: false, toasts: false, lastFocus: null };

    const frame = document.createElement("iframe");
    const src = new URL("/chat", server);
    src.searchParams.set("host", location.origin);
    src.searchParams.set("theme", ["light", "dark", "system"].includes(opts.theme) ? opts.theme : "system");
    // The host's language is the chat's until the person picks one with
    // its FR/EN switch.
    if (typeof opts.locale === "string" && opts.locale) src.searchParams.set("locale", opts.locale);
    frame.src = src.href;
    frame.title = "purser assistant";
    frame.id = "purser-widget";
    frame.setAttribute("allow", "clipboard-write");
    Object.assign(frame.style, {
      position: "fixed", zIndex: "2147483000", border: "0", background: "transparent",
      colorScheme: "normal", maxWidth: "100vw", maxHeight: "100vh",
    });
    const html = document.documentElement;
    const hostPadding = html.style.paddingRight;

    function phone() { return window.innerWidth <= 480; }

    // place sizes and positions the frame. A fixed box's percentages are
    // of the viewport without the host's scrollbars.
    function place() {
      const st = frame.style;
      st.top = st.left = st.right = st.bottom = st.width = st.height = "auto";
      html.style.paddingRight = hostPadding;
      frame.dataset.layout = state.open ? (state.docked ? "docked" : "bubble") : "closed";
      if (state.open && (state.docked || phone())) {
        st.top = st.right = "0";
        st.height = "100%";
        st.width = phone() ? "100%" : "400px";
        if (state.docked && !phone()) html.style.paddingRight = "400px";
      } else if (state.open) {
        st.right = "16px"; st.bottom = "16px"; st.width = "400px"; st.height = "min(680px, calc(100vh - 32px))";
      } else {
        st.right = "8px"; st.bottom = "8px";
        st.width = state.toasts ? "min(360px, calc(100vw - 16px))" : "80px";
        st.height = state.toasts ? "260px" : "80px";
      }
    }

    function post(msg) {
      if (frame.contentWindow) frame.contentWindow.postMessage(msg, server);
    }

    function tell() {
      post({ type: "purser:state", open: state.open, docked: state.docked, phone: phone() });
    }

    function set(open, docked) {
      const wasOpen = state.open;
      state.open = open;
      state.docked = open && docked;
      try {
        if (state.open && state.docked) localStorage.setItem(layoutKey, "1");
        else localStorage.removeItem(layoutKey);
      } catch { /* storage refused: docking lasts this page only */ }
      place();
      if (open && !wasOpen) {
        state.lastFocus = document.activeElement;
        frame.focus();
      }
      tell();
      if (!open && wasOpen && state.lastFocus && state.lastFocus !== frame && state.lastFocus.focus) {
        // Focus goes back where it was in the host page.
        state.lastFocus.focus();
      }
    }

    async function token() {
      try {
        if (typeof opts.getToken === "function") return (await opts.getToken()) || "";
        if (opts.tokenUrl) {
          const resp = await fetch(opts.tokenUrl, { credentials: "include", headers: { Accept: "application/json" } });
          if (!resp.ok) return "";
          const type = resp.headers.get("Content-Type") || "";
          if (type.includes("json")) return (await resp.json()).token || "";
          return (await resp.text()).trim();
        }
      } catch { /* signed out */ }
      return "";
    }

    async function sendToken() {
      post({ type: "purser:token", token: await token() });
    }

    window.addEventListener("message", (ev) => {
      if (ev.source !== frame.contentWindow || ev.origin !== server) return;
      const m = ev.data || {};
      switch (m.type) {
        case "purser:ready":
          state.ready = true;
          tell();
          sendToken();
          break;
        case "purser:need-token":
          sendToken();
          break;
        case "purser:toggle":
          set(m.open === undefined ? !state.open : !!m.open, state.docked);
          break;
        case "purser:dock":
          toggleDock();
          break;
        case "purser:toasts":
          state.toasts = !!m.showing;
          place();
          break;
        case "purser:changed":
          changed(m);
          break;
      }
    });

    // changed tells the host page that the person's money data changed
    // (the assistant added, changed or deleted an expense, an import
    // landed), two ways: a "purser:changed" CustomEvent on window and the
    // same detail as a message to the page itself, from its own origin.
    // Only the known words and ids pass on.
    function changed(m) {
      const whats = ["expense", "import"], changes = ["added", "updated", "deleted", "imported"];
      if (!whats.includes(m.what) || !changes.includes(m.change)) return;
      const detail = { type: "purser:changed", what: m.what, change: m.change };
      if (Array.isArray(m.ids)) {
        const ids = m.ids.filter((id) => Number.isInteger(id) || typeof id === "string").slice(0, 100);
        if (ids.length) detail.ids = ids;
      }
      // The message is a copy taken now, before any listener of the event
      // can touch the detail.
      try {
        window.postMessage(detail, location.origin);
      } catch { /* an opaque origin (a file:// page) has only the event */ }
      window.dispatchEvent(new CustomEvent("purser:changed", { detail }));
    }

    function toggleDock() {
      // Docking opens the chat; undocking leaves it open as a bubble.
      if (!state.open || !state.docked) set(true, true);
      else set(true, false);
    }

    window.addEventListener("keydown", (ev) => {
      if (ev.code !== "KeyD" && ev.key.toLowerCase() !== "d") return;
      if (!(isMac ? ev.metaKey : ev.ctrlKey) || ev.altKey) return;
      ev.preventDefault();
      if (ev.shiftKey) toggleDock(); else set(!state.open, state.docked);
    }, true);
    window.addEventListener("resize", () => { place(); tell(); });

    let docked = !!opts.docked;
    let open = !!opts.open || docked;
    try { if (localStorage.getItem(layoutKey) === "1") { open = true; docked = true; } } catch { /* no storage */ }
    state.open = open;
    state.docked = open && docked;
    place();
    (document.body || html).appendChild(frame);

    api.mounted = true;
    api.open = () => set(true, state.docked);
    api.close = () => set(false, state.docked);
    api.toggle = () => set(!state.open, state.docked);
    api.dock = (on) => set(on !== false ? true : state.open, on !== false);
    api.state = () => ({ open: state.open, docked: state.docked, ready: state.ready });
    api.refreshToken = sendToken;
    return api;
  }

  const api = { mounted: false, mount };
  window.Purser = api;

  // Mount at once when the tag or the page says how to get a token.
  const auto = script && (script.dataset.tokenUrl || script.dataset.mount === "auto");
  if (auto || window.PurserSettings) {
    if (document.body) mount(); else document.addEventListener("DOMContentLoaded", () => mount());
  }
})();
