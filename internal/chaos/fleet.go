package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/purser-ai/purser/internal/pgtest"
)

// replicaNames are the processes of cluster mode, in start order: each
// service twice, named <service>-1 and <service>-2.
func replicaNames(replicas int) []string {
	var names []string
	for _, s := range Services {
		for i := range replicas {
			names = append(names, fmt.Sprintf("%s-%d", s, i+1))
		}
	}
	return names
}

// startFleet starts cluster mode's parts: a three-node NATS cluster (each
// node a process of self), a PostgreSQL server of its own, and replicas
// of every service, each given every node's URL and told to create
// streams at three replicas.
func startFleet(ctx context.Context, bin, self, dir string, replicas int) (*cluster, error) {
	c := &cluster{bin: bin, dir: dir, procs: map[string]*proc{}, addrs: map[string]string{}, secret: randomHex(32), used: newUsage()}
	nodes, err := newNATSCluster(self, dir, 3)
	if err != nil {
		return nil, err
	}
	nodes.used = c.used
	c.natsNodes = nodes
	for i := range nodes.nodes {
		if err := nodes.start(ctx, i); err != nil {
			c.stop()
			return nil, err
		}
	}
	if err := jetStreamReady(ctx, nodes.URLs(), 60*time.Second); err != nil {
		c.stop()
		return nil, err
	}
	if c.pg, err = pgtest.Start(ctx); err != nil {
		c.stop()
		return nil, fmt.Errorf("PostgreSQL: %w", err)
	}
	c.dbName = "purser_chaos"
	if err := c.pg.CreateDatabase(ctx, c.dbName); err != nil {
		c.stop()
		return nil, err
	}
	c.dsn = c.pg.URL(c.dbName)
	mailbox := filepath.Join(dir, "mailbox")
	if err := os.MkdirAll(mailbox, 0o755); err != nil {
		c.stop()
		return nil, err
	}
	c.env = append(os.Environ(),
		"NATS_URL="+nodes.URLs(),
		"DATABASE_URL="+c.dsn,
		"PURSER_STREAM_REPLICAS=3",
		"PURSER_JWT_SECRET="+c.secret,
		"PURSER_MODEL=offline",
		"PURSER_MAILBOX_DIR="+mailbox,
		"PURSER_LOG_LEVEL=info",
	)
	if out, err := c.command(ctx, "migrate").CombinedOutput(); err != nil {
		c.stop()
		return nil, fmt.Errorf("purser migrate: %v: %s", err, out)
	}
	for _, name := range replicaNames(replicas) {
		if err := c.start(ctx, name); err != nil {
			c.stop()
			return nil, err
		}
	}
	return c, nil
}

// jetStreamReady waits until the cluster has a JetStream meta leader
// (it answers an account info request).
func jetStreamReady(ctx context.Context, urls string, limit time.Duration) error {
	nc, err := nats.Connect(urls, nats.Name("chaos-probe"), nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("connect to NATS: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(limit)
	for {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := js.AccountInfo(actx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("JetStream cluster not ready after %s: %w", limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// term sends SIGTERM to process name and waits for it to exit, as a
// rolling deploy does; after limit it is killed and term says so.
func (c *cluster) term(name string, limit time.Duration) error {
	c.mu.Lock()
	p := c.procs[name]
	delete(c.procs, name)
	c.mu.Unlock()
	if p == nil {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(limit):
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("%s did not exit within %s of SIGTERM; killed", name, limit)
	}
}

// ingresses are the addresses of the ingress replicas.
func (c *cluster) ingresses(replicas int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for i := range replicas {
		out = append(out, c.addrs[fmt.Sprintf("ingress-%d", i+1)])
	}
	return out
}

// usageLine adds what the processes still running have used to what
// those that exited did, and says it per 1,000 turns.
func (c *cluster) usageLine(turns int) string {
	c.mu.Lock()
	for name, p := range c.procs {
		c.used.running(serviceOf(name), p.cmd.Process.Pid)
	}
	c.mu.Unlock()
	for _, p := range c.natsNodes.procs {
		if p != nil {
			c.used.running("nats", p.cmd.Process.Pid)
		}
	}
	return c.used.Line(turns)
}
