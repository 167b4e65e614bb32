package orchestrator

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A read keeps its whole list in working memory, and memory goes into
// every later prompt: a month of 500 expenses must not cost 500 items in
// every call after it. The prompt shows the first items and how many
// more there are; memory keeps them all for a plan's references.
func TestPromptShowsTheFirstItemsOfALongList(t *testing.T) {
	listOf := func(n int) json.RawMessage {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf(`{"id":%d,"item":"lunch %d","amount_minor":1250}`, i+1, i+1)
		}
		return json.RawMessage("[" + strings.Join(items, ",") + "]")
	}
	s := State{Turn: &Turn{TurnID: "T1"}, Memory: Memory{
		"lists.expenses": listOf(500),
		"lists.messages": listOf(3),
		"ids.message_id": json.RawMessage(`"m1"`),
	}}
	p := PromptFor(s, testEnv(t0))

	var shown []json.RawMessage
	if err := json.Unmarshal(p.Memory["lists.expenses"], &shown); err != nil {
		t.Fatal(err)
	}
	if len(shown) != promptListItems+1 {
		t.Fatalf("the prompt shows %d items of 500, want %d and a note", len(shown), promptListItems)
	}
	var firstItem struct{ ID int }
	if json.Unmarshal(shown[0], &firstItem) != nil || firstItem.ID != 1 {
		t.Errorf("first item shown = %s, want the list's first", shown[0])
	}
	var note string
	if json.Unmarshal(shown[promptListItems], &note) != nil || !strings.Contains(note, "480 more") {
		t.Errorf("last item shown = %s, want a note of the 480 not shown", shown[promptListItems])
	}
	if string(p.Memory["lists.messages"]) != string(s.Memory["lists.messages"]) || string(p.Memory["ids.message_id"]) != `"m1"` {
		t.Errorf("short lists and other values must be shown whole: %s, %s", p.Memory["lists.messages"], p.Memory["ids.message_id"])
	}

	// Memory itself keeps every item: a plan may name the 300th.
	var all []json.RawMessage
	if json.Unmarshal(s.Memory["lists.expenses"], &all) != nil || len(all) != 500 {
		t.Fatalf("memory holds %d items, want all 500", len(all))
	}
	args, err := bindVars(json.RawMessage(`{"expense_id":{"$var":"lists.expenses.299.id"}}`), s.Memory)
	if err != nil || string(args) != `{"expense_id":300}` {
		t.Fatalf("bound %s (%v), want expense 300", args, err)
	}

	// And the prompt's memory stays the same size however long the list.
	small := PromptFor(State{Turn: s.Turn, Memory: Memory{"lists.expenses": listOf(40)}}, testEnv(t0))
	if a, b := len(small.Memory["lists.expenses"]), len(p.Memory["lists.expenses"]); b > a+10 {
		t.Errorf("the prompt's list is %d bytes for 500 items against %d for 40", b, a)
	}
}
