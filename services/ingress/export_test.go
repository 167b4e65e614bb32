package ingress

import "github.com/purser-ai/purser/pkg/contracts"

// AfterPublish has f run on each socket turn between its publish and its
// ack, with a way to deliver a frame to the user's sockets at that moment.
func AfterPublish(f func(t contracts.UserTurn, deliver func(frame []byte))) func(*Config) {
	return func(cfg *Config) { cfg.afterPublish = f }
}
