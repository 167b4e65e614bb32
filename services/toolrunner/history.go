package toolrunner

import (
	"context"
	"encoding/json"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/pkg/contracts"
)

// historyScan bounds how many of the conversation's frames one search
// looks through.
const historyScan = 500

// getChatHistory pages back through the caller's own conversation: what
// they wrote and what the assistant answered or asked, oldest first,
// optionally only messages holding the query's words.
func getChatHistory(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.GetChatHistoryArgs)
	limit := 10
	if a.Limit != nil {
		limit = *a.Limit
	}
	var before int64
	if a.Before != nil {
		before = *a.Before
	}
	var terms []string
	if a.Query != nil {
		// Words match as a search of messages matches them: folded,
		// each the start of a word, request words dropped.
		terms = store.SearchTermsOf(*a.Query)
	}
	frames, err := tx.ConversationFrames(ctx, c.Caller.TenantID, c.Caller.UserID, c.Caller.ConversationID, before, historyScan)
	if err != nil {
		return Output{}, err
	}
	out := historyMatching(frames, terms, true, limit)
	if len(out.Messages) == 0 && len(terms) > 1 {
		// As a search does: no message holds every word, so any.
		out = historyMatching(frames, terms, false, limit)
	}
	if !out.More && len(frames) == historyScan {
		out.More = true
	}
	total := int64(len(out.Messages))
	return Output{Data: out, Total: &total}, nil
}

// historyMatching is the newest limit messages of frames holding terms
// (every one, or any), oldest first.
func historyMatching(frames []store.Frame, terms []string, all bool, limit int) contracts.ChatHistory {
	out := contracts.ChatHistory{Messages: []contracts.ChatMessage{}}
	// Newest first, so that the limit keeps the latest matches.
	for i := len(frames) - 1; i >= 0; i-- {
		var f contracts.ServerFrame
		if json.Unmarshal(frames[i].Payload, &f) != nil {
			continue
		}
		m, ok := chatMessage(f)
		if !ok {
			continue
		}
		if who, text, _ := store.FrameMessage(frames[i].Payload); len(terms) > 0 && !store.TextMatches(who+": "+text, terms, all) {
			continue // matched as the search index holds it: "You: …"
		}
		if len(out.Messages) == limit {
			out.More = true
			break
		}
		m.Position = frames[i].Seq
		out.Messages = append(out.Messages, m)
	}
	for i, j := 0, len(out.Messages)-1; i < j; i, j = i+1, j-1 {
		out.Messages[i], out.Messages[j] = out.Messages[j], out.Messages[i]
	}
	return out
}

// chatMessage is the message a frame carries, if it is one a person reads
// as the conversation: theirs, or the assistant's answer or question.
func chatMessage(f contracts.ServerFrame) (contracts.ChatMessage, bool) {
	switch {
	case f.UserMessage != nil:
		return contracts.ChatMessage{Role: "user", Text: f.UserMessage.Text, At: f.At}, true
	case f.Answer != nil:
		return contracts.ChatMessage{Role: "assistant", Text: f.Answer.Content, At: f.At}, true
	case f.Clarify != nil:
		return contracts.ChatMessage{Role: "assistant", Text: f.Clarify.Question, At: f.At}, true
	}
	return contracts.ChatMessage{}, false
}
