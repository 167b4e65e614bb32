package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A small W3C WebDriver client over chromedriver, driving Debian's headless
// Chromium: enough to load the web page, step into the widget's frame,
// type, press key chords, click, resize, emulate a dark system theme, read
// the page back and take screenshots.
// Both programs must be installed (packages chromium and chromium-driver;
// .ci/run installs them): a browser test never skips.

type browser struct {
	t       *testing.T
	base    string // http://127.0.0.1:<port>/session/<id>
	timeout time.Duration
}

const elementKey = "element-6066-11e4-a52e-4f735466cecf"

func findProgram(t *testing.T, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Fatalf("none of %v is installed: install Debian's chromium and chromium-driver (.ci/run does)", names)
	return ""
}

func startBrowser(t *testing.T) *browser {
	t.Helper()
	chrome := findProgram(t, "chromium", "chromium-browser", "google-chrome")
	driver := findProgram(t, "chromedriver")
	// Port 0: chromedriver binds a free port itself and names it, so no
	// other test can take the port between a pick and the bind.
	cmd := exec.Command(driver, "--port=0")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromedriver: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	port, err := driverPort(out)
	if err != nil {
		t.Fatalf("chromedriver did not start: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	root := "http://127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(root + "/status")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver did not start: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	b := &browser{t: t, base: root, timeout: 20 * time.Second}
	var session struct {
		SessionID string `json:"sessionId"`
	}
	b.call(http.MethodPost, "/session", map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{
			"binary": chrome,
			"args": []string{"--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1200,900",
				"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"},
		},
	}}}, &session)
	if session.SessionID == "" {
		t.Fatal("chromedriver gave no session")
	}
	b.base = root + "/session/" + session.SessionID
	t.Cleanup(func() { b.call(http.MethodDelete, "", nil, nil) })
	return b
}

// driverPort reads chromedriver's output up to the line naming the port
// it listens on ("ChromeDriver was started successfully on port 41889.").
func driverPort(out io.Reader) (int, error) {
	sc := bufio.NewScanner(out)
	var said []string
	for sc.Scan() {
		line := sc.Text()
		if _, rest, ok := strings.Cut(line, "started successfully on port "); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), "."))
		}
		said = append(said, line)
	}
	return 0, fmt.Errorf("it named no port; it said %q", said)
}

// call sends one WebDriver command and decodes its value into out.
func (b *browser) call(method, path string, body any, out any) {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			b.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, b.base+path, rd)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatalf("webdriver %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &env); err != nil {
		b.t.Fatalf("webdriver %s %s: %s", method, path, data)
	}
	if resp.StatusCode != http.StatusOK {
		b.t.Fatalf("webdriver %s %s: %d %s", method, path, resp.StatusCode, env.Value)
	}
	if out != nil {
		if err := json.Unmarshal(env.Value, out); err != nil {
			b.t.Fatalf("webdriver %s %s value %s: %v", method, path, env.Value, err)
		}
	}
}

func (b *browser) open(url string) {
	b.call(http.MethodPost, "/url", map[string]string{"url": url}, nil)
}
func (b *browser) reload() { b.call(http.MethodPost, "/refresh", map[string]any{}, nil) }

func (b *browser) url() string {
	var u string
	b.call(http.MethodGet, "/url", nil, &u)
	return u
}

// script runs JavaScript in the page and decodes its result into out.
func (b *browser) script(js string, out any, args ...any) {
	b.t.Helper()
	if args == nil {
		args = []any{}
	}
	b.call(http.MethodPost, "/execute/sync", map[string]any{"script": js, "args": args}, out)
}

// element waits for the first element matching css and returns its id.
func (b *browser) element(css string) string {
	b.t.Helper()
	var id string
	b.waitFor("an element "+css, func() bool {
		var found []map[string]string
		b.call(http.MethodPost, "/elements", map[string]string{"using": "css selector", "value": css}, &found)
		if len(found) == 0 {
			return false
		}
		id = found[0][elementKey]
		return true
	})
	return id
}

func (b *browser) typeInto(css, text string) {
	b.t.Helper()
	b.call(http.MethodPost, "/element/"+b.element(css)+"/value", map[string]string{"text": text}, nil)
}

func (b *browser) click(css string) {
	b.t.Helper()
	id := b.element(css)
	b.waitFor(css+" enabled", func() bool {
		var on bool
		b.call(http.MethodGet, "/element/"+id+"/enabled", nil, &on)
		return on
	})
	b.call(http.MethodPost, "/element/"+id+"/click", map[string]any{}, nil)
}

// shot saves the whole window as <test>-<name>.png in the test's artifact folder
// (kept with go test -artifacts, under -outputdir), or in the folder that
// PURSER_SCREENSHOTS names, for a person to look at; tests never depend
// on it.
func (b *browser) shot(name string) {
	b.t.Helper()
	dir := os.Getenv("PURSER_SCREENSHOTS")
	if dir == "" {
		dir = b.t.ArtifactDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	var encoded string
	b.call(http.MethodGet, "/screenshot", nil, &encoded)
	png, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		b.t.Fatal(err)
	}
	file := strings.ReplaceAll(b.t.Name(), "/", "_") + "-" + name + ".png"
	if err := os.WriteFile(filepath.Join(dir, file), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// intoFrame switches the browser's commands into the iframe matching css;
// top switches back to the page itself.
func (b *browser) intoFrame(css string) {
	b.t.Helper()
	id := b.element(css)
	b.call(http.MethodPost, "/frame", map[string]any{"id": map[string]string{elementKey: id}}, nil)
}

func (b *browser) top() {
	b.t.Helper()
	b.call(http.MethodPost, "/frame", map[string]any{"id": nil}, nil)
}

// WebDriver key codes for the modifier and special keys.
const (
	keyShift   = "\uE008"
	keyControl = "\uE009"
	keyTab     = "\uE004"
	keyEnter   = "\uE007"
	keyEscape  = "\uE00C"
	keyMeta    = "\uE03D"
)

// keys presses the keys together, in order, and releases them in reverse,
// at whatever has the keyboard focus: a chord such as Ctrl+Shift+D.
func (b *browser) keys(chord ...string) {
	b.t.Helper()
	var acts []map[string]string
	for _, k := range chord {
		acts = append(acts, map[string]string{"type": "keyDown", "value": k})
	}
	for i := len(chord) - 1; i >= 0; i-- {
		acts = append(acts, map[string]string{"type": "keyUp", "value": chord[i]})
	}
	b.call(http.MethodPost, "/actions", map[string]any{"actions": []any{
		map[string]any{"type": "key", "id": "keyboard", "actions": acts},
	}}, nil)
	b.call(http.MethodDelete, "/actions", nil, nil)
}

// windowSize sets the browser window's outer size.
func (b *browser) windowSize(w, h int) {
	b.t.Helper()
	b.call(http.MethodPost, "/window/rect", map[string]int{"width": w, "height": h}, nil)
}

// prefersDark makes the page see the system's colour scheme as dark or
// light, through the DevTools protocol.
func (b *browser) prefersDark(dark bool) {
	b.t.Helper()
	scheme := "light"
	if dark {
		scheme = "dark"
	}
	b.call(http.MethodPost, "/goog/cdp/execute", map[string]any{"cmd": "Emulation.setEmulatedMedia", "params": map[string]any{
		"features": []map[string]string{{"name": "prefers-color-scheme", "value": scheme}},
	}}, nil)
}

// value returns what a script computes from the element matching css
// (arguments[0]), as a string.
func (b *browser) eval(js string, args ...any) string {
	b.t.Helper()
	var out any
	b.script(js, &out, args...)
	return fmt.Sprint(out)
}

// texts returns the text of every element matching css, in order.
func (b *browser) texts(css string) []string {
	b.t.Helper()
	var out []string
	b.script(`return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)`, &out, css)
	return out
}

// waitFor polls cond until it holds, failing after the browser's timeout.
func (b *browser) waitFor(what string, cond func() bool) {
	b.t.Helper()
	deadline := time.Now().Add(b.timeout)
	for !cond() {
		if time.Now().After(deadline) {
			b.t.Fatalf("waited %s for %s; transcript: %q", b.timeout, what, b.texts("#transcript > li"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitText waits until an element matching css holds text containing want
// and returns that text.
func (b *browser) waitText(css, want string) string {
	b.t.Helper()
	var got string
	b.waitFor(fmt.Sprintf("%s containing %q", css, want), func() bool {
		for _, s := range b.texts(css) {
			if bytes.Contains([]byte(s), []byte(want)) {
				got = s
				return true
			}
		}
		return false
	})
	return got
}

// waitExact waits until the first element matching css holds exactly want.
func (b *browser) waitExact(css, want string) {
	b.t.Helper()
	b.waitFor(fmt.Sprintf("%s to be %q", css, want), func() bool {
		got := b.texts(css)
		return len(got) > 0 && got[0] == want
	})
}
