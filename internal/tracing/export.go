package tracing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Exporter sends the spans of the services of one process over OTLP, each
// service under its own service.name. Create it with FromEnv; a nil
// Exporter exports nothing and gives zero Tracers.
type Exporter struct {
	ctx    context.Context
	getenv func(string) string

	mu        sync.Mutex
	providers []*sdktrace.TracerProvider
}

// FromEnv returns an Exporter when OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, else nil: no span is then
// made anywhere. OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn
// it off too. The other standard variables are honoured by the
// OpenTelemetry SDK itself: OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT,
// _COMPRESSION and _CERTIFICATE, OTEL_TRACES_SAMPLER and _ARG,
// OTEL_RESOURCE_ATTRIBUTES and the OTEL_BSP_* batch settings. The
// protocol is OTLP over HTTP with protobuf (http/protobuf, port 4318);
// OTEL_EXPORTER_OTLP_PROTOCOL=grpc is refused with an error that says so.
// getenv is os.Getenv but in tests.
func FromEnv(ctx context.Context, getenv func(string) string) (*Exporter, error) {
	endpoint := cmp.Or(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	if endpoint == "" || strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || getenv("OTEL_TRACES_EXPORTER") == "none" {
		return nil, nil
	}
	protocol := cmp.Or(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), "http/protobuf")
	if protocol != "http/protobuf" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: purser exports traces over http/protobuf only (the collector's port 4318)", protocol)
	}
	return &Exporter{ctx: context.WithoutCancel(ctx), getenv: getenv}, nil
}

// Tracer returns the Tracer of service (ingress, orchestrator, toolrunner,
// notifier), whose spans name it as OTEL_SERVICE_NAME or, when that is
// not set, purser-<service>. Each call makes a provider that Shutdown
// flushes.
func (e *Exporter) Tracer(service string) (Tracer, error) {
	if e == nil {
		return Tracer{}, nil
	}
	exp, err := otlptracehttp.New(e.ctx)
	if err != nil {
		return Tracer{}, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", cmp.Or(e.getenv("OTEL_SERVICE_NAME"), "purser-"+service)),
		attribute.String("service.namespace", "purser"),
	))
	if err != nil {
		return Tracer{}, fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithIDGenerator(idGenerator{}))
	e.mu.Lock()
	e.providers = append(e.providers, tp)
	e.mu.Unlock()
	return New(tp), nil
}

// Shutdown sends the spans still waiting and stops every provider; ctx
// bounds the wait.
func (e *Exporter) Shutdown(ctx context.Context) error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	providers := e.providers
	e.providers = nil
	e.mu.Unlock()
	var errs []error
	for _, tp := range providers {
		if err := tp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("trace export: %w", err))
		}
	}
	return errors.Join(errs...)
}
