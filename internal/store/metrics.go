package store

import (
	"database/sql"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics the store exports. SQLite's one writer is what a busy SQLite
// purser waits for: its busy time rising towards one second a second, its
// batches at their bound and the time a write waits for it are how an
// operator sees that, and knows to move to Postgres.
var (
	statementsDesc = prometheus.NewDesc("purser_store_write_statements_total",
		"Write statements (INSERT, UPDATE, DELETE) the store ran.", nil, nil)
	commitsDesc = prometheus.NewDesc("purser_store_commits_total",
		"Commits the store made: transactions, single statements outside one, and SQLite's shared commits.", nil, nil)
	busyDesc = prometheus.NewDesc("purser_store_writer_busy_seconds_total",
		"Time SQLite's one writer spent running transactions, committing them and copying the log between batches; a rate near 1 means writes queue behind it.", nil, nil)
	connsDesc = prometheus.NewDesc("purser_store_connections",
		"Open database connections by pool (SQLite: writer, readers; Postgres: postgres) and state (in_use, idle).", []string{"pool", "state"}, nil)
	waitsDesc = prometheus.NewDesc("purser_store_connection_waits_total",
		"Times a statement waited for a free connection of the pool (SQLite readers: for its turn at one).", []string{"pool"}, nil)
	waitSecondsDesc = prometheus.NewDesc("purser_store_connection_wait_seconds_total",
		"Time statements spent waiting for a free connection of the pool (SQLite readers: for their turn at one).", []string{"pool"}, nil)
	rerunsDesc = prometheus.NewDesc("purser_store_pipeline_reruns_total",
		"Postgres pipelines rolled back because the server refused one of their statements (or one waited too long for a locked row), whose statements then ran one by one.", nil, nil)
)

// newPipeMetrics is the histogram of Postgres's pipelines.
func newPipeMetrics() prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "purser_store_pipeline_statements",
		Help:    "Statements that shared one round trip and one commit on Postgres; a full pipeline is 128 (the le=128 bucket less the le=127 one).",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 127, maxPipe},
	})
}

// writerMetrics are what SQLite's one writer observes as it works.
type writerMetrics struct {
	batch prometheus.Histogram // transactions per shared commit
	write prometheus.Histogram // a transaction, from queued to committed
}

func newWriterMetrics() *writerMetrics {
	return &writerMetrics{
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "purser_store_writer_batch_transactions",
			Help:    "Write transactions that shared one commit of SQLite's writer; a full batch is 128 (the le=128 bucket less the le=127 one).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 127, maxBatch},
		}),
		write: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "purser_store_write_seconds",
			Help:    "Time a write transaction took on SQLite, from being queued for the writer to its commit.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}),
	}
}

// Collector returns the store's metrics, read when they are collected:
// its writes and commits, its connection pools and, on SQLite, its
// writer's busy time, batches and write times. Register it once per
// store.
func (s *Store) Collector() prometheus.Collector { return collector{s} }

type collector struct{ s *Store }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- statementsDesc
	ch <- commitsDesc
	ch <- connsDesc
	ch <- waitsDesc
	ch <- waitSecondsDesc
	if c.s.batch != nil {
		ch <- busyDesc
		c.s.batch.metrics.batch.Describe(ch)
		c.s.batch.metrics.write.Describe(ch)
	}
	if c.s.pipe != nil {
		ch <- rerunsDesc
		c.s.pipe.sizes.Describe(ch)
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	statements, commits := s.WriteStats()
	ch <- prometheus.MustNewConstMetric(statementsDesc, prometheus.CounterValue, float64(statements))
	ch <- prometheus.MustNewConstMetric(commitsDesc, prometheus.CounterValue, float64(commits))
	if s.batch != nil {
		ch <- prometheus.MustNewConstMetric(busyDesc, prometheus.CounterValue, time.Duration(s.batch.busy.Load()).Seconds())
		s.batch.metrics.batch.Collect(ch)
		s.batch.metrics.write.Collect(ch)
	}
	if s.pipe != nil {
		ch <- prometheus.MustNewConstMetric(rerunsDesc, prometheus.CounterValue, float64(s.pipe.reruns.Load()))
		s.pipe.sizes.Collect(ch)
	}
	for _, p := range s.pools() {
		st := p.db.Stats()
		waits, waited := st.WaitCount, st.WaitDuration
		if p.gate != nil {
			// Reads wait in the gate, in turn, rather than in the pool.
			waits += p.gate.waits.Load()
			waited += time.Duration(p.gate.waited.Load())
		}
		ch <- prometheus.MustNewConstMetric(connsDesc, prometheus.GaugeValue, float64(st.InUse), p.name, "in_use")
		ch <- prometheus.MustNewConstMetric(connsDesc, prometheus.GaugeValue, float64(st.Idle), p.name, "idle")
		ch <- prometheus.MustNewConstMetric(waitsDesc, prometheus.CounterValue, float64(waits), p.name)
		ch <- prometheus.MustNewConstMetric(waitSecondsDesc, prometheus.CounterValue, waited.Seconds(), p.name)
	}
}

type pool struct {
	name string
	db   *sql.DB
	gate *readGate // the gate reads pass before asking the pool, if any
}

// pools are the store's connection pools by the name its metrics give
// them.
func (s *Store) pools() []pool {
	if s.d.name == dialectPostgres {
		return []pool{{"postgres", s.db, nil}}
	}
	if s.rdb == s.db {
		return []pool{{"writer", s.db, nil}}
	}
	return []pool{{"writer", s.db, nil}, {"readers", s.rdb, s.rgate}}
}
