package orchestrator

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
)

// Working memory: what a conversation keeps of tool results for later
// steps and plans to reference ({"$var": "ids.message_id"}). What each
// tool leaves here is its row's remember (tools.go).

// holds reports whether the stop condition is met by memory.
func (c StopCondition) holds(m Memory) bool {
	v, err := lookupVar(m, c.Var)
	empty := err != nil || isEmpty(v)
	if c.NotEmpty {
		return !empty
	}
	return empty
}

func isEmpty(v json.RawMessage) bool {
	s := strings.TrimSpace(string(v))
	return s == "" || s == "null" || s == "[]" || s == "{}" || s == `""` || s == "0"
}

var errNoVar = errors.New("missing value")

// bindVars replaces every {"$var": "path"} in args with the value at path.
func bindVars(args json.RawMessage, m Memory) (json.RawMessage, error) {
	var tree any
	if err := json.Unmarshal(args, &tree); err != nil {
		return nil, fmt.Errorf("args are not JSON")
	}
	var walk func(v any) (any, error)
	walk = func(v any) (any, error) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$var"].(string); ok && len(x) == 1 {
				raw, err := lookupVar(m, ref)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", ref, err)
				}
				var out any
				_ = json.Unmarshal(raw, &out)
				return out, nil
			}
			// In key order: with two references missing, the one named
			// in the failure is always the same.
			for _, k := range slices.Sorted(maps.Keys(x)) {
				b, err := walk(x[k])
				if err != nil {
					return nil, err
				}
				x[k] = b
			}
		case []any:
			for i, e := range x {
				b, err := walk(e)
				if err != nil {
					return nil, err
				}
				x[i] = b
			}
		}
		return v, nil
	}
	bound, err := walk(tree)
	if err != nil {
		return nil, err
	}
	return json.Marshal(bound)
}

// lookupVar resolves "ids.message_id" or "lists.messages.0.id": the longest
// memory key that prefixes the path, then a walk into its JSON.
func lookupVar(m Memory, path string) (json.RawMessage, error) {
	parts := strings.Split(path, ".")
	for n := len(parts); n > 0; n-- {
		raw, ok := m[strings.Join(parts[:n], ".")]
		if !ok {
			continue
		}
		for _, p := range parts[n:] {
			var next json.RawMessage
			var obj map[string]json.RawMessage
			var arr []json.RawMessage
			switch {
			case json.Unmarshal(raw, &obj) == nil:
				next, ok = obj[p]
			case json.Unmarshal(raw, &arr) == nil:
				i, err := strconv.Atoi(p)
				ok = err == nil && i >= 0 && i < len(arr)
				if ok {
					next = arr[i]
				}
			default:
				ok = false
			}
			if !ok {
				return nil, errNoVar
			}
			raw = next
		}
		return raw, nil
	}
	return nil, errNoVar
}

// remember files a tool's output in working memory.
// memoryValue is one value a tool's result leaves in working memory.
type memoryValue struct {
	key   string
	value json.RawMessage
}

// remember files a tool's output in working memory: what its row keeps,
// then the whole output under the call's SaveAs. Memory over its bound
// drops lists (the largest values and the least reused) in key order,
// never one this call just wrote, so the same memory and result always
// keep the same values.
func remember(m Memory, c OpenCall, data json.RawMessage) Memory {
	if m == nil {
		m = Memory{}
	}
	var values []memoryValue
	if r := rowOf(c.Tool); r.remember != nil {
		values = r.remember(data)
	}
	if c.SaveAs != "" {
		values = append(values, memoryValue{c.SaveAs, data})
	}
	written := map[string]bool{}
	for _, v := range values {
		if len(v.value) > 0 {
			m[v.key] = v.value
			written[v.key] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if len(m) <= maxMemoryValues {
			break
		}
		if strings.HasPrefix(k, "lists.") && !written[k] {
			delete(m, k)
		}
	}
	return m
}

// field is the value of one field of a JSON object, or nil.
func field(data json.RawMessage, name string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return nil
	}
	return obj[name]
}

// first is the first item of a JSON array, or nil.
func first(list json.RawMessage) json.RawMessage {
	var arr []json.RawMessage
	if json.Unmarshal(list, &arr) != nil || len(arr) == 0 {
		return nil
	}
	return arr[0]
}

// rememberMail keeps the messages found, the first of them, and its id for
// fetch_email_attachments.
func rememberMail(data json.RawMessage) []memoryValue {
	msgs := field(data, "messages")
	out := []memoryValue{{"lists.messages", msgs}}
	if top := first(msgs); top != nil {
		out = append(out, memoryValue{"entities.message", top})
		var ms contracts.MailSummary
		if json.Unmarshal(top, &ms) == nil {
			id, _ := json.Marshal(ms.ID)
			out = append(out, memoryValue{"ids.message_id", id})
		}
	}
	return out
}

// rememberExpenseList keeps the expenses listed and the range they cover.
func rememberExpenseList(data json.RawMessage) []memoryValue {
	return []memoryValue{{"lists.expenses", field(data, "expenses")}, {"params.range", field(data, "range")}}
}

// rememberTransactions keeps the transactions listed.
func rememberTransactions(data json.RawMessage) []memoryValue {
	return []memoryValue{{"lists.transactions", field(data, "transactions")}}
}

// rememberImports keeps the imports listed.
func rememberImports(data json.RawMessage) []memoryValue {
	return []memoryValue{{"lists.imports", field(data, "imports")}}
}

// rememberExpense keeps the expense added, changed or deleted, and its id.
func rememberExpense(data json.RawMessage) []memoryValue {
	e := field(data, "expense")
	out := []memoryValue{{"entities.expense", e}}
	var ev contracts.ExpenseView
	if json.Unmarshal(e, &ev) == nil {
		id, _ := json.Marshal(ev.ID)
		out = append(out, memoryValue{"ids.expense_id", id})
	}
	return out
}

// rememberBalance keeps the balance and the range it covers.
func rememberBalance(data json.RawMessage) []memoryValue {
	return []memoryValue{{"entities.balance", data}, {"params.range", field(data, "range")}}
}

// rememberImport keeps the outcome of an import.
func rememberImport(data json.RawMessage) []memoryValue {
	return []memoryValue{{"entities.import", data}}
}
