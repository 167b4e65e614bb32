// Package pgtest runs a PostgreSQL server of its own, from the binaries
// of the machine's PostgreSQL (initdb and postgres under
// /usr/lib/postgresql/<version>/bin), in a folder of its own on a free
// loopback port, so that a test or the chaos harness may stop, kill and
// start it again without touching any other server.
//
// As root it runs the server as the "postgres" user (initdb refuses
// root), else as the user it runs as. Durability settings are
// PostgreSQL's own but fsync, which is off: a killed server loses nothing
// the operating system already holds, and no test here cuts the power.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// ErrNoPostgres says the machine has no PostgreSQL binaries to run.
var ErrNoPostgres = errors.New("no PostgreSQL binaries (initdb, postgres) under /usr/lib/postgresql/*/bin")

// BinDir is the bin folder of the newest PostgreSQL installed, or
// ErrNoPostgres.
func BinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", ErrNoPostgres
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Server is one private PostgreSQL server. Its methods are not safe for
// concurrent use.
type Server struct {
	bin  string
	dir  string // holds data/ and the socket; removed by Remove
	port int
	cred *syscall.Credential // nil: run as this process's user
	log  *os.File

	cmd  *exec.Cmd
	done chan struct{} // closed when the running postmaster has exited
	// started says the server has taken connections on port once: from
	// then on it keeps the port, which its clients know.
	started bool
}

// Start initialises a new cluster in a new folder under the system temp
// folder and starts its server. The caller stops it with Stop and removes
// its folder with Remove.
func Start(ctx context.Context) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "purser-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir}
	if os.Geteuid() == 0 {
		cred, err := postgresUser()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.cred = cred
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if s.log, err = os.Create(filepath.Join(dir, "postgres.log")); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if s.cred != nil {
		_ = s.log.Chown(int(s.cred.Uid), int(s.cred.Gid))
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", s.DataDir(), "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		s.Remove()
		return nil, fmt.Errorf("initdb: %v: %s", err, strings.TrimSpace(string(out)))
	}
	if err := s.Restart(ctx); err != nil {
		s.Remove()
		return nil, err
	}
	return s, nil
}

// postgresUser is the credential of the "postgres" user, or of nobody.
func postgresUser() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root and there is neither a postgres nor a nobody user to run PostgreSQL as")
}

// DataDir is the cluster's data folder.
func (s *Server) DataDir() string { return filepath.Join(s.dir, "data") }

// LogFile is where the server writes its log.
func (s *Server) LogFile() string { return s.log.Name() }

// logTail is the end of the server's log, for an error that must say why
// the server stopped: the log's folder is gone once the test cleans up.
func (s *Server) logTail() string {
	b, err := os.ReadFile(s.LogFile())
	if err != nil {
		return fmt.Sprintf("its log is unreadable: %v", err)
	}
	const keep = 600
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return strings.TrimSpace(string(b))
}

// URL is the address of database db for the superuser postgres.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// Restart starts the server again after Stop or Kill (on the same port,
// once it has started on one) and waits until it takes connections, which
// after a kill includes its crash recovery. It is also how Start starts
// it, picking another port while a start fails.
func (s *Server) Restart(ctx context.Context) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		if s.port == 0 {
			port, err := pickPort()
			if err != nil {
				return err
			}
			s.port = port
		}
		err := s.start(ctx)
		if err == nil {
			s.started = true
			return nil
		}
		if !s.started {
			// The port was free when picked, and closed again for the
			// server to take: another process (another test's server)
			// may have taken it meanwhile. Pick another.
			s.port = 0
		}
		// After a kill, backends of the old postmaster may still hold its
		// shared memory for a moment; the new one refuses until they go.
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// pickPort is a loopback port free when asked.
var pickPort = func() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// errNotOurs says that the server answering on the port is not this
// one: another had the port, and this one could not bind it.
var errNotOurs = errors.New("another PostgreSQL answers on the port")

func (s *Server) start(ctx context.Context) error {
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.DataDir(), "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+s.dir, "-c", "fsync=off",
		"-c", "max_connections=300", "-c", "shared_buffers=64MB")
	// Gone with its parent, should that die before it stops the server.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	db, err := sql.Open("pgx", s.URL("postgres"))
	if err != nil {
		_ = cmd.Process.Kill()
		<-done
		return err
	}
	defer db.Close()
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := db.PingContext(pctx)
		cancel()
		if err == nil {
			if !s.ours(ctx, db) {
				_ = cmd.Process.Kill()
				<-done
				return errNotOurs
			}
			s.cmd, s.done = cmd, done
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("postgres exited at start: %s", s.logTail())
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-done
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ours reports whether the server db reaches serves this one's data
// folder.
func (s *Server) ours(ctx context.Context, db *sql.DB) bool {
	var dir string
	if err := db.QueryRowContext(ctx, `SHOW data_directory`).Scan(&dir); err != nil {
		return false
	}
	if dir == s.DataDir() {
		return true
	}
	a, errA := filepath.EvalSymlinks(dir)
	b, errB := filepath.EvalSymlinks(s.DataDir())
	return errA == nil && errB == nil && a == b
}

// Kill sends SIGKILL to the postmaster and every process it started
// (backends, writers), as a crash of the server's machine or container
// would, and returns once the postmaster is gone. Killed alone, the
// postmaster would leave its backends serving their sessions for a
// moment. (Each backend leads a session of its own: killing the
// postmaster's process group would not reach them.)
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	children := childrenOf(s.cmd.Process.Pid)
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	for _, pid := range children {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	<-s.done
	s.cmd = nil
}

// Stop shuts the server down as `pg_ctl stop -m fast` does (SIGINT: open
// transactions roll back, sessions end) and waits for it.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Signal(syscall.SIGKILL)
		<-s.done
	}
	s.cmd = nil
}

// CreateDatabase creates database name.
func (s *Server) CreateDatabase(ctx context.Context, name string) error {
	db, err := sql.Open("pgx", s.URL("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// Remove stops the server and deletes its folder.
func (s *Server) Remove() {
	s.Stop()
	if s.log != nil {
		s.log.Close()
	}
	os.RemoveAll(s.dir)
}

// childrenOf lists the processes whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// ForTest starts a server for t with database db created, removed when t
// ends; t is skipped, saying why, only when the machine has no PostgreSQL
// binaries to run.
func ForTest(t testing.TB, ctx context.Context, db string) *Server {
	t.Helper()
	s, err := Start(ctx)
	if errors.Is(err, ErrNoPostgres) {
		t.Skip("PostgreSQL is not installed here (initdb under /usr/lib/postgresql/*/bin); this test runs a server of its own")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Remove)
	if err := s.CreateDatabase(ctx, db); err != nil {
		t.Fatal(err)
	}
	return s
}
