package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// partialCall gathers one tool call's deltas, which may split the name and
// the arguments anywhere.
type partialCall struct {
	id   string
	name strings.Builder
	args strings.Builder
}

// decideTools streams one reply of the tools protocol. Tokens of an answer
// go to the context's token sink as they arrive. Retries happen only before
// the first token has been forwarded, so a person never sees text twice.
func (m *Model) decideTools(ctx context.Context, p orchestrator.Prompt) (orchestrator.Decision, error) {
	// The tools go into the body already encoded (catalog.go); the
	// request itself carries none.
	tools, err := encodeTools(toolDefs(p))
	if err != nil {
		return orchestrator.Decision{}, err
	}
	ctx = withEncodedTools(ctx, tools)
	req := openai.ChatCompletionRequest{Model: m.cfg.Model, Messages: toolMessages(p), Stream: true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true}}
	sink := orchestrator.TokenSinkFrom(ctx)
	var stream *openai.ChatCompletionStream
	err = m.withRetry(ctx, func(ctx context.Context) error {
		s, err := m.client.CreateChatCompletionStream(ctx, req)
		stream = s
		return err
	})
	if err != nil {
		return orchestrator.Decision{}, err
	}
	defer stream.Close()

	var content strings.Builder
	calls := map[int]*partialCall{}
	finish := openai.FinishReason("")
	refusal := ""
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return orchestrator.Decision{}, ctx.Err()
			}
			return orchestrator.Decision{}, invalid("the reply stream broke")
		}
		if chunk.Usage != nil {
			m.usage(ctx, chunk.Usage.PromptTokens, chunk.Usage.CompletionTokens)
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue
			}
			if c.Delta.Content != "" {
				content.WriteString(c.Delta.Content)
				sink(c.Delta.Content)
			}
			refusal += c.Delta.Refusal
			for i, tc := range c.Delta.ToolCalls {
				idx := i
				if tc.Index != nil {
					idx = *tc.Index
				}
				pc := calls[idx]
				if pc == nil {
					pc = &partialCall{}
					calls[idx] = pc
				}
				if tc.ID != "" {
					pc.id = tc.ID
				}
				pc.name.WriteString(tc.Function.Name)
				pc.args.WriteString(tc.Function.Arguments)
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	switch {
	case refusal != "":
		return orchestrator.Decision{}, invalid("the model refused")
	case finish == "":
		return orchestrator.Decision{}, invalid("the reply stream ended before the reply did")
	case finish == openai.FinishReasonLength:
		return orchestrator.Decision{}, invalid("the reply was cut off at the length limit")
	case finish == openai.FinishReasonContentFilter:
		return orchestrator.Decision{}, invalid("the reply was withheld by a content filter")
	}
	if len(calls) == 0 {
		return orchestrator.Decision{Kind: orchestrator.DecisionAnswer, Content: content.String()}, nil
	}
	idx := make([]int, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var out []orchestrator.Call
	for _, i := range idx {
		pc := calls[i]
		name := strings.TrimSpace(pc.name.String())
		args := bytes.TrimSpace([]byte(pc.args.String()))
		if len(args) == 0 {
			args = []byte("{}")
		}
		if !json.Valid(args) {
			return orchestrator.Decision{}, invalid("the arguments of %s are not JSON", name)
		}
		if name == toolMakePlan {
			if len(calls) != 1 {
				return orchestrator.Decision{}, invalid("make_plan must be the only call")
			}
			d, err := planFrom(args)
			if err != nil {
				return orchestrator.Decision{}, invalid("%v", err)
			}
			return d, nil
		}
		if name == contracts.ToolAskClarification {
			var a struct {
				Question string `json:"question"`
			}
			_ = json.Unmarshal(args, &a)
			return orchestrator.Decision{Kind: orchestrator.DecisionClarify, Question: a.Question}, nil
		}
		// Unknown tools and invalid args go to the orchestrator, which
		// validates every call and gives the corrective retry.
		out = append(out, orchestrator.Call{Tool: name, Args: json.RawMessage(args)})
	}
	return orchestrator.Decision{Kind: orchestrator.DecisionToolCalls, Calls: out}, nil
}
