// Package chaos runs purser's four services apart, as separate processes
// against a NATS server on a loopback port and a fresh PostgreSQL database,
// drives many users' turns through the ingress, kills services (or the NATS
// server) at random moments and restarts them, and then compares what the
// users were told with what the database holds. It is `make chaos`.
package chaos

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/purser-ai/purser/internal/pgtest"
)

// cluster is the NATS server, the database and the service processes.
type cluster struct {
	bin     string
	dir     string
	natsOpt *server.Options
	nats    *server.Server
	natsMu  sync.Mutex
	dsn     string
	dropDB  func()
	dbName  string
	keepDB  bool
	secret  string
	env     []string
	ingress string // host:port

	mu    sync.Mutex
	procs map[string]*proc
	addrs map[string]string

	// In cluster mode: the NATS nodes (natsOpt and nats are then unused)
	// and the harness's own PostgreSQL server.
	natsNodes *natsCluster
	pg        *pgtest.Server
	// used is what the service processes used, in cluster mode.
	used *usage
	// startExits are the processes that exited before they were ready
	// and were started again.
	startExits []string
}

// proc is one running service; done closes when it has exited.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	// ready is set, under the cluster's mu, once it answered /readyz.
	ready bool
}

// Services are the four, in start order.
var Services = []string{"notifier", "toolrunner", "orchestrator", "ingress"}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// startCluster starts NATS, creates the database, migrates it and starts
// every service.
func startCluster(ctx context.Context, bin, baseDSN, dir string) (*cluster, error) {
	c := &cluster{bin: bin, dir: dir, procs: map[string]*proc{}, addrs: map[string]string{}, secret: randomHex(32)}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	c.natsOpt = &server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: filepath.Join(dir, "nats"),
		NoSigs: true, MaxPayload: 8 << 20}
	if err := c.startNATS(); err != nil {
		return nil, err
	}
	if err := c.createDatabase(ctx, baseDSN); err != nil {
		c.stop()
		return nil, err
	}
	mailbox := filepath.Join(dir, "mailbox")
	if err := os.MkdirAll(mailbox, 0o755); err != nil {
		c.stop()
		return nil, err
	}
	c.env = append(os.Environ(),
		"NATS_URL=nats://"+net.JoinHostPort("127.0.0.1", fmt.Sprint(port)),
		"DATABASE_URL="+c.dsn,
		"PURSER_JWT_SECRET="+c.secret,
		"PURSER_MODEL=offline",
		"PURSER_MAILBOX_DIR="+mailbox,
		"PURSER_LOG_LEVEL=info", // turn starts and ends: what -keep leaves shows where a stuck turn stopped
	)
	if out, err := c.command(ctx, "migrate").CombinedOutput(); err != nil {
		c.stop()
		return nil, fmt.Errorf("purser migrate: %v: %s", err, out)
	}
	for _, s := range Services {
		if err := c.start(ctx, s); err != nil {
			c.stop()
			return nil, err
		}
	}
	c.ingress = c.addrs["ingress"]
	return c, nil
}

func (c *cluster) startNATS() error {
	c.natsMu.Lock()
	defer c.natsMu.Unlock()
	s, err := server.NewServer(c.natsOpt)
	if err != nil {
		return fmt.Errorf("nats server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		return fmt.Errorf("nats server not ready")
	}
	c.nats = s
	return nil
}

// restartNATS stops the NATS server and, after down, starts it again on
// the same port and data folder.
func (c *cluster) restartNATS(down time.Duration) error {
	c.natsMu.Lock()
	s := c.nats
	c.natsMu.Unlock()
	s.Shutdown()
	s.WaitForShutdown()
	time.Sleep(down)
	return c.startNATS()
}

func (c *cluster) createDatabase(ctx context.Context, baseDSN string) error {
	admin, err := sql.Open("pgx", baseDSN)
	if err != nil {
		return err
	}
	name := "purser_chaos_" + randomHex(6)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return fmt.Errorf("create database: %w", err)
	}
	u, err := url.Parse(baseDSN)
	if err != nil {
		admin.Close()
		return err
	}
	u.Path = "/" + name
	c.dsn = u.String()
	c.dbName = name
	c.dropDB = func() {
		if c.keepDB {
			admin.Close()
			return
		}
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = admin.ExecContext(dctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close()
	}
	return nil
}

func (c *cluster) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env = c.env
	return cmd
}

// serviceOf is the service a process name runs: "ingress" for
// "ingress" and for its replica "ingress-2".
func serviceOf(name string) string {
	s, _, _ := strings.Cut(name, "-")
	return s
}

// start starts service s (a service, or a replica named
// <service>-<n>) on a port of its own (the same one again after a kill)
// and waits until /readyz answers. A process that exits before it is
// ready is started again, up to three times in all, as its supervisor
// (Kubernetes) would; each such exit is kept, with its log's last
// words, for the report.
func (c *cluster) start(ctx context.Context, s string) error {
	for try := 1; ; try++ {
		err := c.startOnce(ctx, s)
		var exit *exitedAtStart
		if err == nil || !errors.As(err, &exit) || try == 3 || ctx.Err() != nil {
			return err
		}
		c.mu.Lock()
		c.startExits = append(c.startExits, "started again: "+err.Error())
		c.mu.Unlock()
		time.Sleep(time.Second)
	}
}

// exitedAtStart is a service process that ended before it was ready.
type exitedAtStart struct {
	name, state, tail string
}

func (e *exitedAtStart) Error() string {
	return fmt.Sprintf("%s exited before it was ready (%s): %s", e.name, e.state, e.tail)
}

func (c *cluster) startOnce(ctx context.Context, s string) error {
	c.mu.Lock()
	addr := c.addrs[s]
	c.mu.Unlock()
	if addr == "" {
		port, err := freePort()
		if err != nil {
			return err
		}
		addr = net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	}
	logPath := filepath.Join(c.dir, s+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.bin, serviceOf(s))
	cmd.Env = append(append([]string{}, c.env...), "PURSER_HTTP_ADDR="+addr)
	// Gone with the harness, should it die before it stops them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", s, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		c.used.exited(serviceOf(s), cmd.ProcessState)
		logf.Close()
		close(p.done)
		// Neither killed nor stopped by the harness (which forgets a
		// process first), nor waited for at start: it ended on its own.
		c.mu.Lock()
		if c.procs[s] == p && p.ready {
			delete(c.procs, s)
			c.startExits = append(c.startExits, fmt.Sprintf("%s exited on its own (%s): %s", s, cmd.ProcessState, tailOf(logPath, 400)))
		}
		c.mu.Unlock()
	}()
	c.mu.Lock()
	c.procs[s], c.addrs[s] = p, addr
	c.mu.Unlock()
	// Longer than a service's own wait at start for JetStream or the
	// database (2 minutes, internal/app's startWaitLimit).
	err = waitReady(ctx, "http://"+addr+"/readyz", 3*time.Minute, p.done)
	if err == nil {
		c.mu.Lock()
		p.ready = true
		c.mu.Unlock()
	}
	if errors.Is(err, errExited) {
		c.mu.Lock()
		if c.procs[s] == p {
			delete(c.procs, s)
		}
		c.mu.Unlock()
		return &exitedAtStart{name: s, state: cmd.ProcessState.String(), tail: tailOf(logPath, 400)}
	}
	return err
}

// kill sends SIGKILL to service s and returns once it is gone.
func (c *cluster) kill(s string) {
	c.mu.Lock()
	p := c.procs[s]
	delete(c.procs, s)
	c.mu.Unlock()
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop ends every process, the NATS server and the database.
func (c *cluster) stop() {
	c.mu.Lock()
	procs := c.procs
	c.procs = map[string]*proc{}
	c.mu.Unlock()
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range procs {
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	c.natsMu.Lock()
	if c.nats != nil {
		c.nats.Shutdown()
	}
	c.natsMu.Unlock()
	if c.natsNodes != nil {
		c.natsNodes.stop()
	}
	if c.dropDB != nil {
		c.dropDB()
	}
	switch {
	case c.pg != nil && c.keepDB:
		c.pg.Stop()
	case c.pg != nil:
		c.pg.Remove()
	}
}

// errExited is waitReady's answer when the process ended first.
var errExited = errors.New("exited before it was ready")

// waitReady waits until u answers 200, for at most limit, or until
// exited (when not nil) closes.
func waitReady(ctx context.Context, u string, limit time.Duration, exited <-chan struct{}) error {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := client.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s", strings.TrimSuffix(u, "/readyz"), limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-exited:
			return errExited
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// keepDatabase leaves the run's database in place at the end, for a look
// at what a stuck turn left behind, and returns its name.
func (c *cluster) keepDatabase() string {
	c.keepDB = true
	return c.dbName
}

// startDetails are the report's lines for the processes that exited at
// start and were started again: not a lost turn, but a start that
// should not fail.
func (c *cluster) startDetails() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, e := range c.startExits {
		out = append(out, e)
	}
	return out
}
