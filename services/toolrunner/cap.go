package toolrunner

import "encoding/json"

// capJSON keeps encoded data under max bytes by shortening its longest
// list (a tool's rows), and says whether it had to. Data without a list
// that still does not fit is replaced by an empty object.
func capJSON(data []byte, max int) ([]byte, bool) {
	if max <= 0 || len(data) <= max {
		return data, false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return []byte(`{}`), true
	}
	for len(data) > max {
		key, list := "", []json.RawMessage(nil)
		for k, v := range obj {
			var l []json.RawMessage
			if json.Unmarshal(v, &l) == nil && len(l) > len(list) {
				key, list = k, l
			}
		}
		if len(list) == 0 {
			return []byte(`{}`), true
		}
		obj[key], _ = json.Marshal(list[:len(list)/2])
		data, _ = json.Marshal(obj)
	}
	return data, true
}
