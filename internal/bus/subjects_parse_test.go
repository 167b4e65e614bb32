package bus

import "testing"

func TestParseSubjectsRoundTrip(t *testing.T) {
	s, _ := ToolResultSubject("acme", "c-1")
	if tn, c, err := ParseToolResultSubject(s); err != nil || tn != "acme" || c != "c-1" {
		t.Fatalf("ParseToolResultSubject(%q) = %q, %q, %v", s, tn, c, err)
	}
	s, _ = AgentSubject("acme", "olga", "c-1")
	if tn, u, c, err := ParseAgentSubject(s); err != nil || tn != "acme" || u != "olga" || c != "c-1" {
		t.Fatalf("ParseAgentSubject(%q) = %q, %q, %q, %v", s, tn, u, c, err)
	}
	s, _ = NotifySubject("acme", "olga")
	if tn, u, err := ParseNotifySubject(s); err != nil || tn != "acme" || u != "olga" {
		t.Fatalf("ParseNotifySubject(%q) = %q, %q, %v", s, tn, u, err)
	}
	s, _ = NotifierSubject("resume", "acme", "olga")
	if tn, u, err := ParseNotifierSubject("resume", s); err != nil || tn != "acme" || u != "olga" {
		t.Fatalf("ParseNotifierSubject(%q) = %q, %q, %v", s, tn, u, err)
	}
}

func TestParseSubjectsRefuse(t *testing.T) {
	tests := []struct{ give string }{
		{"purser.tool.result.acme"},
		{"purser.tool.result.acme.c.extra"},
		{"purser.tool.result.acme.c$1"},
		{"purser.tool.resultX.acme.c"},
		{"purser.agent.acme.c"},
		{""},
	}
	for _, tt := range tests {
		if _, _, err := ParseToolResultSubject(tt.give); err == nil {
			t.Errorf("ParseToolResultSubject(%q) accepted", tt.give)
		}
	}
	if _, _, _, err := ParseAgentSubject("purser.agent.acme.olga"); err == nil {
		t.Error("ParseAgentSubject accepted two tokens")
	}
	if _, _, err := ParseNotifierSubject("read", "purser.notifier.resume.acme.olga"); err == nil {
		t.Error("ParseNotifierSubject accepted another op's subject")
	}
}
