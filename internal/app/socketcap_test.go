package app

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/pkg/contracts"
)

// With the default configuration a user holds 16 sockets and the 17th
// upgrade is refused with 429. The numbers are literal so that the test
// fails if the default moves.
func TestDefaultSocketCapIsSixteen(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	bob := mint(t, info, "demo", "bob", auth.RoleMember)
	for range 16 {
		// A pong says the server holds the socket (it counts a socket
		// once upgraded, so the next dial would race it otherwise).
		c := dial(t, info, bob)
		c.send(`{"type":"ping"}`)
		c.next(contracts.FramePong)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, info.WebsocketURL(), &websocket.DialOptions{
		HTTPHeader:   http.Header{"Authorization": []string{"Bearer " + bob}},
		Subprotocols: []string{auth.Subprotocol},
	})
	if err == nil {
		conn.CloseNow()
		t.Fatal("a 17th socket was opened, want it refused")
	}
	if resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("17th socket: %v, response %v; want 429", err, resp)
	}
	dial(t, info, mint(t, info, "demo", "carol", auth.RoleMember)) // carol's places are her own
}
