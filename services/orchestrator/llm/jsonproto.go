package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/purser-ai/purser/services/orchestrator"
)

// The json protocol speaks the seeds' decision contract, one object per
// reply:
//
//	{"type":"clarify","question":"…"}
//	{"type":"tool_call","tool":"…","args":{…},"confirmationSuggested":true,"confirmationMessage":"…"}
//	{"type":"answer","content":"…"}
//
// and one type added by purser:
//
//	{"type":"plan","steps":[{"tool":"…","args":{…},"save_as":"…"}],"stop_when":{"var":"…","empty":true}}
//
// confirmationSuggested and confirmationMessage are accepted and not used:
// the server, not the model, decides which tools need a yes and words the
// proposal itself.

// decisionSchema is the JSON schema of a decision, for servers that take
// response_format json_schema. Not strict: tool args vary by tool and are
// validated by the orchestrator against each tool's own schema.
var decisionSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "type": {"type": "string", "enum": ["clarify", "tool_call", "answer", "plan"]},
    "question": {"type": "string"},
    "tool": {"type": "string"},
    "args": {"type": "object"},
    "confirmationSuggested": {"type": "boolean"},
    "confirmationMessage": {"type": "string"},
    "content": {"type": "string"},
    "steps": {"type": "array", "maxItems": 5, "items": {"type": "object", "properties": {"tool": {"type": "string"}, "args": {"type": "object"}, "save_as": {"type": "string"}}, "required": ["tool", "args"], "additionalProperties": false}},
    "stop_when": {"type": "object", "properties": {"var": {"type": "string"}, "empty": {"type": "boolean"}, "not_empty": {"type": "boolean"}}, "required": ["var"], "additionalProperties": false}
  },
  "required": ["type"],
  "additionalProperties": false
}`)

// fieldsOf lists the fields each decision type may carry besides "type".
var fieldsOf = map[string][]string{
	"clarify":   {"question"},
	"tool_call": {"tool", "args", "confirmationSuggested", "confirmationMessage"},
	"answer":    {"content"},
	"plan":      {"steps", "stop_when"},
}

type rawSchema json.RawMessage

func (r rawSchema) MarshalJSON() ([]byte, error) { return r, nil }

// decideJSON asks once for a decision. A reply that is not one comes back
// as ErrInvalidOutput with the reason: the orchestrator's single corrective
// retry is the only one, so an invalid reply costs exactly one more call.
func (m *Model) decideJSON(ctx context.Context, p orchestrator.Prompt) (orchestrator.Decision, error) {
	reply, err := m.completeJSON(ctx, jsonMessages(p))
	if err != nil {
		return orchestrator.Decision{}, err
	}
	d, err := parseDecision(reply)
	if err != nil {
		return orchestrator.Decision{}, invalid("%v", err)
	}
	if d.Kind == orchestrator.DecisionAnswer {
		orchestrator.TokenSinkFrom(ctx)(d.Content)
	}
	return d, nil
}

// completeJSON makes one call (429 and 5xx retried by withRetry). A server
// that refuses the json_schema response format with 400 is asked again with
// json_object, and the model remembers that for its later calls.
func (m *Model) completeJSON(ctx context.Context, msgs []openai.ChatCompletionMessage) (string, error) {
	for {
		useSchema := !m.noSchema.Load()
		req := openai.ChatCompletionRequest{Model: m.cfg.Model, Messages: msgs}
		if useSchema {
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
		if err != nil && useSchema && statusOf(err) == 400 {
			m.log.Info("model server refused response_format json_schema; asking with json_object", "model", m.cfg.Model)
			m.noSchema.Store(true)
			continue
		}
		if err != nil {
			return "", err
		}
		m.usage(ctx, resp.Usage.PromptTokens, resp.Usage.CompletionTokens)
		if len(resp.Choices) == 0 {
			return "", invalid("the reply had no choices")
		}
		c := resp.Choices[0]
		switch {
		case c.Message.Refusal != "":
			return "", invalid("the model refused")
		case c.FinishReason == openai.FinishReasonLength:
			return "", invalid("the reply was cut off at the length limit")
		case c.FinishReason == openai.FinishReasonContentFilter:
			return "", invalid("the reply was withheld by a content filter")
		}
		return c.Message.Content, nil
	}
}

// parseDecision decodes a reply strictly: one JSON object whose "type" is
// clarify, tool_call, answer or plan, carrying that type's fields and no
// others. Its errors name what is wrong without quoting the reply.
//
// Two spellings whose meaning is exact are taken as they are meant: the
// object inside one markdown code fence, and args written as a string that
// holds a JSON object.
func parseDecision(reply string) (orchestrator.Decision, error) {
	data := unfence(bytes.TrimSpace([]byte(reply)))
	var fields map[string]json.RawMessage
	if err := strictDecode(data, &fields); err != nil || fields == nil {
		return orchestrator.Decision{}, fmt.Errorf("the reply must be exactly one JSON object and nothing else")
	}
	var typ string
	if err := json.Unmarshal(fields["type"], &typ); err != nil || fieldsOf[typ] == nil {
		return orchestrator.Decision{}, fmt.Errorf(`"type" must be one of "clarify", "tool_call", "answer" or "plan"`)
	}
	for name := range fields {
		if name != "type" && !slices.Contains(fieldsOf[typ], name) {
			return orchestrator.Decision{}, fmt.Errorf("%s may only have the fields %s", article(typ), strings.Join(fieldsOf[typ], ", "))
		}
	}
	var w struct {
		Type                  string                      `json:"type"`
		Question              string                      `json:"question"`
		Tool                  string                      `json:"tool"`
		Args                  json.RawMessage             `json:"args"`
		ConfirmationSuggested *bool                       `json:"confirmationSuggested"`
		ConfirmationMessage   *string                     `json:"confirmationMessage"`
		Content               string                      `json:"content"`
		Steps                 []orchestrator.PlanStep     `json:"steps"`
		StopWhen              *orchestrator.StopCondition `json:"stop_when"`
	}
	if err := strictDecode(data, &w); err != nil {
		return orchestrator.Decision{}, fmt.Errorf("%s has a field of the wrong type or an unknown field inside it", article(typ))
	}
	switch typ {
	case "clarify":
		if strings.TrimSpace(w.Question) == "" {
			return orchestrator.Decision{}, fmt.Errorf("a clarify needs a question")
		}
		return orchestrator.Decision{Kind: orchestrator.DecisionClarify, Question: w.Question}, nil
	case "answer":
		if strings.TrimSpace(w.Content) == "" {
			return orchestrator.Decision{}, fmt.Errorf("an answer needs content")
		}
		return orchestrator.Decision{Kind: orchestrator.DecisionAnswer, Content: w.Content}, nil
	case "tool_call":
		if w.Tool == "" {
			return orchestrator.Decision{}, fmt.Errorf("a tool_call needs a tool")
		}
		args := unquoteObject(w.Args)
		if !isObject(args) {
			return orchestrator.Decision{}, fmt.Errorf("a tool_call needs args, a JSON object")
		}
		w.Args = args
		return orchestrator.Decision{Kind: orchestrator.DecisionToolCalls, Calls: []orchestrator.Call{{Tool: w.Tool, Args: w.Args}}}, nil
	}
	if len(w.Steps) == 0 {
		return orchestrator.Decision{}, fmt.Errorf("a plan needs steps")
	}
	for i := range w.Steps {
		st := &w.Steps[i]
		st.Args = unquoteObject(st.Args)
		if st.Tool == "" || !isObject(st.Args) {
			return orchestrator.Decision{}, fmt.Errorf("step %d of the plan needs a tool and args, a JSON object", i+1)
		}
	}
	return orchestrator.Decision{Kind: orchestrator.DecisionPlan, Plan: &orchestrator.Plan{Steps: w.Steps, StopWhen: w.StopWhen}}, nil
}

// strictDecode decodes exactly one JSON value, unknown fields refused.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func article(typ string) string {
	if typ == "answer" {
		return "an answer"
	}
	return "a " + typ
}

// unfence returns the inside of a reply that is exactly one markdown code
// fence (```json … ```), or the reply as it is.
func unfence(b []byte) []byte {
	if !bytes.HasPrefix(b, []byte("```")) || !bytes.HasSuffix(b, []byte("```")) || len(b) < 6 {
		return b
	}
	inner := b[3 : len(b)-3]
	if nl := bytes.IndexByte(inner, '\n'); nl >= 0 && !bytes.ContainsAny(inner[:nl], "{[") {
		inner = inner[nl+1:] // the fence's language tag
	}
	if bytes.Contains(inner, []byte("```")) {
		return b
	}
	return bytes.TrimSpace(inner)
}

// unquoteObject turns args written as a JSON string holding an object
// ("{\"range\":\"today\"}") into the object; anything else is returned as is.
func unquoteObject(raw json.RawMessage) json.RawMessage {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return raw
	}
	inner := bytes.TrimSpace([]byte(s))
	if !isObject(inner) || !json.Valid(inner) {
		return raw
	}
	return inner
}
