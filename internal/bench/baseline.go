package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Baseline is the bare pipeline purser is measured against: a websocket
// server that publishes each client frame to a JetStream stream, a worker
// that consumes it and publishes the reply frames to a second stream, and
// a consumer of that stream that writes them to the socket. No state, no
// store, no authentication; the worker waits for the model as long as
// purser would for the same turn (a read question takes two model calls,
// every other turn one), with no model otherwise.
type Baseline struct {
	URL string // websocket URL

	srv  *server.Server
	nc   *nats.Conn
	http *http.Server
	dir  string
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu    sync.Mutex
	socks map[string]*websocket.Conn // by conversation
}

// StartBaseline starts the pipeline on an embedded JetStream server (file
// storage in a temporary folder, like purser's) and a loopback port.
func StartBaseline(modelLatency time.Duration) (*Baseline, error) {
	dir, err := os.MkdirTemp("", "purser-bench-*")
	if err != nil {
		return nil, err
	}
	b := &Baseline{dir: dir, socks: map[string]*websocket.Conn{}}
	srv, err := server.NewServer(&server.Options{JetStream: true, StoreDir: dir, DontListen: true, NoSigs: true})
	if err != nil {
		return nil, b.fail(err)
	}
	b.srv = srv
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		return nil, b.fail(errors.New("baseline nats server did not start"))
	}
	if b.nc, err = nats.Connect("", nats.InProcessServer(srv)); err != nil {
		return nil, b.fail(err)
	}
	js, err := jetstream.New(b.nc)
	if err != nil {
		return nil, b.fail(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.stop = cancel
	for _, s := range []jetstream.StreamConfig{
		{Name: "BENCH_IN", Subjects: []string{"bench.in.>"}, Storage: jetstream.FileStorage, Retention: jetstream.WorkQueuePolicy},
		{Name: "BENCH_OUT", Subjects: []string{"bench.out.>"}, Storage: jetstream.FileStorage, Retention: jetstream.WorkQueuePolicy},
	} {
		if _, err := js.CreateOrUpdateStream(ctx, s); err != nil {
			return nil, b.fail(err)
		}
	}
	consume := func(stream string, handle func(jetstream.Msg)) error {
		c, err := js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{Durable: strings.ToLower(stream), AckPolicy: jetstream.AckExplicitPolicy,
			AckWait: 5 * time.Second, MaxAckPending: 4096})
		if err != nil {
			return err
		}
		cc, err := c.Consume(func(m jetstream.Msg) {
			b.wg.Add(1)
			go func() {
				defer b.wg.Done()
				handle(m)
			}()
		}, jetstream.PullMaxMessages(256))
		if err != nil {
			return err
		}
		context.AfterFunc(ctx, cc.Stop)
		return nil
	}
	// The worker: the reply frames for a client frame, after the model's
	// time.
	if err := consume("BENCH_IN", func(m jetstream.Msg) {
		var in struct {
			Type           string `json:"type"`
			ID             string `json:"id"`
			ConversationID string `json:"conversation_id"`
			Text           string `json:"text"`
		}
		_ = json.Unmarshal(m.Data(), &in)
		in.Text, _, _, _ = cutTag(in.Text) // what the stub model would read
		calls, reply := 1, contracts.FrameAnswer
		switch {
		case in.Type == "confirm":
		case strings.HasPrefix(in.Text, "add ") && strings.ContainsAny(in.Text, "0123456789"):
			reply = contracts.FrameProposal
		case strings.HasPrefix(in.Text, "add "):
			reply = contracts.FrameClarify
		case strings.Contains(in.Text, "spend"):
			calls = 2
		}
		select {
		case <-time.After(time.Duration(calls) * modelLatency):
		case <-ctx.Done():
			return
		}
		now := time.Now().UTC()
		out := []contracts.ServerFrame{{Type: contracts.FrameToken, ConversationID: in.ConversationID, TurnID: in.ID, At: now,
			Token: &contracts.TokenBody{Text: "Done"}}}
		end := contracts.ServerFrame{Type: reply, ConversationID: in.ConversationID, TurnID: in.ID, At: now}
		switch reply {
		case contracts.FrameProposal:
			end.Proposal = &contracts.Proposal{ProposalID: "p-" + in.ID, TurnID: in.ID, Tool: contracts.ToolAddExpense, Summary: "Add coffee"}
			out = out[:0]
		case contracts.FrameClarify:
			end.Clarify = &contracts.Clarify{TurnID: in.ID, Question: "What would you like?"}
			out = out[:0]
		default:
			end.Answer = &contracts.Answer{TurnID: in.ID, Content: "Done"}
		}
		for i, f := range append(out, end) {
			data, _ := json.Marshal(f)
			if _, err := js.Publish(ctx, "bench.out."+in.ConversationID, data, jetstream.WithMsgID(fmt.Sprintf("%s-%d", in.ID, i))); err != nil {
				return // not acked: redelivered
			}
		}
		_ = m.DoubleAck(ctx)
	}); err != nil {
		return nil, b.fail(err)
	}
	// The delivery side: frames to the conversation's socket.
	if err := consume("BENCH_OUT", func(m jetstream.Msg) {
		conv := strings.TrimPrefix(m.Subject(), "bench.out.")
		b.mu.Lock()
		c := b.socks[conv]
		b.mu.Unlock()
		if c != nil {
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_ = c.Write(wctx, websocket.MessageText, m.Data())
			cancel()
		}
		_ = m.DoubleAck(ctx)
	}); err != nil {
		return nil, b.fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, b.fail(err)
	}
	b.URL = "ws://" + ln.Addr().String() + "/v1/ws"
	b.http = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { b.serveSocket(ctx, js, w, r) }),
		ReadHeaderTimeout: 10 * time.Second}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		_ = b.http.Serve(ln)
	}()
	return b, nil
}

func (b *Baseline) serveSocket(ctx context.Context, js jetstream.JetStream, w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{auth.Subprotocol}})
	if err != nil {
		return
	}
	defer c.CloseNow()
	var mine []string
	defer func() {
		b.mu.Lock()
		for _, conv := range mine {
			delete(b.socks, conv)
		}
		b.mu.Unlock()
	}()
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		var in struct {
			ID             string `json:"id"`
			ConversationID string `json:"conversation_id"`
		}
		if json.Unmarshal(data, &in) != nil || in.ConversationID == "" || strings.ContainsAny(in.ConversationID, ".*> ") {
			continue
		}
		b.mu.Lock()
		if b.socks[in.ConversationID] != c {
			b.socks[in.ConversationID] = c
			mine = append(mine, in.ConversationID)
		}
		b.mu.Unlock()
		if _, err := js.Publish(ctx, "bench.in."+in.ConversationID, data, jetstream.WithMsgID(in.ID)); err != nil {
			return
		}
	}
}

// Close stops the pipeline and removes its data.
func (b *Baseline) Close() error {
	if b.http != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = b.http.Shutdown(sctx)
		cancel()
	}
	if b.stop != nil {
		b.stop()
	}
	b.mu.Lock()
	for _, c := range b.socks {
		c.CloseNow()
	}
	b.mu.Unlock()
	b.wg.Wait()
	return b.fail(nil)
}

// fail releases what was started and returns err.
func (b *Baseline) fail(err error) error {
	if b.nc != nil {
		b.nc.Close()
	}
	if b.srv != nil {
		b.srv.Shutdown()
		b.srv.WaitForShutdown()
	}
	_ = os.RemoveAll(b.dir)
	return err
}
