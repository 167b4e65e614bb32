package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// NATSNode is one node of the harness's three-node NATS cluster. Each
// runs in a process of its own (`chaos -nats-node <json>`, see
// RunNATSNode), so that a SIGKILL stops it as a crash would: no flush, no
// goodbye to its routes.
type NATSNode struct {
	Name        string `json:"name"`
	Port        int    `json:"port"`         // clients
	ClusterPort int    `json:"cluster_port"` // routes from the other nodes
	MonitorPort int    `json:"monitor_port"` // /healthz
	Routes      []int  `json:"routes"`       // the other nodes' cluster ports
	StoreDir    string `json:"store_dir"`
	LogFile     string `json:"log_file"`
}

// ClientURL is where clients connect to the node.
func (n NATSNode) ClientURL() string {
	return "nats://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(n.Port))
}

// RunNATSNode runs node n (given as JSON) until ctx ends, then shuts it
// down. It is cmd/chaos's -nats-node mode.
func RunNATSNode(ctx context.Context, spec string) error {
	var n NATSNode
	if err := json.Unmarshal([]byte(spec), &n); err != nil {
		return fmt.Errorf("node spec: %w", err)
	}
	routes := make([]string, len(n.Routes))
	for i, p := range n.Routes {
		routes[i] = "nats-route://127.0.0.1:" + strconv.Itoa(p)
	}
	opts := &server.Options{
		ServerName: n.Name, Host: "127.0.0.1", Port: n.Port, HTTPHost: "127.0.0.1", HTTPPort: n.MonitorPort,
		JetStream: true, StoreDir: n.StoreDir, JetStreamMaxStore: 64 << 30, MaxPayload: 8 << 20,
		NoSigs: true, LogFile: n.LogFile,
		Cluster: server.ClusterOpts{Name: "purser-chaos", Host: "127.0.0.1", Port: n.ClusterPort},
		Routes:  server.RoutesFromStr(strings.Join(routes, ",")),
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return fmt.Errorf("nats server %s: %w", n.Name, err)
	}
	s.ConfigureLogger()
	go s.Start()
	if !s.ReadyForConnections(60 * time.Second) {
		s.Shutdown()
		return fmt.Errorf("nats server %s not ready", n.Name)
	}
	<-ctx.Done()
	s.Shutdown()
	s.WaitForShutdown()
	return nil
}

// natsCluster is the three nodes and their processes.
type natsCluster struct {
	self  string // this program, run again as a node
	nodes []NATSNode
	procs []*proc // nil while a node is down
	used  *usage  // what the nodes used, over all their lives
}

func newNATSCluster(self, dir string, size int) (*natsCluster, error) {
	nc := &natsCluster{self: self, procs: make([]*proc, size)}
	ports := make([]int, 3*size)
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	for i := range size {
		n := NATSNode{Name: fmt.Sprintf("n%d", i+1), Port: ports[3*i], ClusterPort: ports[3*i+1], MonitorPort: ports[3*i+2],
			StoreDir: filepath.Join(dir, fmt.Sprintf("nats-n%d", i+1)), LogFile: filepath.Join(dir, fmt.Sprintf("nats-n%d.log", i+1))}
		for j := range size {
			if j != i {
				n.Routes = append(n.Routes, ports[3*j+1])
			}
		}
		nc.nodes = append(nc.nodes, n)
	}
	return nc, nil
}

// URLs are every node's client URL, comma-separated, as NATS_URL takes
// them.
func (nc *natsCluster) URLs() string {
	urls := make([]string, len(nc.nodes))
	for i, n := range nc.nodes {
		urls[i] = n.ClientURL()
	}
	return strings.Join(urls, ",")
}

// start starts node i (again) and waits until its client port answers.
func (nc *natsCluster) start(ctx context.Context, i int) error {
	spec, _ := json.Marshal(nc.nodes[i])
	cmd := exec.Command(nc.self, "-nats-node", string(spec))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start NATS node %s: %w", nc.nodes[i].Name, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); nc.used.exited("nats", cmd.ProcessState); close(p.done) }()
	nc.procs[i] = p
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(nc.nodes[i].Port))
	for deadline := time.Now().Add(60 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("NATS node %s exited at start (see %s): %s", nc.nodes[i].Name, nc.nodes[i].LogFile, tailOf(nc.nodes[i].LogFile, 600))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("NATS node %s not listening after 60s", nc.nodes[i].Name)
		}
	}
}

// healthy waits until node i's /healthz says its JetStream is up and
// every stream and consumer it holds a replica of is current, so that
// another node may be killed without losing a quorum.
func (nc *natsCluster) healthy(ctx context.Context, i int, limit time.Duration) error {
	u := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(nc.nodes[i].MonitorPort)) + "/healthz"
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(limit)
	for {
		resp, err := client.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("NATS node %s not healthy after %s", nc.nodes[i].Name, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// kill sends SIGKILL to node i and returns once it is gone.
func (nc *natsCluster) kill(i int) {
	if p := nc.procs[i]; p != nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
		nc.procs[i] = nil
	}
}

// stop ends every node.
func (nc *natsCluster) stop() {
	for _, p := range nc.procs {
		if p != nil {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for i, p := range nc.procs {
		if p == nil {
			continue
		}
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			nc.kill(i)
		}
		nc.procs[i] = nil
	}
}

// tailOf is the last n bytes of the file at path, on one line, or "".
func tailOf(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.Join(strings.Fields(string(b)), " ")
}
