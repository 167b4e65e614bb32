package ingress_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/natstest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/ingress"
)

// childEnv, when set to a NATS URL, makes the test binary an ingress
// process of its own (see serveChild): the idle-connection benchmark
// measures that process's memory, apart from the clients'.
const childEnv = "PURSER_BENCH_INGRESS_NATS"

func TestMain(m *testing.M) {
	if url := os.Getenv(childEnv); url != "" {
		if err := serveChild(url); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveChild runs an ingress against the NATS server at url, prints
// "ADDR host:port", and serves until its standard input closes. Besides
// the client routes it answers GET /memstats with the Go heap and stacks
// in use after a collection, and the number of goroutines, and GET
// /settle by collecting and returning free memory to the OS.
func serveChild(url string) error {
	nc, err := nats.Connect(url)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	verifier, err := auth.NewVerifier(auth.Config{Secret: testSecret, Issuer: issuer, Audience: audience})
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	in := ingress.New(ingress.Config{}, verifier, nc, bus.NewPublisher(nc, js), ingress.NewMetrics(prometheus.NewRegistry()), log, time.Now)
	defer in.Close()
	mux := http.NewServeMux()
	in.Routes(mux)
	mux.HandleFunc("/settle", func(w http.ResponseWriter, _ *http.Request) {
		// What the runtime does by itself within minutes: a collection
		// (forced every two), another to shrink the stacks it halved,
		// and free memory returned to the OS.
		runtime.GC()
		runtime.GC()
		debug.FreeOSMemory()
	})
	mux.HandleFunc("/memstats", func(w http.ResponseWriter, _ *http.Request) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(w, "%d %d", ms.HeapInuse+ms.StackInuse, runtime.NumGoroutine())
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	fmt.Println("ADDR", l.Addr().String())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return srv.Close()
}

// BenchmarkIdleConnections opens 10,000 websockets, one user each, to an
// ingress in a child process and reports what they cost it: resident
// memory and Go heap plus stacks per connection, and connections per GiB;
// and resident memory once settled: after two collections with free memory
// returned to the OS, which the runtime does by itself within minutes.
// The silent sockets send nothing; the pinged ones send a ping frame and
// read its pong first, as the web client does when it connects, so the
// ingress has read from each.
//
//	go test -run '^$' -bench IdleConnections -benchtime 1x ./services/ingress
func BenchmarkIdleConnections(b *testing.B) {
	b.Run("silent", func(b *testing.B) { benchIdle(b, false) })
	b.Run("pinged", func(b *testing.B) { benchIdle(b, true) })
}

func benchIdle(b *testing.B, ping bool) {
	const conns = 10_000
	ns, _ := natstest.Start(b)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+ns.ClientURL())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ADDR ")
	if err != nil || !ok {
		b.Fatalf("child ingress: %q, %v", line, err)
	}

	minter := auth.NewMinter(testSecret, issuer, audience, nil)
	tokens := make([]string, conns)
	for i := range tokens {
		if tokens[i], err = minter.Mint("acme", "u"+strconv.Itoa(i), []auth.Role{auth.RoleMember}, time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		settle(b, addr)
		rss0 := childRSS(b, cmd.Process.Pid)
		heap0, g0 := childHeap(b, addr)
		open := dialAll(b, "ws://"+addr+"/v1/ws", tokens)
		if ping {
			pingAll(b, open)
		}
		// Past the resume window every socket is idle: no timers, no holds.
		time.Sleep(3 * time.Second)
		rss1 := childRSS(b, cmd.Process.Pid)
		heap1, g1 := childHeap(b, addr)
		settle(b, addr)
		rss2 := childRSS(b, cmd.Process.Pid)
		for _, c := range open {
			c.CloseNow()
		}
		perConnRSS := float64(rss1-rss0) / conns
		b.ReportMetric(perConnRSS/1024, "KiB-rss/conn")
		b.ReportMetric(float64(rss2-rss0)/conns/1024, "KiB-rss-settled/conn")
		b.ReportMetric(float64(heap1-heap0)/conns/1024, "KiB-heap+stack/conn")
		b.ReportMetric((1<<30)/perConnRSS, "conns/GiB")
		b.ReportMetric(float64(g1-g0)/conns, "goroutines/conn")
	}
}

// dialAll opens one socket per token, 32 at a time.
func dialAll(b *testing.B, url string, tokens []string) []*websocket.Conn {
	b.Helper()
	out := make([]*websocket.Conn, len(tokens))
	err := each(len(tokens), func(ctx context.Context, i int) error {
		c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{
			HTTPHeader:   http.Header{"Authorization": []string{"Bearer " + tokens[i]}},
			Subprotocols: []string{auth.Subprotocol},
		})
		out[i] = c
		return err
	})
	if err != nil {
		for _, c := range out {
			if c != nil {
				c.CloseNow()
			}
		}
		b.Fatalf("dial: %v", err)
	}
	return out
}

// pingAll sends a ping frame on each socket and reads its pong, 32 at a
// time.
func pingAll(b *testing.B, conns []*websocket.Conn) {
	b.Helper()
	err := each(len(conns), func(ctx context.Context, i int) error {
		if err := conns[i].Write(ctx, websocket.MessageText, []byte(`{"type":"ping"}`)); err != nil {
			return err
		}
		_, data, err := conns[i].Read(ctx)
		if err == nil && !strings.Contains(string(data), `"pong"`) {
			err = fmt.Errorf("got %s, want a pong", data)
		}
		return err
	})
	if err != nil {
		b.Fatalf("ping: %v", err)
	}
}

// each runs do for 0..n-1, 32 at a time, each within 30 s, and returns
// an error one of them met (the others stop taking more).
func each(n int, do func(ctx context.Context, i int) error) error {
	var (
		next   atomic.Int64
		failed atomic.Bool
		once   sync.Once
		first  error
		wg     sync.WaitGroup
	)
	for range 32 {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				err := do(ctx, i)
				cancel()
				if err != nil {
					once.Do(func() { first = err })
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// childRSS is the resident set of process pid, in bytes.
func childRSS(b *testing.B, pid int) int64 {
	b.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatalf("read child status: %v", err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				b.Fatalf("VmRSS %q: %v", rest, err)
			}
			return kb * 1024
		}
	}
	b.Fatal("no VmRSS in the child's status")
	return 0
}

// settle has the child collect twice and return free memory to the OS.
func settle(b *testing.B, addr string) {
	b.Helper()
	resp, err := http.Get("http://" + addr + "/settle")
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
}

// childHeap is the child's Go heap and stacks in use after a collection,
// and its goroutines.
func childHeap(b *testing.B, addr string) (int64, int64) {
	b.Helper()
	resp, err := http.Get("http://" + addr + "/memstats")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var mem, goroutines int64
	if _, err := fmt.Sscanf(string(body), "%d %d", &mem, &goroutines); err != nil {
		b.Fatalf("memstats %q: %v", body, err)
	}
	return mem, goroutines
}

// BenchmarkDeliver measures frames per second from the users' deliver
// subjects to 1,000 connected users, one socket each, through the ingress;
// the baseline is the same frames to 1,000 bare NATS subscriptions in the
// same run.
//
//	go test -run '^$' -bench Deliver -benchtime 200000x ./services/ingress
func BenchmarkDeliver(b *testing.B) {
	const users = 1000
	// One answer frame of a typical size, sent to every user.
	payload, _ := json.Marshal(contracts.ServerFrame{Type: contracts.FrameAnswer, Seq: 1, ConversationID: "c1", TurnID: "t1",
		At: time.Now().UTC(), Answer: &contracts.Answer{TurnID: "t1", Content: "You spent £42.10 on groceries this week across 3 expenses."}})
	subjects := make([]string, users)
	for i := range subjects {
		subjects[i], _ = bus.DeliverSubject("acme", "u"+strconv.Itoa(i))
	}
	publish := func(b *testing.B, nc *nats.Conn, received *atomic.Int64) {
		b.ResetTimer()
		for i := range b.N {
			if err := nc.Publish(subjects[i%users], payload); err != nil {
				b.Fatal(err)
			}
		}
		deadline := time.Now().Add(2 * time.Minute)
		for received.Load() < int64(b.N) {
			if time.Now().After(deadline) {
				b.Fatalf("received %d of %d frames", received.Load(), b.N)
			}
			time.Sleep(time.Millisecond)
		}
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
	}

	b.Run("nats-subscribers", func(b *testing.B) {
		ns, nc := natstest.Start(b)
		sc := natstest.Connect(b, ns, "subscribers")
		var received atomic.Int64
		for _, s := range subjects {
			sub, err := sc.Subscribe(s, func(*nats.Msg) { received.Add(1) })
			if err != nil {
				b.Fatal(err)
			}
			_ = sub.SetPendingLimits(-1, -1)
		}
		if err := sc.Flush(); err != nil {
			b.Fatal(err)
		}
		publish(b, nc, &received)
	})

	b.Run("ingress-sockets", func(b *testing.B) {
		h := newHarness(b, func(c *ingress.Config) { c.SendQueue = 4096 })
		var received atomic.Int64
		var wg sync.WaitGroup
		ctx, cancel := context.WithCancel(context.Background())
		b.Cleanup(func() { cancel(); wg.Wait() })
		for i := range users {
			c := h.dial(h.token("acme", "u"+strconv.Itoa(i)))
			wg.Go(func() {
				for {
					if _, _, err := c.conn.Read(ctx); err != nil {
						return
					}
					received.Add(1)
				}
			})
		}
		publish(b, h.nc, &received)
		if drops := h.metric("purser_ingress_send_queue_drops_total"); drops != 0 {
			b.Fatalf("%v sockets dropped for slowness", drops)
		}
	})
}
