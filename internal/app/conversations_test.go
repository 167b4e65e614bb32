package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/pkg/contracts"
)

func getJSON(t *testing.T, i Info, token, path string, into any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+i.HTTPAddr+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if into != nil {
		_ = json.NewDecoder(resp.Body).Decode(into)
	}
	return resp.StatusCode
}

// Conversations live on the server: what the user writes is a frame with
// its seq, delivered to every socket of theirs and replayed by history;
// the user's conversations are listed with titles, and history pages
// backwards. Another user sees none of it.
func TestConversationsFollowTheUser(t *testing.T) {
	info := startUp(t)
	bob := mint(t, info, "demo", "bob", auth.RoleMember)
	phone, laptop := dial(t, info, bob), dial(t, info, bob)
	for i, text := range []string{"hello there", "what did I spend this month?", "hello again"} {
		phone.send(fmt.Sprintf(`{"type":"message","id":"m%d","conversation_id":"trip","text":%q}`, i, text))
		echo := laptop.next(contracts.FrameUserMessage)
		if echo.UserMessage == nil || echo.UserMessage.Text != text || echo.UserMessage.ID != fmt.Sprintf("m%d", i) || echo.Seq < 1 {
			t.Fatalf("the other device got %+v for %q", echo, text)
		}
		laptop.next(contracts.FrameAnswer)
		phone.next(contracts.FrameAnswer)
	}
	phone.send(`{"type":"message","id":"x1","conversation_id":"groceries","text":"add £3 milk today"}`)
	phone.next(contracts.FrameProposal)

	var list struct {
		Conversations []contracts.ConversationSummary `json:"conversations"`
	}
	if status := getJSON(t, info, bob, "/v1/conversations", &list); status != http.StatusOK || len(list.Conversations) != 2 {
		t.Fatalf("conversations = %d %+v", status, list)
	}
	if c := list.Conversations[0]; c.ID != "groceries" || c.Title != "add £3 milk today" {
		t.Errorf("latest conversation = %+v", c)
	}
	if c := list.Conversations[1]; c.ID != "trip" || c.Title != "hello there" {
		t.Errorf("older conversation = %+v", c)
	}
	// The same list over the socket, answered under the request's id.
	phone.send(`{"type":"conversations","id":"l1"}`)
	ws := phone.next(contracts.FrameConversations)
	if ws.Conversations == nil || ws.Conversations.ID != "l1" || len(ws.Conversations.Items) != 2 ||
		ws.Conversations.Items[0].ID != "groceries" || ws.Conversations.Items[1].Title != "hello there" {
		t.Errorf("conversations over the socket = %+v", ws.Conversations)
	}

	// The trip's history, paged back from the newest three frames at a
	// time: every frame once, in seq order, the user's messages among them.
	var all []contracts.ServerFrame
	path := "/v1/conversations/trip/frames?limit=3"
	for pages := 0; ; pages++ {
		var page struct {
			Frames []contracts.ServerFrame `json:"frames"`
			More   bool                    `json:"more"`
		}
		if status := getJSON(t, info, bob, path, &page); status != http.StatusOK || len(page.Frames) == 0 || pages > 10 {
			t.Fatalf("history page %d = %d, %d frames", pages, status, len(page.Frames))
		}
		all = append(page.Frames, all...)
		if !page.More {
			break
		}
		path = fmt.Sprintf("/v1/conversations/trip/frames?limit=3&before_seq=%d", page.Frames[0].Seq)
	}
	var said []string
	for i, f := range all {
		if i > 0 && f.Seq <= all[i-1].Seq {
			t.Errorf("history out of order at %d: seq %d after %d", i, f.Seq, all[i-1].Seq)
		}
		if f.ConversationID != "trip" {
			t.Errorf("a frame of %q in trip's history", f.ConversationID)
		}
		if f.UserMessage != nil {
			said = append(said, f.UserMessage.Text)
		}
	}
	if fmt.Sprint(said) != "[hello there what did I spend this month? hello again]" || all[len(all)-1].Type != contracts.FrameAnswer {
		t.Fatalf("history = %d frames, user messages %q, last %s", len(all), said, all[len(all)-1].Type)
	}

	// The demo owner has conversations of their own, not bob's.
	var theirs struct {
		Conversations []contracts.ConversationSummary `json:"conversations"`
	}
	getJSON(t, info, info.DemoToken, "/v1/conversations", &theirs)
	for _, c := range theirs.Conversations {
		if c.ID == "trip" || c.ID == "groceries" {
			t.Errorf("another user lists bob's conversation %+v", c)
		}
	}
	var none struct {
		Frames []json.RawMessage `json:"frames"`
	}
	getJSON(t, info, info.DemoToken, "/v1/conversations/trip/frames", &none)
	if len(none.Frames) != 0 {
		t.Errorf("another user reads bob's history: %s", none.Frames)
	}
}
