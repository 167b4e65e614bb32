// Package busauth says who may do what on the bus: one NATS user per
// service, each allowed to publish only the subjects DESIGN.md gives it and
// to reach only its own JetStream consumers, plus an admin for operators.
// The same table configures `purser up`'s embedded server and, rendered as
// nats-server configuration, the cluster in deploy/k8s.
package busauth

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
)

// User names.
const (
	Admin        = "admin"
	Ingress      = "ingress"
	Orchestrator = "orchestrator"
	Toolrunner   = "toolrunner"
	Notifier     = "notifier"
)

// Users are every user, admin first.
var Users = []string{Admin, Ingress, Orchestrator, Toolrunner, Notifier}

// rateLimitBucket is the toolrunner's key-value bucket of rate-limit
// windows (toolrunner.RateLimitBucket; a test keeps the two equal).
const rateLimitBucket = "purser_ratelimit"

// Permissions are the subjects a user may publish to and subscribe to.
// Nil lists mean everything (the admin).
type Permissions struct {
	Publish   []string
	Subscribe []string
	// Responses lets the user answer requests it received, whatever the
	// reply subject (the notifier answers the ingress's inbox requests).
	Responses bool
}

// InboxPrefix is the prefix of service's reply subjects; each service
// subscribes only under its own, so none reads another's replies (which
// carry the messages its consumers pull).
func InboxPrefix(service string) string { return "_INBOX." + service }

// For returns the permissions of user; ok is false for an unknown user.
func For(user string) (p Permissions, ok bool) {
	streams := bus.StreamNames()
	js := []string{"$JS.API.INFO"}
	for _, s := range streams {
		// CREATE with a configuration that differs from the stream's is
		// refused by the server: a service can add a missing stream, never
		// change one (only the admin can, with `purser streams apply`).
		js = append(js, "$JS.API.STREAM.INFO."+s, "$JS.API.STREAM.CREATE."+s)
	}
	inbox := InboxPrefix(user) + ".>"
	switch user {
	case Admin:
		return Permissions{}, true
	case Ingress:
		return Permissions{
			// Uploaded files go to the UPLOADS stream in parts (internal/uploads).
			Publish:   append(js, "purser.turns.*.*", "purser.notifier.*.*.*", "purser.mail.*.*.*", "purser.upload.*.*.*.*"),
			Subscribe: []string{"purser.deliver.*.*", inbox},
		}, true
	case Orchestrator:
		return Permissions{
			Publish:   append(append(js, consumerSubjects(bus.OrchestratorConsumers())...), "purser.agent.*.*.*", "purser.tool.request.*", "purser.deliver.*.*", "purser.dlq."+user),
			Subscribe: []string{inbox},
		}, true
	case Toolrunner:
		defs := []bus.ConsumerDef{bus.ImportConsumer()}
		for _, t := range contracts.Tools() {
			defs = append(defs, bus.ToolConsumer(t.Name))
		}
		kv := "KV_" + rateLimitBucket
		return Permissions{
			Publish: append(append(js, consumerSubjects(defs)...),
				"$JS.API.STREAM.INFO."+kv, "$JS.API.STREAM.CREATE."+kv, "$JS.API.STREAM.UPDATE."+kv,
				"$JS.API.STREAM.MSG.GET."+kv, "$JS.API.DIRECT.GET."+kv, "$JS.API.DIRECT.GET."+kv+".>", "$KV."+rateLimitBucket+".>",
				"purser.tool.result.*.*", "purser.notify.*.*", "purser.import.*.*", "purser.dlq."+user,
				// Uploaded files, read part by part, and what was read of them.
				"$JS.API.DIRECT.GET."+bus.StreamUploads+".purser.upload.>", "purser.upload.*.*.*.r"),
			// The Gmail connect flow: the ingress asks, the toolrunner answers.
			Subscribe: []string{"purser.mail.*.*.*", inbox},
			Responses: true,
		}, true
	case Notifier:
		return Permissions{
			Publish:   append(append(js, consumerSubjects(bus.NotifierConsumers())...), "purser.deliver.*.*", "purser.dlq."+user),
			Subscribe: []string{"purser.notifier.*.*.*", inbox},
			Responses: true,
		}, true
	}
	return Permissions{}, false
}

// consumerSubjects are the JetStream API subjects that create, look up,
// pull from and acknowledge each of defs, and give up the pin of a pinned
// one (a replica that stops hands its lanes over), and nothing else.
func consumerSubjects(defs []bus.ConsumerDef) []string {
	var out []string
	for _, d := range defs {
		sc := d.Stream + "." + d.Name
		out = append(out,
			"$JS.API.CONSUMER.CREATE."+sc, "$JS.API.CONSUMER.CREATE."+sc+".>", "$JS.API.CONSUMER.DURABLE.CREATE."+sc,
			"$JS.API.CONSUMER.INFO."+sc, "$JS.API.CONSUMER.MSG.NEXT."+sc, "$JS.ACK."+sc+".>")
		if d.Pinned {
			out = append(out, "$JS.API.CONSUMER.UNPIN."+sc)
		}
	}
	return out
}

// ServerUsers are the users for an embedded nats-server, with the
// passwords in creds (by user name).
func ServerUsers(creds map[string]string) ([]*server.User, error) {
	var out []*server.User
	for _, name := range Users {
		pw := creds[name]
		if pw == "" {
			return nil, fmt.Errorf("no password for NATS user %s", name)
		}
		p, _ := For(name)
		u := &server.User{Username: name, Password: pw}
		if name != Admin {
			u.Permissions = &server.Permissions{
				Publish:   &server.SubjectPermission{Allow: p.Publish},
				Subscribe: &server.SubjectPermission{Allow: p.Subscribe},
			}
			if p.Responses {
				u.Permissions.Response = &server.ResponsePermission{MaxMsgs: 1, Expires: time.Minute}
			}
		}
		out = append(out, u)
	}
	return out, nil
}

// LoadOrCreate returns the password of every user, kept one file per
// user (mode 0600) in dir and generated on first use.
func LoadOrCreate(dir string) (map[string]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	creds := map[string]string{}
	for _, name := range Users {
		path := filepath.Join(dir, name)
		raw, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			b := make([]byte, 24)
			if _, err := rand.Read(b); err != nil {
				return nil, err
			}
			raw = []byte(base64.RawURLEncoding.EncodeToString(b))
			if err := os.WriteFile(path, raw, 0o600); err != nil {
				return nil, fmt.Errorf("NATS password for %s: %w", name, err)
			}
		} else if err != nil {
			return nil, fmt.Errorf("NATS password for %s: %w", name, err)
		}
		pw := strings.TrimSpace(string(raw))
		if pw == "" {
			return nil, fmt.Errorf("NATS password file %s is empty", path)
		}
		creds[name] = pw
	}
	return creds, nil
}

// ServerConfig renders the users as a nats-server `authorization` block,
// each password read from the environment variable PasswordEnv(user), so
// the configuration holds no secret.
func ServerConfig() string {
	var b strings.Builder
	b.WriteString("# Generated from internal/busauth: go test ./internal/busauth -update\n")
	b.WriteString("# One user per purser service, allowed only its subjects (DESIGN.md).\n")
	b.WriteString("authorization {\n  users = [\n")
	for _, name := range Users {
		p, _ := For(name)
		fmt.Fprintf(&b, "    {\n      user: %q\n      password: $%s\n", name, PasswordEnv(name))
		if name != Admin {
			fmt.Fprintf(&b, "      permissions: {\n        publish: { allow: %s }\n        subscribe: { allow: %s }\n", list(p.Publish), list(p.Subscribe))
			if p.Responses {
				b.WriteString("        allow_responses: { max: 1, expires: \"1m\" }\n")
			}
			b.WriteString("      }\n")
		}
		b.WriteString("    }\n")
	}
	b.WriteString("  ]\n}\n")
	return b.String()
}

// PasswordEnv is the environment variable that holds user's password in
// the nats-server container of deploy/k8s.
func PasswordEnv(user string) string { return "PURSER_NATS_" + strings.ToUpper(user) + "_PASSWORD" }

func list(subjects []string) string {
	q := make([]string, len(subjects))
	for i, s := range slices.Clone(subjects) {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[\n          " + strings.Join(q, ",\n          ") + "\n        ]"
}
