// Package prune deletes, on a schedule, the engine state purser keeps only
// for a while (published outbox messages, the stored results and
// proposals that make redeliveries harmless) and what people own past the
// retention an operator gave it (documents, messages, the audit log). Each
// service runs one Pruner over the tables it owns; every row deleted is
// counted in purser_pruned_rows_total{table}.
//
// Two replicas may prune the same tables at once: the store's deletes
// skip rows another holds, and each row is counted by the one replica
// that deleted it.
package prune

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultInterval is how often a service prunes unless configured
// (PURSER_PRUNE_INTERVAL).
const DefaultInterval = 5 * time.Minute

// Job prunes one table: it deletes what is past its time at now and
// returns how many rows went.
type Job struct {
	Table string
	Prune func(ctx context.Context, now time.Time) (int64, error)
}

// Metrics are the pruners' counters; one per registry, shared by the
// services of one process.
type Metrics struct {
	rows   *prometheus.CounterVec
	errors *prometheus.CounterVec
}

// NewMetrics registers the pruners' counters on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_pruned_rows_total",
			Help: "Rows the pruners deleted, by table: engine state past its time and what people own past its retention."}, []string{"table"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_prune_errors_total",
			Help: "Pruning passes of a table that failed (retried at the next pass), by table."}, []string{"table"}),
	}
	for _, c := range []prometheus.Collector{m.rows, m.errors} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("prune metrics: %w", err)
		}
	}
	return m, nil
}

// Rows is the counter of rows pruned from table.
func (m *Metrics) Rows(table string) prometheus.Counter { return m.rows.WithLabelValues(table) }

// Errors is the counter of failed passes over table.
func (m *Metrics) Errors(table string) prometheus.Counter { return m.errors.WithLabelValues(table) }

// Pruner runs its jobs every interval.
type Pruner struct {
	jobs  []Job
	every time.Duration
	m     *Metrics
	log   *slog.Logger
	now   func() time.Time
}

// New builds a pruner of jobs that runs every interval (DefaultInterval
// if not positive).
func New(every time.Duration, m *Metrics, log *slog.Logger, now func() time.Time, jobs ...Job) *Pruner {
	if every <= 0 {
		every = DefaultInterval
	}
	for _, j := range jobs {
		// Every table shows in /metrics from the start, at 0.
		m.rows.WithLabelValues(j.Table)
	}
	return &Pruner{jobs: jobs, every: every, m: m, log: log, now: now}
}

// Once runs every job once, counting what each deleted; a job that fails
// does not stop the others, and all failures are returned together.
func (p *Pruner) Once(ctx context.Context) error {
	var errs []error
	for _, j := range p.jobs {
		n, err := j.Prune(ctx, p.now())
		p.m.rows.WithLabelValues(j.Table).Add(float64(n))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			p.m.errors.WithLabelValues(j.Table).Inc()
			errs = append(errs, fmt.Errorf("%s: %w", j.Table, err))
		}
	}
	return errors.Join(errs...)
}

// Run prunes every interval, the first time one interval after it starts
// (a service starting is busy enough), until ctx ends. Failures are logged
// and retried at the next pass.
func (p *Pruner) Run(ctx context.Context) {
	if len(p.jobs) == 0 {
		return
	}
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := p.Once(ctx); err != nil && ctx.Err() == nil {
			p.log.Warn("prune", "err", err)
		}
	}
}

// PerTenant is a job that prunes one kind of what people own, tenant by
// tenant, each past its retention (none: kept). floor is the youngest age
// ever pruned, whatever the retention: what exactly-once still needs.
// tenants lists the tenants that have rows; prune deletes one tenant's
// rows older than cutoff.
func PerTenant(table string, kind Kind, r Retention, floor time.Duration,
	tenants func(ctx context.Context) ([]string, error),
	prune func(ctx context.Context, tenant string, cutoff time.Time) (int64, error)) Job {
	return Job{Table: table, Prune: func(ctx context.Context, now time.Time) (int64, error) {
		if !r.Any(kind) {
			return 0, nil
		}
		list, err := tenants(ctx)
		if err != nil {
			return 0, err
		}
		var total int64
		for _, t := range list {
			keep := r.For(t, kind)
			if keep <= 0 {
				continue
			}
			n, err := prune(ctx, t, now.Add(-max(keep, floor)))
			total += n
			if err != nil {
				return total, fmt.Errorf("tenant %s: %w", t, err)
			}
		}
		return total, nil
	}}
}
