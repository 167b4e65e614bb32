package app

import (
	"log/slog"

	"github.com/nats-io/nats.go"
)

// connectionLogs log a NATS connection's changes: a lost connection at
// warn (with the error), a reconnect and a final close at info.
func connectionLogs(log *slog.Logger) []nats.Option {
	return []nats.Option{
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats disconnected", "connection", nc.Opts.Name, "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("nats reconnected", "connection", nc.Opts.Name, "server", nc.ConnectedUrlRedacted())
		}),
		nats.ClosedHandler(func(nc *nats.Conn) {
			log.Info("nats connection closed", "connection", nc.Opts.Name)
		}),
	}
}
