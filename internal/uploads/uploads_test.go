package uploads_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/natstest"
	"github.com/purser-ai/purser/internal/uploads"
)

func store(t *testing.T) *uploads.Store {
	t.Helper()
	_, nc := natstest.Start(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bus.EnsureStreams(context.Background(), js, bus.DefaultStreamTunables()); err != nil {
		t.Fatal(err)
	}
	return uploads.New(js)
}

// A file of several parts comes back whole and checked, stored twice
// changes nothing, and only its owner's lookup finds it.
func TestAFileComesBackWholeForItsOwnerOnly(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789abcdef"), uploads.PartSize*5/2/16+7) // 2.5 parts and a bit
	for range 2 {
		if err := s.Put(ctx, "t1", "ann", "doc-1", uploads.Manifest{Filename: "scan.pdf", MediaType: "application/pdf"}, data); err != nil {
			t.Fatal(err)
		}
	}
	m, got, err := s.Get(ctx, "t1", "ann", "doc-1", 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) || m.Parts != 3 || m.Filename != "scan.pdf" || m.Size != int64(len(data)) {
		t.Fatalf("got %d bytes in %d parts named %q, want %d bytes in 3 parts named scan.pdf", len(got), m.Parts, m.Filename, len(data))
	}
	for _, who := range [][2]string{{"t1", "bob"}, {"t2", "ann"}} {
		if _, _, err := s.Get(ctx, who[0], who[1], "doc-1", 64<<20); !errors.Is(err, uploads.ErrNotFound) {
			t.Errorf("%s/%s reading ann's upload: %v, want not found", who[0], who[1], err)
		}
	}
	if _, _, err := s.Get(ctx, "t1", "ann", "doc-1", int64(len(data)-1)); err == nil {
		t.Error("a file over the reader's limit was returned")
	}
}

func TestSniffTrustsContentNotNames(t *testing.T) {
	cases := []struct {
		name string
		data string
		kind string
	}{
		{"csv", "Date,Amount\n2024-01-01,-1.00\n", uploads.KindText},
		{"latin-1 csv", "Datum;Betrag\n01.01.2024;-1,00 \xe4\n", uploads.KindText},
		{"utf-16", "\xff\xfeD\x00a\x00", uploads.KindText},
		{"pdf", "%PDF-1.4\n...", uploads.KindPDF},
		{"jpeg named png", "\xff\xd8\xff\xe0\x00\x10JFIF", uploads.KindImage},
		{"png", "\x89PNG\r\n\x1a\n....", uploads.KindImage},
		{"elf", "\x7fELF\x02\x01\x01\x00\x00\x00", ""},
		{"windows program", "MZ\x90\x00\x03\x00\x00\x00", ""},
		{"zip (a spreadsheet)", "PK\x03\x04\x14\x00\x06\x00", ""},
		{"shell script", "#!/bin/sh\nrm -rf /\n", ""},
		{"empty", "", ""},
	}
	for _, c := range cases {
		kind, _, err := uploads.Sniff([]byte(c.data))
		if kind != c.kind || (c.kind == "") != errors.Is(err, uploads.ErrUnsupported) {
			t.Errorf("%s: kind %q, err %v; want %q", c.name, kind, err, c.kind)
		}
	}
}
