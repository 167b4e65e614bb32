package ops

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// scrapeTimeout bounds the JetStream lookups of one scrape.
const scrapeTimeout = 2 * time.Second

var (
	consumerPendingDesc = prometheus.NewDesc("purser_bus_consumer_pending",
		"Messages in the consumer's stream not yet delivered to it (its lag).", []string{"stream", "consumer"}, nil)
	consumerAckPendingDesc = prometheus.NewDesc("purser_bus_consumer_ack_pending",
		"Messages delivered to the consumer and not yet acknowledged.", []string{"stream", "consumer"}, nil)
	consumerRedeliveredDesc = prometheus.NewDesc("purser_bus_consumer_redelivered",
		"Messages of the consumer delivered more than once and not yet acknowledged.", []string{"stream", "consumer"}, nil)
	streamMessagesDesc = prometheus.NewDesc("purser_bus_stream_messages",
		"Messages held by the stream (for DLQ: the dead letters waiting for a person).", []string{"stream"}, nil)
	streamBytesDesc = prometheus.NewDesc("purser_bus_stream_bytes",
		"Bytes held by the stream.", []string{"stream"}, nil)
	// The bounds JetStream enforces: past either, a stream drops its
	// oldest messages (TURNS and UPLOADS refuse new ones when full).
	streamMaxBytesDesc = prometheus.NewDesc("purser_bus_stream_max_bytes",
		"The most bytes the stream holds (its max_bytes).", []string{"stream"}, nil)
	streamMaxAgeDesc = prometheus.NewDesc("purser_bus_stream_max_age_seconds",
		"How long the stream keeps a message (its max_age).", []string{"stream"}, nil)
)

// ConsumerRef names one durable consumer.
type ConsumerRef struct{ Stream, Name string }

// ConsumerLag reports, at each scrape, how far each consumer is behind its
// stream, asked of JetStream. Every replica of a service reports the same
// numbers: aggregate with max, not sum. A consumer JetStream does not
// answer for within the scrape's time is left out of that scrape.
//
// It is an unchecked collector, so that every service of `purser up` can
// register its own in one registry.
func ConsumerLag(js jetstream.JetStream, consumers []ConsumerRef) prometheus.Collector {
	return consumerLag{js: js, consumers: consumers}
}

type consumerLag struct {
	js        jetstream.JetStream
	consumers []ConsumerRef
}

func (consumerLag) Describe(chan<- *prometheus.Desc) {}

func (c consumerLag) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	for _, ref := range c.consumers {
		cons, err := c.js.Consumer(ctx, ref.Stream, ref.Name)
		if err != nil {
			continue
		}
		info := cons.CachedInfo()
		ch <- prometheus.MustNewConstMetric(consumerPendingDesc, prometheus.GaugeValue, float64(info.NumPending), ref.Stream, ref.Name)
		ch <- prometheus.MustNewConstMetric(consumerAckPendingDesc, prometheus.GaugeValue, float64(info.NumAckPending), ref.Stream, ref.Name)
		ch <- prometheus.MustNewConstMetric(consumerRedeliveredDesc, prometheus.GaugeValue, float64(info.NumRedelivered), ref.Stream, ref.Name)
	}
}

// StreamDepth reports, at each scrape, how many messages and bytes each of
// streams holds. Register one per process.
func StreamDepth(js jetstream.JetStream, streams []string) prometheus.Collector {
	return streamDepth{js: js, streams: streams}
}

type streamDepth struct {
	js      jetstream.JetStream
	streams []string
}

func (streamDepth) Describe(chan<- *prometheus.Desc) {}

func (s streamDepth) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	for _, name := range s.streams {
		st, err := s.js.Stream(ctx, name)
		if err != nil {
			continue
		}
		state := st.CachedInfo().State
		ch <- prometheus.MustNewConstMetric(streamMessagesDesc, prometheus.GaugeValue, float64(state.Msgs), name)
		ch <- prometheus.MustNewConstMetric(streamBytesDesc, prometheus.GaugeValue, float64(state.Bytes), name)
		cfg := st.CachedInfo().Config
		ch <- prometheus.MustNewConstMetric(streamMaxBytesDesc, prometheus.GaugeValue, float64(cfg.MaxBytes), name)
		ch <- prometheus.MustNewConstMetric(streamMaxAgeDesc, prometheus.GaugeValue, cfg.MaxAge.Seconds(), name)
	}
}
