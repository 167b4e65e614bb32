package statements

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Sandbox parses statements in a child process, so that a hostile file can
// kill only its parser: the child limits its own CPU time and address
// space before it reads the file, the parent kills it at the wall-clock
// limit, and input and output are capped.
type Sandbox struct {
	// Command starts the worker, which runs ServeWorker: for purser,
	// {os.Executable(), "import-worker"}.
	Command []string
	// Env is added to the worker's environment (tests use it).
	Env      []string
	MaxInput int64         // bytes; default 10 MiB
	CPU      time.Duration // CPU seconds; default 10 s
	Memory   int64         // address space in bytes; default 1 GiB
	Wall     time.Duration // default 30 s
	// ScanWall is the wall-clock limit for PDFs and images, which may be
	// scans read by OCR at seconds a page (tesseract runs as the worker's
	// child, under the same CPU limit each); default 3 minutes.
	ScanWall time.Duration
	Options  Options
}

// Failure is an import that cannot succeed, with a reason a person can
// read. It is not retried.
type Failure struct{ Reason string }

func (f *Failure) Error() string { return f.Reason }

const maxOutput = 64 << 20

func (s *Sandbox) defaults() Sandbox {
	c := *s
	if c.MaxInput <= 0 {
		c.MaxInput = 10 << 20
	}
	if c.CPU <= 0 {
		c.CPU = 10 * time.Second
	}
	if c.Memory <= 0 {
		c.Memory = 1 << 30
	}
	if c.Wall <= 0 {
		c.Wall = 30 * time.Second
	}
	if c.ScanWall <= 0 {
		c.ScanWall = 3 * time.Minute
	}
	c.ScanWall = max(c.ScanWall, c.Wall)
	return c
}

// request is what the worker reads on stdin. Kind is what to read the
// file as: "" (a request from before documents) or "statement" is
// Parse, "document" is ReadDocument.
type request struct {
	Kind    string         `json:"kind,omitempty"`
	Name    string         `json:"name"`
	Data    []byte         `json:"data"`
	Options Options        `json:"options"`
	Receipt ReceiptOptions `json:"receipt_options,omitzero"`
	CPU     int            `json:"cpu_seconds"`
	Memory  int64          `json:"memory"`
}

// Request kinds.
const (
	requestStatement = "statement"
	requestDocument  = "document"
)

// reply is what the worker writes on stdout.
type reply struct {
	Result   *Result   `json:"result,omitempty"`
	Document *Document `json:"document,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// Parse runs Parse in a worker. A *Failure means the file cannot be
// imported (too large, too slow, too hungry, not a statement); any other
// error is the sandbox's own and may pass on retry.
func (s *Sandbox) Parse(ctx context.Context, name string, data []byte) (Result, error) {
	rep, err := s.run(ctx, request{Name: name, Data: data})
	if err != nil {
		return Result{}, err
	}
	if rep.Result == nil {
		return Result{}, &Failure{Reason: "the file could not be read"}
	}
	return *rep.Result, nil
}

// ReadDocument runs ReadDocument in a worker, under the same limits as
// Parse, with the sandbox's Options for a statement and ropts for a
// receipt. Its errors are Parse's.
func (s *Sandbox) ReadDocument(ctx context.Context, name string, data []byte, ropts ReceiptOptions) (Document, error) {
	rep, err := s.run(ctx, request{Kind: requestDocument, Name: name, Data: data, Receipt: ropts})
	if err != nil {
		return Document{}, err
	}
	d := rep.Document
	if d == nil || (d.Kind == KindStatement) != (d.Statement != nil) || (d.Kind == KindReceipt) != (d.Receipt != nil) {
		return Document{}, &Failure{Reason: "the file could not be read"}
	}
	return *d, nil
}

// run sends req to a worker with the sandbox's options and limits and
// returns its reply; a reply's error comes back as a *Failure.
func (s *Sandbox) run(ctx context.Context, req request) (reply, error) {
	c := s.defaults()
	data := req.Data
	if int64(len(data)) > c.MaxInput {
		return reply{}, &Failure{Reason: fmt.Sprintf("the file is larger than %d MiB", c.MaxInput>>20)}
	}
	if len(c.Command) == 0 {
		return reply{}, errors.New("sandbox: no worker command")
	}
	req.Options, req.CPU, req.Memory = c.Options, int(c.CPU/time.Second), c.Memory
	in, err := json.Marshal(req)
	if err != nil {
		return reply{}, err
	}
	wall := c.Wall
	if isImage(data) || isPDF(data) {
		wall = c.ScanWall
	}
	wctx, cancel := context.WithTimeout(ctx, wall)
	defer cancel()
	cmd := exec.CommandContext(wctx, c.Command[0], c.Command[1:]...)
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Stdin = bytes.NewReader(in)
	var out, stderr limitedBuffer
	out.max, stderr.max = maxOutput, 8<<10
	cmd.Stdout, cmd.Stderr = &out, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return reply{}, fmt.Errorf("sandbox: %w", err)
	}
	oom := make(chan bool, 1)
	stop := make(chan struct{})
	go func() { oom <- watchRSS(cmd.Process.Pid, c.Memory, stop) }()
	runErr := cmd.Wait()
	close(stop)
	if <-oom {
		return reply{}, &Failure{Reason: "the file needed more memory than a statement may"}
	}
	switch {
	case ctx.Err() != nil:
		return reply{}, ctx.Err()
	case wctx.Err() != nil:
		return reply{}, &Failure{Reason: fmt.Sprintf("the file took too long to read (over %s)", wall)}
	case out.over:
		return reply{}, &Failure{Reason: "the file produced more output than any statement could"}
	}
	if runErr != nil {
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && (ws.Signal() == syscall.SIGXCPU || ws.Signal() == syscall.SIGKILL) {
				return reply{}, &Failure{Reason: "the file took too long to read (CPU limit)"}
			}
			if strings.Contains(stderr.String(), "out of memory") || strings.Contains(stderr.String(), "cannot allocate memory") {
				return reply{}, &Failure{Reason: "the file needed more memory than a statement may"}
			}
			return reply{}, &Failure{Reason: "the file could not be read (its parser stopped after " + time.Since(start).Round(time.Millisecond).String() + ")"}
		}
		return reply{}, fmt.Errorf("sandbox: %w", runErr)
	}
	var rep reply
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return reply{}, &Failure{Reason: "the file could not be read (no answer from its parser)"}
	}
	if rep.Error != "" {
		return reply{}, &Failure{Reason: rep.Error}
	}
	return rep, nil
}

// limitedBuffer keeps up to max bytes and notes whether more came.
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		b.over = true
		b.Buffer.Write(p[:max(0, b.max-b.Len())])
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// ServeWorker is the worker: it limits itself, reads one request from r,
// parses, and writes the reply to w.
func ServeWorker(r io.Reader, w io.Writer) error {
	return serveWorker(r, w, parseRequest)
}

// serveWorker is ServeWorker with its parser passed in: parse runs once
// the worker is confined and limited, so a test can stand a hostile
// parser in its place (one that spins, allocates or crashes) and see the
// limits stop it. Nothing that ships passes anything but parseRequest.
func serveWorker(r io.Reader, w io.Writer, parse func(request) reply) error {
	vm := vmSize() // /proc is closed after confine
	if note, err := confine(); err != nil {
		return fmt.Errorf("worker: %w", err)
	} else if note != "" {
		log.Print("statements worker: ", note)
	}
	var req request
	dec := json.NewDecoder(io.LimitReader(r, 64<<20))
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("worker: read request: %w", err)
	}
	if req.CPU > 0 {
		lim := &syscall.Rlimit{Cur: uint64(req.CPU), Max: uint64(req.CPU) + 1}
		if err := syscall.Setrlimit(syscall.RLIMIT_CPU, lim); err != nil {
			return fmt.Errorf("worker: cpu limit: %w", err)
		}
	}
	if req.Memory > 0 {
		if addressSpaceLimit {
			// A backstop above the parent's RSS watchdog: what the runtime
			// has reserved already plus twice the memory allowed (Go
			// reserves more address space than it touches).
			as := uint64(vm) + 2*uint64(req.Memory)
			if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: as, Max: as}); err != nil {
				return fmt.Errorf("worker: memory limit: %w", err)
			}
		}
	}
	return json.NewEncoder(w).Encode(parse(req))
}

// parseRequest reads req's file as its kind asks into the worker's
// reply.
func parseRequest(req request) reply {
	switch req.Kind {
	case "", requestStatement:
		res, err := Parse(req.Name, req.Data, req.Options)
		if err != nil {
			return reply{Error: err.Error()}
		}
		return reply{Result: &res}
	case requestDocument:
		d, err := ReadDocument(req.Name, req.Data, req.Options, req.Receipt)
		if err != nil {
			return reply{Error: err.Error()}
		}
		return reply{Document: &d}
	}
	return reply{Error: "the worker was asked to read a file as " + strconv.Quote(req.Kind) + ", which it does not know"}
}

// watchRSS kills the worker's process group when its resident memory
// passes limit, and reports whether it did.
func watchRSS(pid int, limit int64, stop <-chan struct{}) bool {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return false
		case <-t.C:
		}
		if rssOf(pid) > limit {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			return true
		}
	}
}

// rssOf reads a process's resident set size in bytes from /proc (0 when
// it cannot be read).
func rssOf(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// vmSize is this process's virtual size in bytes.
func vmSize() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[0], 10, 64)
	return pages * int64(os.Getpagesize())
}
