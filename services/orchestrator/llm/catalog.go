package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// The tool catalog is about 20 KB of JSON (31 functions with their strict
// schemas), the same on every call. go-openai encodes a request's tools
// anew each time, through a map per tool and a check of every schema's
// bytes: about 250 µs of CPU and 150 KB allocated a call on a quiet
// development machine (BenchmarkRequestBody), more than the rest of the
// request. So the
// adapter encodes each catalog once, with the same encoder and
// go-openai's own Tool.MarshalJSON (so the bytes are the ones go-openai
// would send), leaves the request's Tools empty, and the transport puts
// the encoded catalog into the body as its "tools" field.

// encodedCatalogs keeps the encoded tool lists of the catalogs seen,
// keyed by what names them: each function's name, description and
// strictness (a catalog tool's schema is fixed by its name for the life
// of the process, contracts.ToolSpec.Schema). A process has one catalog;
// tests make a few more.
var encodedCatalogs struct {
	mu      sync.Mutex
	entries []catalogEntry
}

type catalogEntry struct {
	key  []string
	json []byte
}

// maxCatalogs bounds encodedCatalogs; past it a catalog is encoded on
// every call rather than kept.
const maxCatalogs = 16

// catalogKey names tools for encodedCatalogs.
func catalogKey(tools []openai.Tool) []string {
	key := make([]string, 0, 4*len(tools))
	for _, t := range tools {
		if t.Function == nil {
			key = append(key, string(t.Type), "", "", "")
			continue
		}
		strict := "loose"
		if t.Function.Strict {
			strict = "strict"
		}
		key = append(key, string(t.Type), strict, t.Function.Name, t.Function.Description)
	}
	return key
}

// encodeTools returns tools as go-openai encodes a request's "tools"
// field, encoded once for each catalog.
func encodeTools(tools []openai.Tool) ([]byte, error) {
	key := catalogKey(tools)
	encodedCatalogs.mu.Lock()
	for _, e := range encodedCatalogs.entries {
		if slices.Equal(e.key, key) {
			encodedCatalogs.mu.Unlock()
			return e.json, nil
		}
	}
	encodedCatalogs.mu.Unlock()
	b, err := json.Marshal(tools)
	if err != nil {
		return nil, fmt.Errorf("encode tools: %w", err)
	}
	encodedCatalogs.mu.Lock()
	if len(encodedCatalogs.entries) < maxCatalogs {
		encodedCatalogs.entries = append(encodedCatalogs.entries, catalogEntry{key: key, json: b})
	}
	encodedCatalogs.mu.Unlock()
	return b, nil
}

// toolsKey carries a call's encoded "tools" field to the transport.
type toolsKey struct{}

// withEncodedTools asks the transport to send tools (encodeTools's bytes)
// as the request body's "tools" field.
func withEncodedTools(ctx context.Context, tools []byte) context.Context {
	return context.WithValue(ctx, toolsKey{}, tools)
}

// errBodyShape is a request body that is not a JSON object: go-openai
// always sends one, so it is a bug, never sent on without its tools.
var errBodyShape = errors.New("request body is not a JSON object")

// catalogTransport puts a call's encoded tool catalog (withEncodedTools)
// into its body on the way to base.
type catalogTransport struct{ base http.RoundTripper }

func (t catalogTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req, err := withTools(req)
	if err != nil {
		return nil, err
	}
	return t.base.RoundTrip(req)
}

// withTools returns req with the tools its context carries put into its
// body, or req itself when it carries none. The request is cloned, not
// changed (a RoundTripper must not change it).
func withTools(req *http.Request) (*http.Request, error) {
	tools, ok := req.Context().Value(toolsKey{}).([]byte)
	if !ok || req.Body == nil {
		return req, nil
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	body, err = spliceField(body, "tools", tools)
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return out, nil
}

// spliceField adds "name":value (value encoded JSON) as the last field of
// the JSON object obj.
func spliceField(obj []byte, name string, value []byte) ([]byte, error) {
	obj = bytes.TrimRight(obj, " \t\r\n")
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return nil, errBodyShape
	}
	inner := bytes.TrimSpace(obj[1 : len(obj)-1])
	out := make([]byte, 0, len(obj)+len(name)+len(value)+4)
	out = append(out, obj[:len(obj)-1]...)
	if len(inner) > 0 {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, name...)
	out = append(out, '"', ':')
	out = append(out, value...)
	return append(out, '}'), nil
}
