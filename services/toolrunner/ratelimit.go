package toolrunner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// KVLimiter is a fixed-window rate limit shared by every replica: one
// counter per key and minute in a JetStream key-value bucket, incremented
// with compare-and-set so that concurrent callers never both take the last
// slot.
//
// Each replica remembers the count and revision it last wrote or read for
// each of the current minute's keys, and increments from there without
// reading the counter first: one round trip a call instead of two while
// the key's calls come to this replica. Another replica's increment makes
// the revision stale, the compare-and-set fails, and the counter is read
// again, so the count stays exact. A remembered count at the limit refuses
// without asking: within its minute a counter only grows.
type KVLimiter struct {
	kv jetstream.KeyValue

	mu     sync.Mutex
	window int64              // the minute the remembered counters are of
	last   map[string]counter // by counter key
}

// counter is a counter's value as of its revision.
type counter struct {
	n   int
	rev uint64
}

// RateLimitBucket is the KV bucket the limiter keeps its counters in.
const RateLimitBucket = "purser_ratelimit"

// NewKVLimiter creates (or binds to) the counter bucket, kept on replicas
// NATS nodes as the streams are (PURSER_STREAM_REPLICAS): on fewer, losing
// the node that holds it fails every rate-limited tool call until the node
// is back. Counters expire after two windows.
func NewKVLimiter(ctx context.Context, js jetstream.JetStream, replicas int) (*KVLimiter, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: RateLimitBucket, TTL: 2 * time.Minute, History: 1,
		Storage: jetstream.FileStorage, Replicas: max(replicas, 1)})
	if err != nil {
		return nil, fmt.Errorf("rate limit bucket: %w", err)
	}
	return &KVLimiter{kv: kv}, nil
}

// Allow counts one call for key in the current minute.
func (l *KVLimiter) Allow(ctx context.Context, key string, perMinute int, now time.Time) (bool, time.Duration, error) {
	window := now.Unix() / 60
	k := key + "." + strconv.FormatInt(window, 10)
	retry := time.Unix((window+1)*60, 0).Sub(now)
	for range 50 {
		c, known := l.remembered(window, k)
		if !known {
			entry, err := l.kv.Get(ctx, k)
			switch {
			case errors.Is(err, jetstream.ErrKeyNotFound):
				rev, err := l.kv.Create(ctx, k, []byte("1"))
				if err == nil {
					l.remember(window, k, counter{1, rev})
					return true, 0, nil
				} else if !errors.Is(err, jetstream.ErrKeyExists) {
					return false, 0, err
				}
				continue // someone else created it first
			case err != nil:
				return false, 0, err
			}
			n, _ := strconv.Atoi(string(entry.Value()))
			c = counter{n, entry.Revision()}
		}
		if c.n >= perMinute {
			l.remember(window, k, c)
			return false, retry, nil
		}
		rev, err := l.kv.Update(ctx, k, []byte(strconv.Itoa(c.n+1)), c.rev)
		if err == nil {
			l.remember(window, k, counter{c.n + 1, rev})
			return true, 0, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return false, 0, err
		}
		l.forget(k) // another replica counted since: read it again
	}
	return false, 0, errors.New("rate limit counter is too contended")
}

// remembered is the counter k as this replica last saw it, if it is of
// the current window.
func (l *KVLimiter) remembered(window int64, k string) (counter, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if window != l.window {
		return counter{}, false
	}
	c, ok := l.last[k]
	return c, ok
}

// remember keeps c as counter k's latest; a new window forgets the last
// one's counters.
func (l *KVLimiter) remember(window int64, k string, c counter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if window < l.window {
		return
	}
	if window > l.window || l.last == nil {
		l.last = map[string]counter{}
		l.window = window
	}
	if old, ok := l.last[k]; !ok || c.rev > old.rev {
		l.last[k] = c
	}
}

func (l *KVLimiter) forget(k string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.last, k)
}
