package llm

import (
	"bytes"
	"encoding/json"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/purser-ai/purser/services/orchestrator"
)

// toolMakePlan is the tools protocol's built-in way to plan: the model
// calls it, alone, with the steps; nothing of it runs as a tool. It is not
// strict, because each step's args follow that step's tool's own schema,
// which the orchestrator checks step by step.
const toolMakePlan = "make_plan"

var makePlanSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "steps": {"type": "array", "minItems": 1, "maxItems": 5, "description": "The tool calls to run in order.",
      "items": {"type": "object", "properties": {
        "tool": {"type": "string", "description": "A tool name from the catalog."},
        "args": {"type": "object", "description": "The tool's arguments; a value may be {\"$var\": \"<memory key>\"} to use working memory or an earlier step's save_as."},
        "save_as": {"type": "string", "description": "Where the step's result goes in working memory, e.g. lists.messages."}
      }, "required": ["tool", "args"], "additionalProperties": false}},
    "stop_when": {"type": "object", "description": "End the plan early when the value at var is empty (or, with not_empty, when it has something).",
      "properties": {"var": {"type": "string"}, "empty": {"type": "boolean"}, "not_empty": {"type": "boolean"}},
      "required": ["var"], "additionalProperties": false}
  },
  "required": ["steps"],
  "additionalProperties": false
}`)

func makePlanTool() openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: toolMakePlan,
		Description: "Plan several steps that depend on each other (at most 5), e.g. find a statement and then import it. " +
			"Call it alone; changes in a plan still wait for the person's yes.",
		Parameters: rawSchema(makePlanSchema)}}
}

// planFrom reads make_plan's arguments into a plan decision; its errors
// name what is wrong without quoting the arguments.
func planFrom(args []byte) (orchestrator.Decision, error) {
	var a struct {
		Steps    []orchestrator.PlanStep     `json:"steps"`
		StopWhen *orchestrator.StopCondition `json:"stop_when"`
	}
	if err := strictDecode(args, &a); err != nil {
		return orchestrator.Decision{}, fmt.Errorf("the arguments of make_plan must be {\"steps\":[{\"tool\",\"args\",\"save_as\"?}],\"stop_when\"?} and nothing else")
	}
	if len(a.Steps) == 0 {
		return orchestrator.Decision{}, fmt.Errorf("make_plan needs steps")
	}
	for i, st := range a.Steps {
		if st.Tool == "" || !isObject(bytes.TrimSpace(st.Args)) {
			return orchestrator.Decision{}, fmt.Errorf("step %d of make_plan needs a tool and args, a JSON object", i+1)
		}
	}
	return orchestrator.Decision{Kind: orchestrator.DecisionPlan, Plan: &orchestrator.Plan{Steps: a.Steps, StopWhen: a.StopWhen}}, nil
}
