package main

import "testing"

func TestChatFindsTheLocalServer(t *testing.T) {
	for give, want := range map[string]string{
		"127.0.0.1:8080": "ws://127.0.0.1:8080/v1/ws",
		"127.0.0.1:9000": "ws://127.0.0.1:9000/v1/ws",
		"0.0.0.0:8181":   "ws://127.0.0.1:8181/v1/ws",
		":7000":          "ws://127.0.0.1:7000/v1/ws",
		"[::1]:8080":     "ws://[::1]:8080/v1/ws",
	} {
		if got := localWebsocketURL(give); got != want {
			t.Errorf("localWebsocketURL(%q) = %q, want %q", give, got, want)
		}
	}
}
