package app

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A statement sent through the paperclip, at a desk: the paperclip is
// reached with the keyboard; what is in the
// message box goes with it; its card shows the bytes going (a progress
// bar from 0 to 100), then "Reading the statement…" while the server
// reads it, then the import's proposal, once, though it comes both on the
// upload's event stream and on the socket. Approved, it is imported.
func TestWidgetUploadsAStatementThroughThePaperclip(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	base := "http://" + info.HTTPAddr
	b := startBrowser(t)
	b.open(base + "/#token=" + info.DemoToken)
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.click("#launcher")
	b.waitFor("the composer focused", func() bool { return b.eval(`return document.activeElement.id`) == "message" })

	if label := b.eval(`return document.getElementById("attach-button").getAttribute("aria-label")`); label != "Attach a statement or receipt" {
		t.Errorf("the paperclip is labelled %q", label)
	}
	// The paperclip is on the keyboard's way, just before the message
	// box, and opens the picker.
	b.keys(keyShift, keyTab)
	if id := b.eval(`return document.activeElement.id`); id != "attach-button" {
		t.Errorf("Shift+Tab from the message box goes to %q, not the paperclip", id)
	}
	b.script(`document.getElementById("file-input").click = () => { window.pickerOpened = true; }; return true`, nil)
	b.keys(keyEnter)
	if opened := b.eval(`return window.pickerOpened === true`); opened != "true" {
		t.Errorf("Enter on the paperclip does not open the picker")
	}
	b.script(`delete document.getElementById("file-input").click; return true`, nil)

	watchUploads(b)
	b.typeInto("#message", "my September statement")
	b.attach(writeFile(t, "statement.csv", septemberCSV))
	b.waitText("#transcript > li.upload .name", "statement.csv")
	b.waitText("#transcript > li.proposal", "Import statement.csv?")
	b.waitText("#transcript > li.upload .state", "Statement read")
	b.shot("01-proposal")

	seen := seenUploads(b)
	for _, want := range []string{"valuenow:0", "valuenow:100", "phase:Uploading…", "phase:Reading the statement…", "phase:Statement read"} {
		if !slices.Contains(seen, want) {
			t.Errorf("the card never showed %s; it showed %q", want, seen)
		}
	}
	if got := b.texts("#transcript > li.upload .said"); len(got) != 1 || got[0] != "my September statement" {
		t.Errorf("the card shows the message as %q", got)
	}
	if v := b.eval(`return document.getElementById("message").value`); v != "" {
		t.Errorf("the message box still holds %q", v)
	}
	if n := len(b.texts("#transcript > li.upload .bar:not([hidden])")); n != 0 {
		t.Errorf("%d progress bars are left after the proposal", n)
	}

	b.click(`#transcript > li.proposal button[data-decision="approve"]`)
	b.waitText("#transcript > li.proposal .decided", "Approved")
	b.waitText("#toasts .toast", "Imported 3 transactions")
	// By the import's notification, the socket has brought the turn's
	// frames too: each shows once.
	if n := len(b.texts("#transcript > li.proposal")); n != 1 {
		t.Errorf("the proposal shows %d times", n)
	}
	if n := len(b.texts("#transcript > li.tool")); n != 2 {
		t.Errorf("%d tool lines, want 2 (reading, importing): %q", n, b.texts("#transcript > li.tool"))
	}
	if users := b.texts("#transcript > li.user:not(.upload)"); len(users) != 0 {
		t.Errorf("the upload's message shows again as %q", users)
	}
	b.shot("02-approved")
	b.click("#theme-button")
	b.shot("03-dark")

	// The message went with the file: the server keeps it as what the
	// person said, and the conversation is titled by it.
	b.reload()
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.waitText("#transcript > li.user", "my September statement")
	b.waitText("#transcript > li.user", "statement.csv")
	b.waitExact("#conversation-title", "my September statement")
}

// On a phone (375×667) the chat fills the screen; the paperclip is a
// 44-pixel target beside the message box, and its picker offers photos
// and the camera as well as files. An upload that cannot reach the
// server says so, with a Try again that a finger can hit; tried again,
// it goes, and the proposal's buttons are on the screen. Sent with no
// words, the conversation takes the file's name.
func TestWidgetUploadOnAPhone(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	base := "http://" + info.HTTPAddr
	b := startBrowser(t)
	b.windowSize(375, 667)
	b.open(base + "/#token=" + info.DemoToken)
	if w := b.eval(`return innerWidth`); w != "375" {
		t.Fatalf("the page is %s px wide, want 375", w)
	}
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.click("#launcher")
	b.top()
	b.waitFor("a full-screen chat", func() bool {
		return b.eval(`const r = document.getElementById("purser-widget").getBoundingClientRect(); const e = document.documentElement; return r.width === e.clientWidth && r.height === e.clientHeight`) == "true"
	})
	b.intoFrame("#purser-widget")
	if r := b.eval(`const r = document.getElementById("attach-button").getBoundingClientRect(); return r.width >= 44 && r.height >= 44 && r.left >= 0 && r.right <= innerWidth && r.bottom <= innerHeight`); r != "true" {
		t.Errorf("the paperclip is not a 44 px target on the screen: %s", b.eval(`return JSON.stringify(document.getElementById("attach-button").getBoundingClientRect())`))
	}
	accept := b.eval(`return document.getElementById("file-input").accept`)
	for _, kind := range []string{"image/*", ".csv", ".ofx", ".qfx", ".xml", ".sta", ".940", ".qif", ".pdf"} {
		if !strings.Contains(accept, kind) {
			t.Errorf("the picker does not offer %s: accept=%q", kind, accept)
		}
	}
	if c := b.eval(`return document.getElementById("file-input").hasAttribute("capture")`); c != "false" {
		t.Errorf("the picker forces the camera (capture attribute)")
	}
	b.shot("01-phone-composer")

	// The first try goes nowhere: the network is down.
	b.script(`const open = XMLHttpRequest.prototype.open;
		XMLHttpRequest.prototype.open = function (method, url, ...rest) {
			XMLHttpRequest.prototype.open = open;
			return open.call(this, method, "http://127.0.0.1:9/v1/uploads", ...rest);
		};
		return true`, nil)
	b.attach(writeFile(t, "statement.csv", septemberCSV))
	b.waitText("#transcript > li.upload .problem", "did not reach purser")
	if r := b.eval(`const r = document.querySelector("li.upload button.retry").getBoundingClientRect(); return r.height >= 44 && r.left >= 0 && r.right <= innerWidth`); r != "true" {
		t.Errorf("Try again is not a 44 px target on the screen")
	}
	b.shot("02-phone-failed")
	b.click("li.upload button.retry")
	b.waitText("#transcript > li.proposal", "Import statement.csv?")
	b.waitText("#transcript > li.upload .state", "Statement read")
	if n := len(b.texts("#transcript > li.upload")); n != 1 {
		t.Errorf("trying again left %d cards", n)
	}
	if n := len(b.texts("#transcript > li.upload .problem")); n != 0 {
		t.Errorf("the failure still shows after the retry went through")
	}
	b.eval(`document.querySelector("li.proposal").scrollIntoView(); return true`)
	if r := b.eval(`const r = document.querySelector("li.proposal button[data-decision='approve']").getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth && r.bottom <= innerHeight`); r != "true" {
		t.Errorf("the proposal's Approve button is off the screen")
	}
	b.shot("03-phone-proposal")
	if title := b.texts("#conversation-title"); len(title) != 1 || title[0] != "statement.csv" {
		t.Errorf("a conversation begun with a file alone is titled %q, want its name", title)
	}
}

// A file dragged over the panel shows where to drop it and goes when
// dropped; a file pasted goes too, while pasted text stays text, and
// with the socket down its proposal comes on the upload's stream. What the
// server refuses is said in plain words: a kind it cannot read names the
// kinds it can, a file too big names the limit; neither offers to send
// the same file again, and the card can go.
func TestWidgetTakesDroppedAndPastedFiles(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	base := "http://" + info.HTTPAddr
	b := startBrowser(t)
	b.open(base + "/#token=" + info.DemoToken)
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.click("#launcher")
	b.waitFor("the composer focused", func() bool { return b.eval(`return document.activeElement.id`) == "message" })

	// A drag of files over the panel: the drop target shows, and leaves
	// with the drag.
	b.script(`window.dragged = new DataTransfer();
		dragged.items.add(new File([arguments[0]], "october.csv", { type: "text/csv" }));
		document.getElementById("scroller").dispatchEvent(new DragEvent("dragenter", { bubbles: true, cancelable: true, dataTransfer: dragged }));
		return true`, nil, septemberCSV)
	if r := b.eval(`const t = document.getElementById("drop-target"); const r = t.getBoundingClientRect(); return !t.hidden && r.width > 300 && r.height > 200`); r != "true" {
		t.Errorf("no drop target while files are dragged over the panel")
	}
	b.shot("01-dragging")
	b.script(`document.getElementById("scroller").dispatchEvent(new DragEvent("dragleave", { bubbles: true, dataTransfer: dragged })); return true`, nil)
	if h := b.eval(`return document.getElementById("drop-target").hidden`); h != "true" {
		t.Errorf("the drop target stayed after the drag left")
	}
	b.script(`const s = document.getElementById("scroller");
		s.dispatchEvent(new DragEvent("dragenter", { bubbles: true, cancelable: true, dataTransfer: dragged }));
		s.dispatchEvent(new DragEvent("drop", { bubbles: true, cancelable: true, dataTransfer: dragged }));
		return true`, nil)
	b.waitText("#transcript > li.upload .name", "october.csv")
	b.waitText("#transcript > li.proposal", "Import october.csv?")
	if h := b.eval(`return document.getElementById("drop-target").hidden`); h != "true" {
		t.Errorf("the drop target stayed after the drop")
	}

	paste := func(name, mime string, size int) {
		t.Helper()
		b.script(`const dt = new DataTransfer();
			dt.items.add(new File([new Uint8Array(arguments[2])], arguments[0], { type: arguments[1] }));
			document.getElementById("message").dispatchEvent(new ClipboardEvent("paste", { bubbles: true, cancelable: true, clipboardData: dt }));
			return true`, nil, name, mime, size)
	}
	// A kind it cannot read: the message names the kinds it can.
	paste("notes.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", 2048)
	refused := b.waitText("#transcript > li.upload .problem", "not a document purser reads")
	for _, kind := range []string{"CSV", "OFX", "PDF"} {
		if !strings.Contains(refused, kind) {
			t.Errorf("the refusal %q does not name %s", refused, kind)
		}
	}
	b.shot("02-refused-kind")
	if n := len(b.texts("li.upload.failed button.retry:not([hidden])")); n != 0 {
		t.Errorf("a file of a kind purser cannot read offers Try again")
	}
	b.click("li.upload.failed button.remove")
	b.waitFor("the refused card gone", func() bool { return len(b.texts("#transcript > li.upload.failed")) == 0 })

	// Too big: the message names the limit.
	paste("scan.pdf", "application/pdf", 21<<20)
	big := b.waitText("#transcript > li.upload .problem", "larger than")
	if !strings.Contains(big, "20 MiB") {
		t.Errorf("the refusal %q does not name the limit", big)
	}
	b.shot("03-too-big")

	// Pasted text is text.
	b.script(`const dt = new DataTransfer(); dt.setData("text/plain", "coffee");
		document.getElementById("message").dispatchEvent(new ClipboardEvent("paste", { bubbles: true, cancelable: true, clipboardData: dt }));
		return true`, nil)
	if n := len(b.texts("#transcript > li.upload")); n != 2 {
		t.Errorf("after pasting text there are %d cards, want 2", n)
	}

	// A statement pasted while the socket is down: its proposal comes on
	// the upload's own stream; when the socket is back it resumes, brings
	// the same frames again, and nothing shows twice.
	b.script(`state.ws.onclose = null; state.ws.close(); return true`, nil)
	b.script(`const dt = new DataTransfer();
		dt.items.add(new File([arguments[0]], "november.csv", { type: "text/csv" }));
		document.getElementById("message").dispatchEvent(new ClipboardEvent("paste", { bubbles: true, cancelable: true, clipboardData: dt }));
		return true`, nil, novemberCSV)
	b.waitText("#transcript > li.proposal", "Import november.csv?")
	b.waitText("#transcript > li.upload .state", "Statement read")
	b.script(`connect(); return true`, nil)
	b.waitExact("#status", "connected")
	b.waitFor("the socket caught up", func() bool { return b.eval(`return state.catchingUp === false && state.streamed.size === 0`) == "true" })
	if n := len(b.texts("#transcript > li.proposal")); n != 2 {
		t.Errorf("after the resume %d proposals show, want 2 (october's and november's)", n)
	}
	if n := len(b.texts("#transcript > li.tool")); n != 2 {
		t.Errorf("after the resume %d tool lines show, want 2: %q", n, b.texts("#transcript > li.tool"))
	}
	b.shot("04-after-resume")
}

// attach gives the paperclip's hidden file input a local file, as the
// picker would.
func (b *browser) attach(path string) {
	b.t.Helper()
	b.call(http.MethodPost, "/element/"+b.element("#file-input")+"/value", map[string]string{"text": path}, nil)
}

// watchUploads records, in the page, every value an upload card's
// progress bar and phase line take, however briefly.
func watchUploads(b *browser) {
	b.t.Helper()
	b.script(`window.uploadSeen = [];
		const note = (s) => { if (!uploadSeen.includes(s)) uploadSeen.push(s); };
		new MutationObserver((records) => {
			for (const r of records) {
				if (r.type === "attributes" && r.attributeName === "aria-valuenow") {
					if (r.oldValue !== null) note("valuenow:" + r.oldValue);
					const now = r.target.getAttribute("aria-valuenow");
					if (now !== null) note("valuenow:" + now);
				}
				if (r.type === "childList" && r.target.classList && r.target.classList.contains("phase")) {
					for (const n of r.addedNodes) note("phase:" + n.textContent.trim());
				}
			}
		}).observe(document.getElementById("transcript"), { subtree: true, childList: true, attributes: true, attributeOldValue: true });
		return true`, nil)
}

func seenUploads(b *browser) []string {
	b.t.Helper()
	var seen []string
	b.script(`return uploadSeen`, &seen)
	return seen
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const novemberCSV = "Date,Description,Amount,Currency\n" +
	"2026-11-04,SAINSBURYS 0412,-31.75,GBP\n" +
	"2026-11-06,TFL TRAVEL CH,-7.80,GBP\n"

const septemberCSV = "Date,Description,Amount,Currency\n" +
	"2026-09-02,TESCO STORES 2231,-23.40,GBP\n" +
	"2026-09-03,PRET A MANGER,-4.10,GBP\n" +
	"2026-09-05,SALARY ACME LTD,2450.00,GBP\n"
