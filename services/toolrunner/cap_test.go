package toolrunner

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCapJSON(t *testing.T) {
	rows := make([]string, 1000)
	for i := range rows {
		rows[i] = strings.Repeat("x", 50)
	}
	data, _ := json.Marshal(map[string]any{"rows": rows, "count": 1000})
	got, truncated := capJSON(data, 4096)
	if !truncated || len(got) > 4096 {
		t.Fatalf("capped to %d bytes, truncated %v", len(got), truncated)
	}
	var out struct {
		Rows  []string `json:"rows"`
		Count int      `json:"count"`
	}
	if err := json.Unmarshal(got, &out); err != nil || len(out.Rows) == 0 || out.Count != 1000 {
		t.Fatalf("capped data is not the same shape: %v %d rows", err, len(out.Rows))
	}
	small, truncated := capJSON([]byte(`{"a":1}`), 4096)
	if truncated || string(small) != `{"a":1}` {
		t.Fatal("small data was changed")
	}
}

func TestRedact(t *testing.T) {
	got := string(redact(map[string]string{"query": "visa", "access_token": "ya29.secret", "api_key": "sk-123"}))
	if strings.Contains(got, "ya29") || strings.Contains(got, "sk-123") || !strings.Contains(got, "visa") {
		t.Fatalf("redact = %s", got)
	}
}
