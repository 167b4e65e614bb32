package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
)

// Past the file retention a document keeps its record but not its file;
// a newer one, or one still waiting to be imported, keeps both.
func TestFileRetentionDropsOldFilesOnly(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		put := func(id, status string, at time.Time) {
			t.Helper()
			if _, _, err := st.PutDocument(ctx, store.Document{TenantID: "acme", ID: id, UserID: "ann", SHA256: id, Filename: id + ".csv",
				Size: 4, Content: []byte("data"), Status: status, CreatedAt: at}); err != nil {
				t.Fatal(err)
			}
		}
		put("old", store.DocumentImported, day)
		put("old-queued", store.DocumentQueued, day)
		put("new", store.DocumentImported, day.AddDate(0, 2, 0))
		n, err := st.ForgetDocumentFiles(ctx, day.AddDate(0, 1, 0), day.AddDate(0, 3, 0))
		if err != nil || n != 1 {
			t.Fatalf("forgot %d files (%v), want 1", n, err)
		}
		for id, want := range map[string]string{"old": "", "old-queued": "data", "new": "data"} {
			d, err := st.GetDocument(ctx, "acme", id)
			if err != nil {
				t.Fatal(err)
			}
			if string(d.Content) != want || d.Filename != id+".csv" || d.Size != 4 {
				t.Errorf("%s: content %q, name %q, size %d; want content %q and the record kept", id, d.Content, d.Filename, d.Size, want)
			}
		}
	})
}
