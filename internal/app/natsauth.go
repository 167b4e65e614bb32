package app

import (
	"fmt"
	"path/filepath"

	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/busauth"
	"github.com/purser-ai/purser/internal/config"
)

// natsAuthDir is where `purser up` keeps its NATS users' passwords, one
// file per user, inside the data folder.
func natsAuthDir(cfg config.Config) string { return filepath.Join(cfg.DataDir, "nats-auth") }

// credentialOptions are the NATS options for the credentials configured
// in NATS_USER/NATS_PASSWORD, NATS_CREDS or NATS_NKEY (none: anonymous).
func credentialOptions(cfg config.Config) ([]nats.Option, error) {
	switch {
	case cfg.NATSCreds != "":
		return []nats.Option{nats.UserCredentials(cfg.NATSCreds)}, nil
	case cfg.NATSNKey != "":
		o, err := nats.NkeyOptionFromSeed(cfg.NATSNKey)
		if err != nil {
			return nil, fmt.Errorf("NATS_NKEY: %w", err)
		}
		return []nats.Option{o}, nil
	case cfg.NATSUser != "":
		return []nats.Option{nats.UserInfo(cfg.NATSUser, cfg.NATSPassword)}, nil
	}
	return nil, nil
}

// serviceOptions are the connection options of service: its credentials
// and its own inbox prefix, the only replies its NATS user may read.
func serviceOptions(cfg config.Config, service string) ([]nats.Option, error) {
	opts, err := credentialOptions(cfg)
	if err != nil {
		return nil, err
	}
	return append(opts, nats.CustomInboxPrefix(busauth.InboxPrefix(service))), nil
}
