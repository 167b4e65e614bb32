// Package natsembed runs nats-server with JetStream inside the purser
// process, for `purser up` and for tests. Services in the same process
// connect in-process, without TCP; the TCP listener is for the NATS CLI.
package natsembed

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Options say where the server keeps JetStream data and where it listens.
type Options struct {
	StoreDir   string
	Host       string // default 127.0.0.1
	Port       int    // -1 picks a free port; 0 means no TCP listener
	ServerName string
	// Users, when set, are the only clients the server accepts: every
	// connection must name one (anonymous clients are refused).
	Users []*server.User
	// Nkeys are users that log in with an nkey instead of a password.
	Nkeys []*server.NkeyUser
	// MaxStore caps JetStream's file storage; 0 is nats-server's default
	// (three quarters of the free disk), against which streams' size
	// bounds are reserved when they are created.
	MaxStore int64
}

// Start runs the server and waits until it accepts connections. It creates
// StoreDir when missing and makes it private (0700) either way, and
// refuses a StoreDir that others can read and whose mode it cannot change.
// The caller shuts it down with Shutdown and WaitForShutdown.
func Start(opts Options) (*server.Server, error) {
	if opts.StoreDir == "" {
		return nil, errors.New("natsembed: StoreDir is required (the default would be the system temp dir)")
	}
	// nats-server would create it 0750 and keep whatever mode it has;
	// the streams hold every tenant's messages.
	if err := os.MkdirAll(opts.StoreDir, 0o700); err != nil {
		return nil, fmt.Errorf("natsembed: store dir: %w", err)
	}
	if err := os.Chmod(opts.StoreDir, 0o700); err != nil {
		if fi, serr := os.Stat(opts.StoreDir); serr != nil || fi.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("natsembed: store dir is open to others and cannot be made private: %w", err)
		}
	}
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
	}
	so := &server.Options{
		ServerName: opts.ServerName,
		Host:       opts.Host,
		Port:       opts.Port,
		JetStream:  true,
		StoreDir:   opts.StoreDir,
		NoSigs:     true,
		NoLog:      true,
		MaxPayload: 8 << 20,
		Users:      opts.Users,
		Nkeys:      opts.Nkeys,

		JetStreamMaxStore: opts.MaxStore,
	}
	if opts.Port == 0 {
		so.DontListen = true
	}
	s, err := server.NewServer(so)
	if err != nil {
		return nil, fmt.Errorf("nats-server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("nats-server on %s:%d did not become ready (is the port taken?)", opts.Host, opts.Port)
	}
	return s, nil
}

// Connect opens an in-process client connection to s; opts add to the
// defaults (credentials, an inbox prefix).
func Connect(s *server.Server, name string, opts ...nats.Option) (*nats.Conn, error) {
	return nats.Connect("", append([]nats.Option{nats.InProcessServer(s), nats.Name(name), nats.MaxReconnects(-1)}, opts...)...)
}
