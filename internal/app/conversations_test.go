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
	t.Parallel()
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

// Conversations are per person. Bob writing to "chat-olga" first takes
// nothing of Olga's: her default HTTP chat (no conversation_id) answers her
// as if he had never written; and two people using the same explicit id
// each see only their own history there.
func TestConversationsArePerPerson(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	olga := mint(t, info, "demo", "olga", auth.RoleMember)
	bob := mint(t, info, "demo", "bob", auth.RoleMember)

	if status, body := chatCall(t, info, bob, `{"history":[],"conversation_id":"chat-olga","message":"hello from bob"}`); status != http.StatusOK {
		t.Fatalf("bob's chat in chat-olga = %d %v", status, body)
	}
	status, body := chatCall(t, info, olga, `{"history":[],"message":"hello from olga"}`)
	if answer, _ := body["answer"].(string); status != http.StatusOK || answer == "" || body["conversation_id"] != "chat-olga" {
		t.Fatalf("olga's default chat after bob wrote to chat-olga = %d %v, want 200 with an answer in chat-olga", status, body)
	}

	// The same explicit id, used by both: a change proposed to bob waits
	// for bob alone, and olga's list there is her own.
	status, body = chatCall(t, info, bob, `{"history":[],"conversation_id":"shared","message":"add £2 tea today"}`)
	proposal, _ := body["proposal"].(map[string]any)
	if status != http.StatusOK || proposal == nil {
		t.Fatalf("bob's add in shared = %d %v", status, body)
	}
	if status, body := chatCall(t, info, olga, `{"history":[],"conversation_id":"shared","message":"yes"}`); status != http.StatusOK || body["added"] != nil {
		t.Fatalf("olga's yes in shared = %d %v, want an answer that adds nothing", status, body)
	}
	confirm := `{"history":[],"conversation_id":"shared","confirm":{"proposal_id":"` + proposal["proposal_id"].(string) + `","decision":"approve"}}`
	if status, body := chatCall(t, info, olga, confirm); status != http.StatusConflict || body["added"] != nil {
		t.Fatalf("olga approving bob's proposal = %d %v, want 409: it is not a proposal of hers", status, body)
	}
	if status, body := chatCall(t, info, bob, confirm); status != http.StatusOK || body["added"] == nil {
		t.Fatalf("bob's own approve = %d %v", status, body)
	}

	said := func(token, conv string) []string {
		t.Helper()
		var page struct {
			Frames []contracts.ServerFrame `json:"frames"`
		}
		if status := getJSON(t, info, token, "/v1/conversations/"+conv+"/frames?limit=100", &page); status != http.StatusOK {
			t.Fatalf("history of %s = %d", conv, status)
		}
		var texts []string
		for _, f := range page.Frames {
			if f.UserMessage != nil {
				texts = append(texts, f.UserMessage.Text)
			}
		}
		return texts
	}
	for _, tt := range []struct {
		name, token, conv string
		want              string
	}{
		{"olga", olga, "chat-olga", "[hello from olga]"},
		{"bob", bob, "chat-olga", "[hello from bob]"},
		{"olga", olga, "shared", "[yes]"},
		{"bob", bob, "shared", "[add £2 tea today]"},
		{"demo", info.DemoToken, "shared", "[]"}, // an id never used: the same empty page
	} {
		if got := fmt.Sprint(said(tt.token, tt.conv)); got != tt.want {
			t.Errorf("%s's messages in %s = %s, want %s", tt.name, tt.conv, got, tt.want)
		}
	}
}
