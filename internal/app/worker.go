package app

import (
	"context"
	"io"

	"golang.org/x/oauth2"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/services/toolrunner/mailbox"
	"github.com/purser-ai/purser/services/toolrunner/statements"
)

// ImportWorkerCommand is the purser subcommand the toolrunner starts to
// parse one statement in a sandboxed child process.
const ImportWorkerCommand = "import-worker"

// ServeImportWorker is `purser import-worker`: it confines and limits this
// process, parses the one statement read from r and writes the reply to w.
func ServeImportWorker(r io.Reader, w io.Writer) error {
	return statements.ServeWorker(r, w)
}

// PutMailToken seals tok with key and stores it in st as the Gmail token
// of tenant's user, replacing any stored before. It does not check that
// Google accepts the token.
func PutMailToken(ctx context.Context, st *store.Store, key []byte, tenant, user string, tok *oauth2.Token) error {
	return mailbox.StoredTokens{Store: st, Key: key}.Put(ctx, tenant, user, tok)
}
