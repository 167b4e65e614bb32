package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/purser-ai/purser/services/orchestrator"
)

// decisionSchema is the JSON schema of a decision, for servers that take
// response_format json_schema. Not strict: tool args vary by tool and are
// validated by the orchestrator against each tool's own schema.
var decisionSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "kind": {"type": "string", "enum": ["answer", "clarify", "tool_calls", "plan"]},
    "content": {"type": "string"},
    "question": {"type": "string"},
    "calls": {"type": "array", "items": {"type": "object", "properties": {"tool": {"type": "string"}, "args": {"type": "object"}}, "required": ["tool", "args"]}},
    "plan": {"type": "object", "properties": {
      "steps": {"type": "array", "items": {"type": "object", "properties": {"tool": {"type": "string"}, "args": {"type": "object"}, "save_as": {"type": "string"}}, "required": ["tool", "args"]}},
      "stop_when": {"type": "object", "properties": {"var": {"type": "string"}, "empty": {"type": "boolean"}, "not_empty": {"type": "boolean"}}, "required": ["var"]}
    }, "required": ["steps"]}
  },
  "required": ["kind"],
  "additionalProperties": false
}`)

type rawSchema json.RawMessage

func (r rawSchema) MarshalJSON() ([]byte, error) { return r, nil }

// decideJSON asks for the strict JSON decision; one retry when the reply
// does not parse or has the wrong shape, then ErrInvalidOutput.
func (m *Model) decideJSON(ctx context.Context, p orchestrator.Prompt) (orchestrator.Decision, error) {
	msgs := jsonMessages(p)
	useSchema := true
	for attempt := 0; ; attempt++ {
		reply, err := m.completeJSON(ctx, msgs, &useSchema)
		if err != nil {
			return orchestrator.Decision{}, err
		}
		d, perr := parseDecision(reply)
		if perr == nil {
			if d.Kind == orchestrator.DecisionAnswer && d.Content != "" {
				orchestrator.TokenSinkFrom(ctx)(d.Content)
			}
			return d, nil
		}
		if attempt == 1 {
			return orchestrator.Decision{}, invalid("the reply was not a decision twice: %v", perr)
		}
		msgs = append(msgs,
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: truncate(reply, 2000)},
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem,
				Content: fmt.Sprintf("That reply was not valid (%v). Reply again with exactly one JSON object as described.", perr)})
	}
}

// completeJSON makes one (retried) call; a server that rejects the
// json_schema response format with 400 is asked again with json_object.
func (m *Model) completeJSON(ctx context.Context, msgs []openai.ChatCompletionMessage, useSchema *bool) (string, error) {
	for {
		req := openai.ChatCompletionRequest{Model: m.cfg.Model, Messages: msgs}
		if *useSchema {
			req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
				JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "decision", Schema: rawSchema(decisionSchema)}}
		} else {
			req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
		}
		var resp openai.ChatCompletionResponse
		err := m.withRetry(ctx, func(ctx context.Context) error {
			r, err := m.client.CreateChatCompletion(ctx, req)
			resp = r
			return err
		})
		if err != nil && *useSchema && statusOf(err) == 400 {
			*useSchema = false
			continue
		}
		if err != nil {
			return "", err
		}
		m.metrics.usage(tenantOf(ctx), resp.Usage.PromptTokens, resp.Usage.CompletionTokens)
		if len(resp.Choices) == 0 {
			return "", invalid("the reply had no choices")
		}
		c := resp.Choices[0]
		switch {
		case c.Message.Refusal != "":
			return "", invalid("the model refused: %s", truncate(c.Message.Refusal, 200))
		case c.FinishReason == openai.FinishReasonLength:
			return "", invalid("the reply was cut off at the length limit")
		}
		return c.Message.Content, nil
	}
}

// parseDecision decodes a reply strictly: one object, known fields only,
// and the fields its kind needs.
func parseDecision(reply string) (orchestrator.Decision, error) {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimSpace([]byte(reply))))
	dec.DisallowUnknownFields()
	var d orchestrator.Decision
	if err := dec.Decode(&d); err != nil {
		return orchestrator.Decision{}, fmt.Errorf("not a JSON decision: %v", err)
	}
	if dec.More() {
		return orchestrator.Decision{}, fmt.Errorf("text after the JSON object")
	}
	switch d.Kind {
	case orchestrator.DecisionAnswer:
		if d.Content == "" {
			return d, fmt.Errorf("an answer needs content")
		}
	case orchestrator.DecisionClarify:
		if d.Question == "" {
			return d, fmt.Errorf("clarify needs a question")
		}
	case orchestrator.DecisionToolCalls:
		if len(d.Calls) == 0 {
			return d, fmt.Errorf("tool_calls needs calls")
		}
	case orchestrator.DecisionPlan:
		if d.Plan == nil || len(d.Plan.Steps) == 0 {
			return d, fmt.Errorf("a plan needs steps")
		}
	default:
		return d, fmt.Errorf("kind must be answer, clarify, tool_calls or plan")
	}
	return d, nil
}
