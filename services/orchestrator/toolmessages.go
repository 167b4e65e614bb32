package orchestrator

import (
	"github.com/purser-ai/purser/pkg/contracts"
)

// This file holds the bus messages of a tool call: the ToolRequest and
// the tool_start progress a call starts with, the progress that reports
// how it ended, and the ToolResult it comes back as. What a tool means is
// its row in tools.go.

// ToolResult is a tool's result as it comes off the bus.
type ToolResult = contracts.ToolResult

// decodeToolResult decodes and validates a ToolResult payload.
func decodeToolResult(payload []byte) (ToolResult, error) {
	var r ToolResult
	err := contracts.Decode(payload, &r)
	return r, err
}

// maxProgressSummary bounds the sentence a tool's progress carries, in
// characters.
const maxProgressSummary = 4000

// startOutputs are what starting call c of the current turn emits: a
// tool_start progress for the client and the ToolRequest for the
// toolrunner, whose id is the call's.
func startOutputs(s State, env Env, c OpenCall) []Output {
	t := s.Turn
	req := contracts.ToolRequest{
		CallID: c.CallID, TurnID: t.TurnID, TenantID: env.TenantID, UserID: s.UserID, Roles: s.Roles,
		ConversationID: env.ConversationID, Tool: c.Tool, Args: c.Args, ProposalID: c.ProposalID,
		Timezone: s.Timezone, Deadline: t.StartedAt.Add(TurnBudget),
	}
	return []Output{
		progress(c, "started", ""),
		{ID: c.CallID, To: ToTool, Type: contracts.TypeToolRequest, Tool: c.Tool, Payload: req},
	}
}

// progress is call c's progress event with status (started, succeeded or
// failed) and, once it ended, the server's sentence for how. It goes live
// to the user's sockets, like an answer's tokens (liveProgress), and a
// resume does not replay it: what a call changed is in the ledger and the
// audit log.
func progress(c OpenCall, status, summary string) Output {
	id := deriveID("e", c.CallID, status)
	if status == "started" {
		id = deriveID("e", c.CallID, "start")
	}
	if r := []rune(summary); len(r) > maxProgressSummary {
		summary = string(r[:maxProgressSummary])
	}
	return Output{ID: id, To: ToSocket, Type: contracts.TypeToolProgress,
		Payload: contracts.ToolProgress{CallID: c.CallID, Tool: c.Tool, Status: status, Summary: summary}}
}

// correlationOf is the turn a payload belongs to, or "" for one that names
// none (tool progress).
func correlationOf(payload any) string {
	switch v := payload.(type) {
	case contracts.ToolRequest:
		return v.TurnID
	case contracts.Clarify:
		return v.TurnID
	case contracts.Proposal:
		return v.TurnID
	case contracts.Answer:
		return v.TurnID
	case contracts.TurnError:
		return v.TurnID
	}
	return ""
}
