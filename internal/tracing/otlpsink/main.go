// Command otlpsink runs the OpenTelemetry collector's own OTLP receiver on
// a loopback port and writes every span it receives as one JSON line to
// stdout: the real receiver a trace test exports to. It is a module of its
// own so that the collector's dependencies stay out of purser's go.mod;
// tests build it with `go build` and start it as a process.
//
// It prints "listening <host:port>" on stderr once the receiver accepts
// OTLP over HTTP, and stops on SIGTERM or SIGINT.
package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// Span is one received span, flattened for a test to read.
type Span struct {
	Service       string         `json:"service"`
	TraceID       string         `json:"trace_id"`
	SpanID        string         `json:"span_id"`
	ParentSpanID  string         `json:"parent_span_id,omitempty"`
	Name          string         `json:"name"`
	Kind          string         `json:"kind"`
	StartUnixNano uint64         `json:"start_unix_nano"`
	EndUnixNano   uint64         `json:"end_unix_nano"`
	Status        string         `json:"status,omitempty"`
	Attributes    map[string]any `json:"attributes,omitempty"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "otlpsink:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("http", "127.0.0.1:0", "loopback address for OTLP over HTTP")
	flag.Parse()
	// Take a free port first: the receiver does not say which one it bound.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	endpoint := ln.Addr().String()
	ln.Close()

	var mu sync.Mutex
	enc := json.NewEncoder(os.Stdout)
	sink, err := consumer.NewTraces(func(_ context.Context, td ptrace.Traces) error {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range flatten(td) {
			if err := enc.Encode(s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}

	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	// OTLP over HTTP only, on the loopback port taken above.
	h := cfg.Protocols.HTTP.GetOrInsertDefault()
	h.ServerConfig.NetAddr.Endpoint = endpoint
	cfg.Protocols.HTTP = configoptional.Some(*h)
	cfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]()
	set := receivertest.NewNopSettings(component.MustNewType("otlp"))
	rcv, err := f.CreateTraces(context.Background(), set, cfg, sink)
	if err != nil {
		return err
	}
	if err := rcv.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "listening", endpoint)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	return rcv.Shutdown(context.Background())
}

func flatten(td ptrace.Traces) []Span {
	var out []Span
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		service := ""
		if v, ok := rs.Resource().Attributes().Get("service.name"); ok {
			service = v.AsString()
		}
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				s := Span{
					Service: service, Name: sp.Name(), Kind: sp.Kind().String(),
					TraceID:       hexID(sp.TraceID()),
					SpanID:        hexSpan(sp.SpanID()),
					StartUnixNano: uint64(sp.StartTimestamp()), EndUnixNano: uint64(sp.EndTimestamp()),
					Attributes: sp.Attributes().AsRaw(),
				}
				if p := sp.ParentSpanID(); !p.IsEmpty() {
					s.ParentSpanID = hexSpan(p)
				}
				if sp.Status().Code() != ptrace.StatusCodeUnset {
					s.Status = sp.Status().Code().String()
				}
				out = append(out, s)
			}
		}
	}
	return out
}

func hexID(id pcommon.TraceID) string { return hex.EncodeToString(id[:]) }

func hexSpan(id pcommon.SpanID) string { return hex.EncodeToString(id[:]) }
